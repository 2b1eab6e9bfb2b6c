"""The benchmark's fixed values: ids, the loop's promise, the default settings, the targets
and the quoted reference figure. Everything else in the package reads them from here."""

from __future__ import annotations

from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = BENCH_DIR.parent  # the checkout the benchmark belongs to: the "after" root

SESSION_ID = "4d1c2b7e-9a55-4f0e-8c2d-5be1a0c3f9a1"
OTHER_SESSION_ID = "0b8e6f3a-1d2c-4e5f-a6b7-c8d9e0f1a2b3"
PROMISE = "ALL TESTS PASS"
MAX_ITERATIONS = 100_000  # the most a loop file may hold
CLAUDE_VERSION = "2.1.328"
MODEL = "claude-sonnet-4-5"
MB = 1_000_000

DEFAULT_RUNS = 21
DEFAULT_SIZES = "1,10,100"
# A scenario whose single run is slow gets fewer runs (never under MIN_RUNS) so that it
# takes about this long; with the defaults no scenario of the current code comes near it.
DEFAULT_BUDGET_SECONDS = 20.0
MIN_RUNS = 5
# The worst case's last stop was this many bytes ago: what a loop with a cursor reads.
WORST_CASE_NEW_BYTES = 200_000

NO_LOOP_MAX_RATIO = 1.2
ACTIVE_MAX_RATIO = 6.0
SIZE_DRIFT_MAX = 0.15
PEAK_MIB_MAX = 50.0
REFERENCE = (
    "official ralph-loop bash Stop hook: about 9.7x bare at 1 MB and 13.7x at 100 MB "
    "(a quoted figure, not measured here)"
)
REFERENCE_RATIOS = {"1 MB": 9.7, "100 MB": 13.7}

FINAL_REPLY = (
    "I fixed the tokenizer's handling of escaped quotes and the three parser tests that "
    "depended on it now pass. `test_roundtrip_unicode` still fails: the writer drops a "
    "combining mark when it normalises line endings. I have not touched the writer yet; "
    "next I will add a failing case for it and fix `normalise_newlines`."
)


def size_label(mb: float) -> str:
    return f"{mb:g} MB"
