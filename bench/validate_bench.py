"""Prompt checker benchmark: how `validate_prompt`'s time grows with the prompt.

Numbers, not assertions. For each shape of text (a real prompt repeated, and the hostile
shapes: a run of spaces before one word, `<promise>` repeated, inline code spans, list items,
numbered steps, headings, `*` runs, `. ` runs, lines of promise tags) it times the checker
at 10 KB, 100 KB and 1 MiB (the most a loop takes) and prints the growth ratio of each
tenfold step. Linear growth is a ratio near 10; the target is at most 12 (a little slack
for the machine), and a 1 MiB prompt checked in under a second. A step whose smaller size
already took more than --give-up seconds is not run (a quadratic shape would take minutes):
it is printed as not run, and fails the target.

    .venv/bin/python bench/validate_bench.py [--runs 3] [--shapes spaces,tags] [--json]

The exit status is 0 when every target holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT / "scripts", ROOT):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from tests.helpers.hostile_text import SHAPES as HOSTILE_SHAPES  # noqa: E402
from tests.helpers.hostile_text import repeated  # noqa: E402

from finesse.authoring.prompt_check.memo import forget  # noqa: E402
from finesse.authoring.prompt_check.validate import validate_prompt  # noqa: E402

SIZES = (10_000, 100_000, 1_048_576)
QUICK_SIZES = (2_000, 20_000)  # --quick: the growth alone, in seconds
GROWTH_TARGET = 12.0
MIB_TARGET_SECONDS = 1.0
TEMPLATE = (ROOT / "tests" / "unit" / "authoring" / "prompt_check" / "corpus_blind"
            / "golden-template-filled.md")


SHAPES: dict[str, Callable[[int], str]] = {
    "prompt": lambda size: repeated(TEMPLATE.read_text(encoding="utf-8") + "\n")(size),
    **HOSTILE_SHAPES,
}


def seconds(text: str, runs: int) -> float:
    """The best of `runs` timings: the least disturbed by the other work on the machine. Each
    run starts cold (the texts read by an earlier run forgotten), as a new process would."""
    best = float("inf")
    for _ in range(runs):
        forget()
        started = time.perf_counter()
        validate_prompt(text)
        best = min(best, time.perf_counter() - started)
    return best


def measure(name: str, runs: int, give_up: float,
            sizes: tuple[int, ...] = SIZES) -> dict[str, object]:
    timings: dict[int, float | None] = {}
    previous: float | None = 0.0
    for size in sizes:
        if previous is None or previous > give_up:
            timings[size] = None
            previous = None
            continue
        timings[size] = previous = seconds(SHAPES[name](size), 1 if size > 200_000 else runs)
    steps = list(itertools.pairwise(sizes))
    ratios = []
    for smaller, larger in steps:
        low, high = timings[smaller], timings[larger]
        ratios.append(None if low is None or high is None else high / max(low, 1e-6))
    largest = timings[sizes[-1]]
    passed = (all(ratio is not None and ratio <= GROWTH_TARGET * (larger / smaller) / 10
                  for ratio, (smaller, larger) in zip(ratios, steps, strict=True))
              and largest is not None
              and (sizes[-1] < SIZES[-1] or largest < MIB_TARGET_SECONDS))
    return {"shape": name, "seconds": {str(size): timings[size] for size in sizes},
            "growth": ratios, "passed": passed}


def _cell(value: float | None, unit: str = "s") -> str:
    return "not run" if value is None else f"{value:.3f}{unit}" if unit == "s" else f"{value:.1f}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--give-up", type=float, default=5.0,
                        help="skip the next size when this one took longer (seconds)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true",
                        help=f"only {QUICK_SIZES[0]:,} and {QUICK_SIZES[1]:,} characters: the "
                             "growth, without the 1 MiB target")
    args = parser.parse_args(argv)
    names = [name for name in args.shapes.split(",") if name]
    unknown = [name for name in names if name not in SHAPES]
    if unknown:
        parser.error(f"unknown shape {unknown[0]!r}; the shapes are {', '.join(SHAPES)}")
    sizes = QUICK_SIZES if args.quick else SIZES
    results = [measure(name, args.runs, args.give_up, sizes) for name in names]
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"{'shape':<16}" + "".join(f"{f'{size:,} B':>13}" for size in sizes)
              + "".join(f"{f'x {small:,}>{large:,}':>20}"
                        for small, large in itertools.pairwise(sizes)) + "  target")
        for result in results:
            timings = result["seconds"]
            growth = result["growth"]
            assert isinstance(timings, dict) and isinstance(growth, list)
            print(f"{result['shape']:<16}"
                  + "".join(f"{_cell(timings[str(size)]):>13}" for size in sizes)
                  + "".join(f"{_cell(ratio, 'x'):>20}" for ratio in growth)
                  + f"  {'PASS' if result['passed'] else 'FAIL'}")
        print(f"target: each tenfold step at most {GROWTH_TARGET:g}x the time (the 100 KB to "
              f"1 MiB step, 10.5x the text, at most {GROWTH_TARGET * 1.048576:.1f}x); "
              f"1 MiB under {MIB_TARGET_SECONDS:g} s")
    return 0 if all(result["passed"] for result in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
