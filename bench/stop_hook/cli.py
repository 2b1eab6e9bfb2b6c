"""The command line: `python bench/stop_hook_bench.py [options]` (see that script's doc for
what is measured). Builds everything under one temporary directory, measures, reports, and
removes it; exit status 1 only when a hook run was not valid."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from stop_hook.children import Runner
from stop_hook.growth import DEFAULT_TIMEOUT_SECONDS
from stop_hook.growth import main as growth_main
from stop_hook.measure import importtime, measure, tail_read_in_process, worst_case_in_process
from stop_hook.report import print_table, report_json
from stop_hook.roots import PluginRoot, load_root
from stop_hook.scenario import Scenario
from stop_hook.scenarios import build_scenarios, build_transcripts
from stop_hook.settings import (
    DEFAULT_BUDGET_SECONDS,
    DEFAULT_RUNS,
    DEFAULT_SIZES,
    MIN_RUNS,
    REPO_ROOT,
    WORST_CASE_NEW_BYTES,
)
from stop_hook.targets import evaluate


def parse_sizes(text: str) -> list[float]:
    sizes = sorted({float(part) for part in text.split(",") if part.strip()})
    if not sizes or sizes[0] <= 0:
        raise argparse.ArgumentTypeError("sizes are positive numbers of MB, e.g. 1,10,100")
    return sizes


def parser(description: str | None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                   help=f"runs per scenario, median reported (default {DEFAULT_RUNS})")
    p.add_argument("--sizes", type=parse_sizes, default=parse_sizes(DEFAULT_SIZES),
                   help=f"transcript sizes in MB, comma-separated (default {DEFAULT_SIZES}); "
                        "the worst case and the usage read at the smallest and the largest")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET_SECONDS,
                   help="seconds per scenario; a slower one gets fewer runs "
                        f"(at least {MIN_RUNS}; default {DEFAULT_BUDGET_SECONDS:g})")
    p.add_argument("--python", default=None,
                   help="interpreter the hook runs under (default: the one `python3` on PATH "
                        "runs, as hooks/hooks.json starts the hooks with `python3`)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--importtime", action="store_true",
                   help="also break down the active path's imports with -X importtime")
    p.add_argument("--growth", action="store_true",
                   help="instead, measure how reading hostile text grows with its size: the "
                        "reply reader and finesse validate at 10 KB, 100 KB and 1 MB")
    p.add_argument("--growth-timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS,
                   metavar="SECONDS", help="with --growth: stop a measurement after this "
                   f"long (default {DEFAULT_TIMEOUT_SECONDS:g})")
    p.add_argument("--compare-root", type=Path, metavar="PATH",
                   help="also measure the plugin checkout at PATH in the same run (e.g. an "
                        "older commit's worktree), its ratios beside this one's")
    return p


def main(argv: Sequence[str] | None = None, description: str | None = None) -> int:
    p = parser(description)
    args = p.parse_args(argv)
    if args.python is None:
        args.python = hooks_python()
        if args.python is None:
            p.error("no `python3` on PATH, which hooks/hooks.json runs: give --python")
    other_floor = _other_floor(args.python)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    if args.growth:
        return growth_main(args.python, args.growth_timeout, args.json)
    roots: list[PluginRoot] = [load_root(REPO_ROOT, "main")]
    if args.compare_root is not None:
        try:
            roots.append(load_root(args.compare_root, "compare"))
        except ValueError as err:
            p.error(f"--compare-root: {err}")

    with tempfile.TemporaryDirectory(prefix="finesse-bench-") as tmp_name:
        tmp = Path(tmp_name)
        started = time.perf_counter()
        load_before = os.getloadavg()[0]
        plain, worst = build_transcripts(tmp, args.sizes)
        scenarios, unsupported = build_scenarios(tmp, args.python, roots, plain, worst,
                                                 other_floor)
        built = time.perf_counter() - started
        runner = Runner(args.python, tmp)
        imports = None
        try:
            measure(runner, scenarios, args.runs, args.budget)
            tail_reads = tail_read_in_process(plain)
            worst_reads = worst_case_in_process(worst)
            if args.importtime:
                active = next(s for s in scenarios if s.key == "active_message")
                imports = importtime(runner, active)
        finally:
            runner.close()
        elapsed = time.perf_counter() - started
        load_after = os.getloadavg()[0]
    notes = _notes(args, scenarios, built, elapsed, (load_before, load_after), tail_reads,
                   worst_reads)
    data = report_json(args.python, args.runs, args.sizes, roots, scenarios, unsupported,
                       evaluate(scenarios), notes)
    data["tail_read_in_process_ms"] = tail_reads
    data["worst_case_in_process_ms"] = worst_reads
    if imports is not None:
        data["importtime"] = imports
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print_table(data)
    return 0 if data["ok"] else 1


def hooks_python() -> str | None:
    """The interpreter `python3` on PATH runs (a launcher such as pyenv's shim resolved to
    the program it starts): what the hooks' figures are measured under and against."""
    found = shutil.which("python3")
    if found is None:
        return None
    try:
        done = subprocess.run([found, "-c", "import sys; print(sys.executable)"],
                              capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return found
    return done.stdout.strip() or found


def _other_floor(python: str) -> str | None:
    """This process's interpreter, when it is not the hooks': its bare start-up is shown too."""
    mine = os.path.realpath(sys.executable)
    return None if mine == os.path.realpath(python) else sys.executable


def _notes(args: argparse.Namespace, scenarios: list[Scenario], built: float, elapsed: float,
           load: tuple[float, float], tail_reads: dict[str, float],
           worst_reads: dict[str, dict[str, float]]) -> list[str]:
    notes = [
        f"transcripts built in {built:.1f} s; whole run {elapsed:.1f} s; 1-min load average "
        f"{load[0]:.2f} before, {load[1]:.2f} after (other work on the machine adds noise)",
    ]
    for s in scenarios:
        if len(s.samples) < args.runs:
            where = "" if s.root == "main" else f"{s.root}: "
            notes.append(f"{where}{s.key}: {len(s.samples)} runs instead of {args.runs} "
                         f"(one run took long; --budget {args.budget:g} s per scenario)")
    notes.append("in-process tail read (transcript.last_assistant_text), median ms: "
                 + ", ".join(f"{size} {ms:.3f}" for size, ms in tail_reads.items()))
    new = sorted({s.new_bytes for s in scenarios if s.family == "worst_cursor" and s.new_bytes})
    notes.append(
        "worst case: one turn, no typed prompt, every assistant message ending in a tool call "
        "but the final reply; "
        f"with a cursor, {' / '.join(f'{n / 1000:.0f} KB' for n in new) or 'no bytes'} written "
        f"since the last stop (about {WORST_CASE_NEW_BYTES // 1000} KB, at most a fifth of the "
        "file); in-process reads, median ms: "
        + ", ".join(f"{size} cursor {t['cursor']:.3f} / no cursor {t['no_cursor']:.3f}"
                    for size, t in worst_reads.items()))
    notes.append("peak MiB is the child's max RSS (os.wait4), interpreter included; "
                 "each scenario had one warm-up run first (not counted)")
    return notes
