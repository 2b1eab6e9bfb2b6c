"""The targets, judged on this checkout's figures only (a compare root is reported, not
judged): the no-loop path at most 1.2x bare start-up; every active decision, the worst case
included, at most 6x; each family of sized scenarios flat from the smallest to the largest
transcript (within 15%); peak memory under 50 MiB at the largest size."""

from __future__ import annotations

import statistics
from typing import Any

from stop_hook.scenario import Scenario, floor_seconds
from stop_hook.settings import (
    ACTIVE_MAX_RATIO,
    NO_LOOP_MAX_RATIO,
    PEAK_MIB_MAX,
    SIZE_DRIFT_MAX,
    size_label,
)

FAMILY_NAMES = {
    "active": "active, tail read",
    "usage": "active, cursor, usage read",
    "worst_cursor": "worst case, cursor",
    "worst_no_cursor": "worst case, no cursor",
}


def _ratio_target(s: Scenario, bare: float, limit: float) -> dict[str, Any]:
    ratio = s.median_seconds / bare
    return {"name": f"{s.label} <= {limit}x bare", "key": s.key, "value": round(ratio, 2),
            "limit": limit, "pass": ratio <= limit}


def evaluate(scenarios: list[Scenario]) -> list[dict[str, Any]]:
    mine = [s for s in scenarios if s.root == "main"]
    bare = floor_seconds(scenarios)
    targets = [_ratio_target(s, bare, NO_LOOP_MAX_RATIO) for s in mine if s.kind == "no_loop"]
    targets += [_ratio_target(s, bare, ACTIVE_MAX_RATIO) for s in mine if s.kind == "active"]
    for family, name in FAMILY_NAMES.items():
        sized = sorted((s for s in mine if s.family == family and s.size_mb is not None),
                       key=lambda s: s.size_mb or 0)
        if len(sized) < 2:
            continue
        small, big = sized[0], sized[-1]
        drift = big.median_seconds / small.median_seconds - 1
        # Run i of each size ran in the same round of the round-robin: their ratio leaves
        # out most of a slow spell of the machine (information; the target is the medians').
        paired = statistics.median(b.seconds / s.seconds
                                   for s, b in zip(small.samples, big.samples, strict=False))
        targets.append({
            "min_based": round(big.min_seconds / small.min_seconds - 1, 4),
            "paired": round(paired - 1, 4),
            "name": f"{size_label(big.size_mb or 0)} within {SIZE_DRIFT_MAX:.0%} of "
                    f"{size_label(small.size_mb or 0)} ({name})",
            "key": "size_drift" if family == "active" else f"size_drift_{family}",
            "value": round(drift, 4), "limit": SIZE_DRIFT_MAX,
            "pass": abs(drift) <= SIZE_DRIFT_MAX,
        })
    sized = [s for s in mine if s.size_mb is not None]
    if sized:
        largest = max(s.size_mb or 0 for s in sized)
        peak = max(s.peak_mib for s in sized if s.size_mb == largest)
        targets.append({
            "name": f"peak memory < {PEAK_MIB_MAX:g} MiB at {size_label(largest)} "
                    "(every scenario)",
            "key": "peak_memory", "value": round(peak, 1), "limit": PEAK_MIB_MAX,
            "pass": peak < PEAK_MIB_MAX,
        })
    return targets
