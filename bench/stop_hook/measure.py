"""Taking the figures: every scenario round-robin through the helper (`measure`), the
transcript reads alone in this process (what the size itself costs, apart from start-up and
noise), and an `-X importtime` breakdown of one active run."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from stop_hook.children import Runner
from stop_hook.scenario import Scenario
from stop_hook.settings import MIN_RUNS, REPO_ROOT, size_label
from stop_hook.transcripts import Transcript


def measure(runner: Runner, scenarios: list[Scenario], runs: int, budget: float) -> None:
    """One warm-up run each (pyc files, page cache), then the runs, round-robin. A scenario
    whose first counted run is slow gets fewer runs, so that it takes about `budget` seconds."""
    for scenario in scenarios:
        scenario.run_once(runner)
    for scenario in scenarios:
        first = scenario.run_once(runner)
        scenario.samples.append(first)
        affordable = int(budget / max(first.seconds, 1e-6))
        scenario.runs = max(1, min(runs, max(MIN_RUNS, affordable)))
    for index in range(1, max(s.runs for s in scenarios)):
        for scenario in scenarios:
            if index < scenario.runs:
                scenario.samples.append(scenario.run_once(runner))


def _median_ms(call: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 3)


def _finesse_on_path() -> None:
    scripts = str(REPO_ROOT / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)


def tail_read_in_process(plain: dict[float, Transcript], repeats: int = 21,
                         ) -> dict[str, float]:
    """The transcript tail read alone, in this process: what the size itself costs."""
    _finesse_on_path()
    from finesse.support.transcript import last_assistant_text  # standard library only

    return {size_label(mb): _median_ms(partial(last_assistant_text, t.path), repeats)
            for mb, t in plain.items()}


def worst_case_in_process(worst: dict[float, Transcript], repeats: int = 21,
                          ) -> dict[str, dict[str, float]]:
    """The worst case's transcript reads alone, in this process: with a cursor (the new
    bytes' tool calls and usage), and without (whether there was a tool call, from the
    end)."""
    _finesse_on_path()
    from finesse.results import Cursor
    from finesse.support.transcript import tool_calls_since_turn_start
    from finesse.support.usage import read_increment

    timings: dict[str, dict[str, float]] = {}
    for mb, t in worst.items():
        cursor = Cursor(t.mark, t.identity, t.recent_ids)
        timings[size_label(mb)] = {
            "cursor": _median_ms(partial(read_increment, t.path, cursor), repeats),
            "no_cursor": _median_ms(
                partial(tool_calls_since_turn_start, t.path, at_most=1), repeats),
        }
    return timings


def importtime(runner: Runner, scenario: Scenario, top: int = 15) -> dict[str, Any]:
    """`PY -S -X importtime` on an active path: what its imports cost."""
    argv = [scenario.argv[0], "-X", "importtime", *scenario.argv[1:]]
    if scenario.reset is not None:
        scenario.reset()
    sample = runner.run(argv, scenario.env, scenario.cwd, scenario.stdin)
    rows: list[tuple[int, int, int, str]] = []  # self us, cumulative us, depth, name
    for line in sample.stderr.decode("utf-8", "replace").splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3:
            continue
        name = parts[2].rstrip()
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        rows.append((int(parts[0]), int(parts[1]), depth, name.strip()))
    by_package: dict[str, int] = {}
    for own, _, _, name in rows:
        package = name.split(".")[0]
        by_package[package] = by_package.get(package, 0) + own
    top_level = sorted((r for r in rows if r[2] == 0), key=lambda r: -r[1])
    return {
        "scenario": scenario.key,
        "wall_ms": round(sample.seconds * 1000, 1),
        "total_import_ms": round(sum(r[0] for r in rows) / 1000, 1),
        "modules": len(rows),
        "top_level_cumulative_ms": [[r[3], round(r[1] / 1000, 1)] for r in top_level[:top]],
        "self_by_package_ms": [
            [name, round(us / 1000, 1)]
            for name, us in sorted(by_package.items(), key=lambda item: -item[1])[:top]
        ],
        "top_self_ms": [
            [r[3], round(r[0] / 1000, 1)] for r in sorted(rows, key=lambda r: -r[0])[:top]
        ],
    }
