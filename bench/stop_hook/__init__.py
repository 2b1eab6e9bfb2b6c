"""The Stop hook benchmark, in pieces (the entry is `bench/stop_hook_bench.py`):

- `settings`: ids, defaults, targets, the quoted reference figure;
- `writer`: transcript lines shaped like Claude Code's, with a ledger of what was written;
- `transcripts`: the ordinary and the worst-case transcript, and what a stop should find;
- `roots`: a plugin checkout: how its Stop hook starts, which loop state it accepts;
- `children`: running a child through a small helper: wall time and peak RSS;
- `scenario`: one measured case and the check of each run;
- `scenarios`: every case of a run, for each checkout;
- `measure`: the round-robin runs, the in-process reads, `-X importtime`;
- `targets`: PASS/FAIL on this checkout's figures;
- `report`: JSON and the table;
- `cli`: the options and the run.
"""
