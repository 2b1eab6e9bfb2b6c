"""Stop hook benchmark: wall time and peak memory of the Stop hook as Claude Code runs it.

Numbers, not assertions. In one run, on this machine, it measures:

- the bare start-up of the interpreter the hook runs under (`PY -c pass`), the yardstick;
- the no-loop path (`PY -S hooks/launch.py stop`), in a project without loops and in a
  project where another session has a loop (so the stdin JSON is parsed);
- the active-loop path (this session has a loop, the reply has no promise, so the loop
  continues) with only `transcript_path` given, at several transcript sizes, so the hook
  really reads the transcript's tail; with `last_assistant_message` given, the usual case;
  with a usage cursor, the new bytes holding several assistant messages whose token usage
  the loop file must then record exactly (the usage reader ran);
- the worst case: a turn that has run for a long time (no typed prompt, every assistant
  message ending in a tool call, then the final reply) at the smallest and largest size,
  the loop holding a cursor about 200 KB back, and holding none (a loop started from a
  terminal);
- with `--compare-root PATH`, the same scenarios on another checkout of the plugin (an
  older commit's worktree, say), in the same round-robin, against the same bare start-up;
  what that checkout cannot run (no cursor, no usage reader) is said, not guessed.

Each figure is the median wall time of the runs, its ratio to the bare start-up median of the
same run, and the child's peak RSS (from `os.wait4`, the children started by a small helper
process so that this one's memory does not leak into the figure). The scenarios are run
round-robin, so a slow spell of the machine hits them all alike. The transcript reads are
also timed alone, in this process, to tell their cost apart from noise. Targets are printed
PASS/FAIL; the exit status is 0 unless a hook run was not valid (non-zero exit, output that
is not JSON, no continue decision on the active path, or a loop file afterwards without the
final reply, the tool calls, the usage or the cursor expected): then 1.

    .venv/bin/python bench/stop_hook_bench.py [--runs 21] [--sizes 1,10,100] [--json]
                                              [--importtime] [--compare-root PATH]
    .venv/bin/python bench/stop_hook_bench.py --growth [--growth-timeout 60] [--json]

With `--growth` it measures something else instead (`bench/stop_hook/growth.py`): the time
the reply reader and `finesse validate` take on hostile text (repeated `<promise>`, a long
run of spaces then `x`, many inline code spans, many list items...) at 10 KB, 100 KB and 1 MB,
and the growth ratio per 10x of text (the goal: at most about 12x).

Everything is written under a temporary directory (also the children's HOME), then removed.
The code is the package `bench/stop_hook/`; this file is its entry.
"""

from __future__ import annotations

import sys
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from stop_hook.cli import main as _main
from stop_hook.report import print_table

__all__ = ["main", "print_table"]


def main(argv: list[str] | None = None) -> int:
    return _main(argv, __doc__.splitlines()[0] if __doc__ else None)


if __name__ == "__main__":
    raise SystemExit(main())
