"""The Stop hook benchmark runs end to end with tiny settings and reports what it should.

Numbers are not checked (they belong to the machine); only that every hook run was valid:
no output on the no-loop paths, a continue decision on the active path, and the loop file
afterwards holding what the run should have recorded (the final reply, the tool calls, the
exact token usage of the new bytes, the cursor at the transcript's end). A compare root is
measured beside this checkout in the same run; one without a transcript cursor (the layout
before `hooks/launch.py`) gets a state file its schema accepts and says which scenarios it
cannot run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"
BENCH = BENCH_DIR / "stop_hook_bench.py"
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from stop_hook.cli import hooks_python  # noqa: E402 - bench/ is not a package on the path
from stop_hook.roots import load_root  # noqa: E402
from stop_hook.scenarios import Expect, build_scenarios, expect  # noqa: E402
from stop_hook.transcripts import ordinary, worst_case  # noqa: E402

SIZED = ("active", "usage", "worst_cursor", "worst_no_cursor")


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("stop_hook_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_bench_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench()
    repo = BENCH_DIR.parent

    status = bench.main(["--runs", "2", "--sizes", "0.02,0.05", "--json",
                         "--compare-root", str(repo)])

    data = json.loads(capsys.readouterr().out)
    assert status == 0, data["failures"]
    assert data["ok"] is True and data["failures"] == []
    assert {"python", "cpus", "runs", "sizes_mb", "baseline_ms", "scenarios", "targets",
            "reference", "notes", "tail_read_in_process_ms", "worst_case_in_process_ms",
            "compare", "unsupported"} <= data.keys()
    assert set(data["tail_read_in_process_ms"]) == {"0.02 MB", "0.05 MB"}
    assert set(data["worst_case_in_process_ms"]) == {"0.02 MB", "0.05 MB"}
    assert data["sizes_mb"] == [0.02, 0.05]
    assert data["unsupported"] == []
    scenarios = {s["key"]: s for s in data["scenarios"]}
    sized = {f"{family}_{mb}mb" for family in SIZED for mb in ("0.02", "0.05")}
    # The hooks run `python3` on PATH; when this interpreter is another program (a CI
    # runner's venv copy, a pyenv build), its own bare start-up is measured beside it.
    hooks = hooks_python()
    assert hooks is not None
    floors = {"bare", "bare_no_site"}
    if os.path.realpath(sys.executable) != os.path.realpath(hooks):
        floors.add("bare_other")
    assert set(scenarios) == floors | {"no_loop", "other_loop", "active_message"} | sized
    for figure in scenarios.values():
        assert {"median_ms", "ratio", "peak_rss_mib", "runs", "all_valid"} <= figure.keys()
        assert figure["runs"] == 2 and figure["all_valid"], figure
        assert figure["median_ms"] > 0 and figure["peak_rss_mib"] > 0
    assert min(scenarios[key]["ratio"] for key in floors - {"bare_no_site"}) == 1.0
    for key in ("no_loop", "other_loop"):
        assert scenarios[key]["decisions"] == ["none"], scenarios[key]
    for key in sized | {"active_message"}:
        assert scenarios[key]["decisions"] == ["continue"], scenarios[key]
    assert scenarios["active_0.05mb"]["transcript_bytes"] >= 50_000
    targets = {t["key"] for t in data["targets"]}
    assert {"no_loop", "other_loop", "active_message", "size_drift", "size_drift_usage",
            "size_drift_worst_cursor", "size_drift_worst_no_cursor", "peak_memory",
            "worst_cursor_0.05mb", "worst_no_cursor_0.05mb", "usage_0.05mb"} <= targets
    assert all(isinstance(t["pass"], bool) for t in data["targets"])
    drifts = [t for t in data["targets"] if t["key"].startswith("size_drift")]
    assert len(drifts) == 4 and all({"min_based", "paired"} <= t.keys() for t in drifts)

    compare = data["compare"]  # the same checkout again: every scenario runs there too
    assert compare["root"] == str(repo) and compare["layout"] == "hooks/launch.py stop"
    assert compare["unsupported"] == []
    assert {s["key"] for s in compare["scenarios"]} == set(scenarios) - floors
    assert all(s["all_valid"] and s["runs"] == 2 for s in compare["scenarios"])
    assert {r["key"] for r in compare["ratios"]} == set(scenarios) - floors
    assert all(r["compare_ratio"] > 0 and r["speedup"] > 0 for r in compare["ratios"])

    bench.print_table(data)  # the human-readable form of the same figures
    table = capsys.readouterr().out
    assert "bare start-up" in table and "reference:" in table and "compare:" in table
    assert table.count("PASS") + table.count("FAIL") == len(data["targets"])


def old_checkout(root: Path) -> Path:
    """The layout before `hooks/launch.py`: `hooks/stop.py`, a LoopState without a cursor."""
    (root / "hooks").mkdir(parents=True)
    (root / "hooks" / "stop.py").write_text("import sys\n")
    (root / "scripts" / "finesse").mkdir(parents=True)
    (root / "scripts" / "finesse" / "models.py").write_text(
        "from dataclasses import dataclass\n\n"
        "@dataclass\nclass IterationRecord:\n    number: int\n    reply_excerpt: str = ''\n\n"
        "@dataclass\nclass LoopState:\n    loop_id: str\n    session_id: str\n"
        "    iteration: int = 1\n    outcome: str | None = None\n"
    )
    return root


def test_an_old_checkout_gets_a_state_it_accepts_and_says_what_it_cannot_run(
        tmp_path: Path) -> None:
    old = load_root(old_checkout(tmp_path / "old"), "compare")
    main = load_root(BENCH_DIR.parent, "main")
    assert old.layout == "hooks/stop.py" and main.layout == "hooks/launch.py stop"
    assert not old.has_cursor and not old.records_usage
    assert main.has_cursor and main.records_usage
    assert json.loads(old.state({"loop_id": "x", "transcript_offset": 3, "iteration": 1})) == {
        "loop_id": "x", "iteration": 1}
    plain = {0.01: ordinary(tmp_path / "t" / "plain.jsonl", tmp_path, 10_000)}
    worst = {0.01: worst_case(tmp_path / "t" / "worst.jsonl", tmp_path, 10_000)}

    scenarios, unsupported = build_scenarios(tmp_path / "run", sys.executable, [main, old],
                                             plain, worst)

    mine = {s.key for s in scenarios if s.root == "main"}
    theirs = {s.key for s in scenarios if s.root == "compare"}
    assert {"usage_0.01mb", "worst_cursor_0.01mb", "worst_no_cursor_0.01mb"} <= mine
    assert theirs == mine - {"bare", "bare_no_site", "usage_0.01mb", "worst_cursor_0.01mb"}
    assert {(u.root, u.key) for u in unsupported} == {
        ("compare", "usage_0.01mb"), ("compare", "worst_cursor_0.01mb")}
    assert all(u.reason for u in unsupported)
    for s in scenarios:
        if s.root == "compare" and s.reset is not None:
            s.reset()  # the old schema's fields only: no cursor written
            (loop_file,) = (s.cwd / ".claude" / "ralph" / "loops").glob("*.json")
            state = json.loads(loop_file.read_bytes())
            assert set(state) <= old.state_fields
        if s.root == "compare":
            assert s.argv[1:] == ["-S", str(old.path / "hooks" / "stop.py")]


def test_the_usage_check_fails_unless_the_loop_recorded_the_new_bytes_usage(
        tmp_path: Path) -> None:
    transcript = ordinary(tmp_path / "t.jsonl", tmp_path, 20_000)
    assert transcript.messages >= 3 and transcript.tool_calls >= 1
    state_file = tmp_path / "loop.json"
    check = expect(state_file, Expect(transcript, tokens=True, cursor_at_end=True))
    reply = "I fixed the tokenizer's handling of escaped quotes and the three parser tests"
    usage = [{"model": model, **tokens} for model, tokens in transcript.tokens.items()]

    def write(**changes: object) -> None:
        record = {"reply_excerpt": reply, "tool_calls": transcript.tool_calls,
                  "usage": usage, "usage_partial": False}
        state = {"iteration": 2, "transcript_offset": transcript.size,
                 "iterations": [record]}
        for key, value in changes.items():
            (record if key in record else state)[key] = value
        state_file.write_text(json.dumps(state))

    write()
    assert check() is None
    write(usage=[])
    assert "usage recorded {}" in (check() or "")
    write(usage=[{**usage[0], "output": usage[0]["output"] + 1}])
    assert "usage recorded" in (check() or "")
    write(usage_partial=True)
    assert "partial: True" in (check() or "")
    write(tool_calls=transcript.tool_calls + 1)
    assert "tool calls recorded" in (check() or "")
    write(transcript_offset=transcript.mark)
    assert "the cursor is at" in (check() or "")
    write(iteration=1)
    assert "did not continue" in (check() or "")


def test_growth_measures_each_target_and_shape_at_each_size() -> None:
    from stop_hook.growth import SHAPES, growth

    lines: list[str] = []
    rows = growth(sys.executable, 120.0, say=lines.append, sizes=(200, 2000),
                  shapes=("repeated <promise>", "list items"))
    assert [(row["target"], row["shape"]) for row in rows] == [
        ("yardstick", "repeated <promise>"), ("yardstick", "list items"),
        ("reply", "repeated <promise>"), ("reply", "list items"),
        ("validate", "repeated <promise>"), ("validate", "list items")]
    for row in rows:
        seconds, ratios = row["seconds"], row["ratios"]
        assert isinstance(seconds, list) and len(seconds) == 2
        assert all(isinstance(s, float) and s > 0 for s in seconds)
        assert isinstance(ratios, list) and len(ratios) == 1
    assert len(lines) == 6 and all("per 10x:" in line for line in lines)
    assert set(SHAPES) >= {"repeated <promise>", "spaces then x", "inline code spans",
                           "list items"}
