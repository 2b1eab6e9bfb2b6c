"""`--growth`: how the time to read hostile text grows with its size, for the Stop hook's
reply reader (`finesse.signals.read_reply`) and `finesse validate` (the command, through
click, on a prompt file), at 10 KB, 100 KB and 1 MB of each hostile shape.

Each measurement runs in a child process (so a super-linear case is stopped at
`--growth-timeout` seconds instead of stalling the run) that builds the text, then times
only the call: the best of a few repeats, for the small sizes whose single run is too short
to time alone. Printed: the seconds per size and the growth ratio per 10x of text; the
goal is a ratio of at most GROWTH_MAX_RATIO (linear time, with room for noise). A yardstick
row per shape times plain linear passes over the same text (a regular expression scan, a
split into lines with each line touched): where the machine itself makes 10x the text cost
more than 12x (CPU caches, other work), a reader within YARDSTICK_SLACK of the yardstick's
ratio is still linear. Once a size
times out the larger ones are not tried. Numbers, not assertions: the exit status is 0.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Sequence
from itertools import pairwise

from stop_hook.settings import REPO_ROOT

SIZES = (10_000, 100_000, 1_000_000)
GROWTH_MAX_RATIO = 12.0
DEFAULT_TIMEOUT_SECONDS = 60.0

# Each shape is Python source for `make(n)`: text of about n characters.
SHAPES: dict[str, str] = {
    "repeated <promise>": "lambda n: '<promise>' * (n // 9)",
    "spaces then x": "lambda n: ' ' * (n - 1) + 'x'",
    "inline code spans": "lambda n: '`a` ' * (n // 4)",
    "list items": "lambda n: '- item\\n' * (n // 7)",
    "unclosed backtick runs": (
        "lambda n: ''.join('`' * k + ' a ' for k in range(1, int((2 * n) ** 0.5) + 2))[:n]"),
    "label, blanks, no end": "lambda n: 'Next: a' + ' ' * (n - 8) + 'b'",
    "heading, blanks, no end": "lambda n: '# a' + ' ' * (n - 4) + 'b'",
}
TARGETS = ("yardstick", "reply", "validate")
# How much a plain linear pass may grow before a reader's growth is blamed on the machine
# rather than on the reader (see `_verdict`).
YARDSTICK_SLACK = 1.2

CHILD = r'''
import json, os, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "scripts"))
target, make, size = sys.argv[2], eval(sys.argv[3]), int(sys.argv[4])
text = make(size)
if target == "yardstick":
    import re
    scan = re.compile("`+")
    def call():  # linear passes as every reader makes them: a regex scan, a line split
        scan.findall(text)
        for line in text.split("\n"):
            line.strip()
elif target == "reply":
    from finesse.signals import read_reply
    def call():
        read_reply(text, "DONE")
else:
    from click.testing import CliRunner
    from finesse.cli.finesse import cli
    path = os.path.join(sys.argv[5], "prompt.md")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    runner = CliRunner()
    def call():
        runner.invoke(cli, ["validate", path, "--json"])
best, spent = float("inf"), 0.0
while spent < 0.5 or best == float("inf"):
    started = time.perf_counter()
    call()
    took = time.perf_counter() - started
    best, spent = min(best, took), spent + took
    if spent > 5:
        break
print(json.dumps({"seconds": best, "chars": len(text)}))
'''


def _measure(python: str, target: str, shape: str, size: int, timeout: float) -> float | None:
    """Seconds for one call, or None when the child ran past `timeout` (it is killed)."""
    with tempfile.TemporaryDirectory(prefix="finesse-growth-") as folder:
        try:
            done = subprocess.run([python, "-c", CHILD, str(REPO_ROOT), target, SHAPES[shape],
                                   str(size), folder], capture_output=True, text=True,
                                  timeout=timeout, check=True)
        except subprocess.TimeoutExpired:
            return None
    return float(json.loads(done.stdout)["seconds"])


def growth(python: str, timeout: float, targets: Sequence[str] = TARGETS,
           say: object = print, sizes: Sequence[int] = SIZES,
           shapes: Sequence[str] = tuple(SHAPES)) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    yardsticks: dict[str, list[float | None]] = {}
    for target in targets:
        for shape in shapes:
            seconds: list[float | None] = []
            for size in sizes:
                if seconds and seconds[-1] is None:
                    seconds.append(None)  # the smaller size already ran out of time
                    continue
                seconds.append(_measure(python, target, shape, size, timeout))
            ratios = [b / a if a and b else None for a, b in pairwise(seconds)]
            if target == "yardstick":
                yardsticks[shape] = ratios
            row = {"target": target, "shape": shape, "seconds": seconds, "ratios": ratios,
                   "ok": _verdict(ratios, yardsticks.get(shape))}
            rows.append(row)
            say(_line(row, timeout))  # type: ignore[operator]
    return rows


def _verdict(ratios: list[float | None], yardstick: list[float | None] | None) -> bool:
    """Linear: each ratio at most GROWTH_MAX_RATIO, or (on a machine where a plain linear
    pass over the same text grows faster than that: caches, a loaded machine) at most
    YARDSTICK_SLACK times the yardstick's own ratio at that step."""
    allowed = [max(GROWTH_MAX_RATIO, YARDSTICK_SLACK * (y or 0.0))
               for y in (yardstick or [None] * len(ratios))]
    return all(r is not None and r <= limit for r, limit in zip(ratios, allowed, strict=True))


def _line(row: dict[str, object], timeout: float) -> str:
    seconds = row["seconds"]
    ratios = row["ratios"]
    assert isinstance(seconds, list) and isinstance(ratios, list)
    cells = [f"{s * 1000:10.2f} ms" if s is not None else f"  >{timeout:5.0f} s  "
             for s in seconds]
    growths = [f"{r:6.1f}x" if r is not None else "     - " for r in ratios]
    verdict = "PASS" if row["ok"] else "FAIL"
    return (f"{row['target']:<9} {row['shape']:<24} " + " ".join(cells) + "  per 10x: "
            + " ".join(growths) + f"  {verdict}")


def main(python: str, timeout: float, as_json: bool) -> int:
    if not as_json:
        print(f"growth per 10x of hostile text (goal: at most {GROWTH_MAX_RATIO:g}x); sizes "
              + ", ".join(f"{size // 1000} KB" for size in SIZES)
              + f"; a run past {timeout:g} s is stopped")
        print(f"{'target':<9} {'shape':<24} " + " ".join(f"{f'{s // 1000} KB':>13}"
                                                         for s in SIZES))
    rows = growth(python, timeout, say=(lambda line: None) if as_json else print)
    if as_json:
        print(json.dumps({"growth": rows, "max_ratio": GROWTH_MAX_RATIO}, indent=2))
    return 0
