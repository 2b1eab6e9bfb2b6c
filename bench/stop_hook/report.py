"""The report: the figures as JSON (`report_json`, the keys the smoke test and any script
read; only ever extended) and as a table with the targets' PASS/FAIL (`print_table`). With a
compare root, a second section gives its figures and, per scenario, both ratios to the same
bare start-up; a scenario that checkout cannot run says why instead of a number."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from stop_hook.roots import PluginRoot
from stop_hook.scenario import Scenario, Unsupported, floor_seconds
from stop_hook.settings import MB, REFERENCE, REFERENCE_RATIOS

LABEL_WIDTH = 58


def figure(s: Scenario, bare: float) -> dict[str, Any]:
    return {
        "key": s.key, "label": s.label, "kind": s.kind, "size_mb": s.size_mb,
        "family": s.family, "transcript_bytes": s.transcript_bytes,
        "new_bytes": s.new_bytes, "runs": len(s.samples),
        "median_ms": round(s.median_seconds * 1000, 2),
        "min_ms": round(s.min_seconds * 1000, 2),
        "max_ms": round(max(x.seconds for x in s.samples) * 1000, 2),
        "ratio": round(s.median_seconds / bare, 2),
        "peak_rss_mib": round(s.peak_mib, 1),
        "all_valid": not s.failures,
        "decisions": sorted(s.decisions),
        "warnings": sorted(set(s.warnings)),
    }


def _missing(u: Unsupported) -> dict[str, Any]:
    return {"key": u.key, "label": u.label, "size_mb": u.size_mb, "family": u.family,
            "reason": u.reason}


def _compare(root: PluginRoot, scenarios: list[Scenario], unsupported: list[Unsupported],
             bare: float) -> dict[str, Any]:
    theirs = {s.key: s for s in scenarios if s.root == root.name}
    missing = {u.key: u for u in unsupported if u.root == root.name}
    ratios = []
    for s in scenarios:
        if s.root != "main" or s.kind not in ("no_loop", "active"):
            continue
        other = theirs.get(s.key)
        row: dict[str, Any] = {"key": s.key, "label": s.label, "size_mb": s.size_mb,
                               "ratio": round(s.median_seconds / bare, 2),
                               "peak_rss_mib": round(s.peak_mib, 1)}
        if other is not None:
            row.update(compare_ratio=round(other.median_seconds / bare, 2),
                       compare_peak_rss_mib=round(other.peak_mib, 1),
                       speedup=round(other.median_seconds / s.median_seconds, 2))
        else:
            gone = missing.get(s.key)
            row.update(compare_ratio=None, compare_peak_rss_mib=None, speedup=None,
                       compare_note=gone.reason if gone else "not measured")
        ratios.append(row)
    return {
        "root": str(root.path), "layout": root.layout, "cursor": root.has_cursor,
        "usage": root.records_usage,
        "scenarios": [figure(s, bare) for s in theirs.values()],
        "unsupported": [_missing(u) for u in missing.values()],
        "ratios": ratios,
    }


def interpreter_version(python: str) -> str:
    """The version of the interpreter the hooks ran under (not necessarily this one)."""
    try:
        done = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                              capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() or "unknown"


def report_json(python: str, runs: int, sizes: list[float], roots: list[PluginRoot],
                scenarios: list[Scenario], unsupported: list[Unsupported],
                targets: list[dict[str, Any]], notes: list[str]) -> dict[str, Any]:
    main = [s for s in scenarios if s.root == "main"]
    bare = floor_seconds(scenarios)
    failures = [f"{'' if s.root == 'main' else s.root + ': '}{s.key}: {f}"
                for s in scenarios for f in dict.fromkeys(s.failures)]
    result: dict[str, Any] = {
        "python": python,
        "python_version": interpreter_version(python),
        "cpus": os.cpu_count(),
        "runs": runs,
        "sizes_mb": sizes,
        "root": str(roots[0].path),
        "layout": roots[0].layout,
        "baseline_ms": round(bare * 1000, 2),
        "scenarios": [figure(s, bare) for s in main],
        "unsupported": [_missing(u) for u in unsupported if u.root == "main"],
        "targets": targets,
        "reference": {"text": REFERENCE, "ratios": REFERENCE_RATIOS},
        "notes": notes,
        "failures": failures,
        "ok": not failures,
    }
    for root in roots[1:]:
        result[root.name] = _compare(root, scenarios, unsupported, bare)
    return result


def _row(label: str, transcript_bytes: int | None, cells: str) -> str:
    if transcript_bytes:
        label += f" [{transcript_bytes / MB:.2f} MB]"
    return f"{label:<{LABEL_WIDTH}} {cells}"


def print_table(data: dict[str, Any]) -> None:
    print(f"finesse Stop hook benchmark: {data['python']} (Python {data['python_version']}), "
          f"{data['cpus']} CPUs, {data['runs']} runs (median)")
    print(f"{'scenario':<{LABEL_WIDTH}} {'runs':>4} {'median ms':>10} {'min ms':>8} "
          f"{'x bare':>7} {'peak MiB':>9}")
    for s in data["scenarios"]:
        print(_row(s["label"], s["transcript_bytes"],
                   f"{s['runs']:>4} {s['median_ms']:>10.1f} {s['min_ms']:>8.1f} "
                   f"{s['ratio']:>6.2f}x {s['peak_rss_mib']:>9.1f}"))
    for u in data.get("unsupported", []):
        print(_row(u["label"], None, f"n/a: {u['reason']}"))
    print()
    print("targets")
    for t in data["targets"]:
        if t["key"].startswith("size_drift"):
            value = (f"{t['value']:+.1%} (fastest runs: {t['min_based']:+.1%}, "
                     f"paired runs: {t['paired']:+.1%})")
        elif t["key"] == "peak_memory":
            value = f"{t['value']:.1f} MiB"
        else:
            value = f"{t['value']:.2f}x"
        print(f"  {'PASS' if t['pass'] else 'FAIL'}  {t['name']}: {value}")
    compare = data.get("compare")
    if compare:
        print()
        print(f"compare: this checkout ({data['layout']}) vs {compare['root']} "
              f"({compare['layout']}), same run, same bare start-up")
        print(f"{'scenario':<{LABEL_WIDTH}} {'compare':>8} {'this':>7} {'speed-up':>9} "
              f"{'peak MiB':>13}")
        for row in compare["ratios"]:
            if row["compare_ratio"] is None:
                print(_row(row["label"], None, f"{'n/a':>8} {row['ratio']:>6.2f}x   "
                                               f"({row['compare_note']})"))
                continue
            print(_row(row["label"], None,
                       f"{row['compare_ratio']:>7.2f}x {row['ratio']:>6.2f}x "
                       f"{row['speedup']:>8.2f}x {row['compare_peak_rss_mib']:>6.1f}/"
                       f"{row['peak_rss_mib']:<6.1f}"))
    print()
    print(f"reference: {data['reference']['text']}")
    for note in data["notes"]:
        print(f"note: {note}")
    for where, section in (("", data), ("compare: ", compare or {})):
        for s in section.get("scenarios", []):
            for warning in s["warnings"]:
                print(f"warning: {where}{s['key']}: {warning}")
    imports = data.get("importtime")
    if imports:
        print()
        print(f"-X importtime, {imports['scenario']}: {imports['modules']} modules, "
              f"{imports['total_import_ms']} ms in imports (run took {imports['wall_ms']} ms "
              "with importtime's own overhead)")
        print("  top-level imports, cumulative ms:")
        for name, ms in imports["top_level_cumulative_ms"]:
            print(f"    {ms:>8.1f}  {name}")
        print("  self time by top package, ms:")
        for name, ms in imports["self_by_package_ms"]:
            print(f"    {ms:>8.1f}  {name}")
    for failure in data["failures"]:
        print(f"HOOK FAILURE: {failure}")
