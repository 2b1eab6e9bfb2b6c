"""The Stop hook benchmark runs end to end with tiny settings and reports what it should.

Numbers are not checked (they belong to the machine); only that every hook run was valid:
no output on the no-loop paths, a block decision on the active path.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "stop_hook_bench.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("stop_hook_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_bench_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench()

    status = bench.main(["--runs", "2", "--sizes", "0.02,0.05", "--json"])

    data = json.loads(capsys.readouterr().out)
    assert status == 0, data["failures"]
    assert data["ok"] is True and data["failures"] == []
    assert {"python", "cpus", "runs", "sizes_mb", "baseline_ms", "scenarios", "targets",
            "reference", "notes", "tail_read_in_process_ms"} <= data.keys()
    assert set(data["tail_read_in_process_ms"]) == {"0.02 MB", "0.05 MB"}
    assert data["sizes_mb"] == [0.02, 0.05]
    scenarios = {s["key"]: s for s in data["scenarios"]}
    assert set(scenarios) == {"bare", "bare_no_site", "no_loop", "other_loop",
                              "active_0.02mb", "active_0.05mb", "active_message"}
    for figure in scenarios.values():
        assert {"median_ms", "ratio", "peak_rss_mib", "runs", "all_valid"} <= figure.keys()
        assert figure["runs"] == 2 and figure["all_valid"], figure
        assert figure["median_ms"] > 0 and figure["peak_rss_mib"] > 0
    assert scenarios["bare"]["ratio"] == 1.0
    for key in ("no_loop", "other_loop"):
        assert scenarios[key]["decisions"] == ["none"], scenarios[key]
    for key in ("active_0.02mb", "active_0.05mb", "active_message"):
        assert scenarios[key]["decisions"] == ["continue"], scenarios[key]
    assert scenarios["active_0.05mb"]["transcript_bytes"] >= 50_000
    targets = {t["key"] for t in data["targets"]}
    assert {"no_loop", "other_loop", "active_message", "size_drift", "peak_memory"} <= targets
    assert all(isinstance(t["pass"], bool) for t in data["targets"])

    bench.print_table(data)  # the human-readable form of the same figures
    table = capsys.readouterr().out
    assert "bare start-up" in table and "reference:" in table
    assert table.count("PASS") + table.count("FAIL") == len(data["targets"])

