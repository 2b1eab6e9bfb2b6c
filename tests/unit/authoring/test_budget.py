"""`finesse budget`: the estimator's arithmetic, checked against examples worked by hand.

peak = 5,000 (prompt base) + 5,000 x phases + sum(weight x 10 x lines) + 20,000 (reasoning)
weights: implementation 2.0, verification 0.5, exploration 1.5
unread files: small 200, medium 1,000, large 5,000 lines
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finesse.authoring.budget import (
    BudgetSpec,
    FileEstimate,
    MeasuredPhase,
    PhaseSpec,
    cost_range,
    count_lines,
    estimate,
    load_spec,
    measure,
    parse_phase,
    pressure_for,
    size_category,
    window_label,
)
from finesse.errors import UsageError


def seed_disclaimer(window: str) -> str:
    """Seed 000's Cost Disclaimer Template, word for word."""
    return (f"Cost estimates are order-of-magnitude approximations based on a {window} token "
            "context window. Actual costs vary with model choice (Sonnet vs Opus), caching "
            "behavior, codebase growth during execution, and agent reasoning patterns. Treat "
            "these as directional, not precise.")


def unread(kind: str, *complexities: str) -> MeasuredPhase:
    lines = {"small": 200, "medium": 1_000, "large": 5_000}
    return MeasuredPhase(type=kind, files=[  # type: ignore[arg-type]
        FileEstimate(source=word, counted=False, lines=lines[word]) for word in complexities
    ])


# One plan per pressure band, at the default 200,000-token window.
# LOW: verification:small
#   5,000 + 1 x 5,000 + 0.5 x 200 x 10 (= 1,000) + 20,000 = 31,000 -> 15.5 % -> low
LOW = [unread("verification", "small")]
# MODERATE: implementation:medium,medium
#   5,000 + 5,000 + 2.0 x 2,000 x 10 (= 40,000) + 20,000 = 70,000 -> 35 % -> moderate
MODERATE = [unread("implementation", "medium", "medium")]
# HIGH: implementation:large
#   5,000 + 5,000 + 2.0 x 5,000 x 10 (= 100,000) + 20,000 = 130,000 -> 65 % -> high
HIGH = [unread("implementation", "large")]
# CRITICAL: implementation:large + exploration:large
#   5,000 + 2 x 5,000 + (100,000 + 1.5 x 5,000 x 10 = 75,000) + 20,000 = 210,000 -> 105 %
CRITICAL = [unread("implementation", "large"), unread("exploration", "large")]


@pytest.mark.parametrize(("phases", "peak", "percent", "pressure", "action"), [
    (LOW, 31_000, 15.5, "low", "proceed"),
    (MODERATE, 70_000, 35.0, "moderate", "note"),
    (HIGH, 130_000, 65.0, "high", "recommend decomposition"),
    (CRITICAL, 210_000, 105.0, "critical", "re-route"),
])
def test_every_pressure_band(phases: list[MeasuredPhase], peak: int, percent: float,
                             pressure: str, action: str) -> None:
    result = estimate(phases, iterations=6)
    assert (result.peak_tokens, result.peak_percent, result.pressure, result.action) == (
        peak, percent, pressure, action)
    assert result.breakdown.base + result.breakdown.phases + result.breakdown.files + \
        result.breakdown.reasoning == peak


@pytest.mark.parametrize(("phases", "iterations", "cost"), [
    # fewer than 5 iterations (gap): priced as the 5-8 row
    (LOW, 1, "under $5"),
    (MODERATE, 4, "$5-20"),
    (CRITICAL, 4, "$5-20"),
    # 5-8: low "under $5"; moderate-high "$5-20"; critical (gap) as high
    (LOW, 5, "under $5"),
    (LOW, 7, "under $5"),
    (MODERATE, 7, "$5-20"),
    (HIGH, 5, "$5-20"),
    (CRITICAL, 7, "$5-20"),
    # 8-15: low-moderate "$5-20"; high "$20-50"; critical (gap) as high.
    # 8 itself belongs here, the costlier of the two rows that name it.
    (LOW, 8, "$5-20"),
    (MODERATE, 14, "$5-20"),
    (HIGH, 8, "$20-50"),
    (HIGH, 14, "$20-50"),
    (CRITICAL, 14, "$20-50"),
    # 15-22: low-moderate "$20-50"; high-critical "$50-100"; 15 belongs here
    (LOW, 15, "$20-50"),
    (MODERATE, 21, "$20-50"),
    (HIGH, 15, "$50-100"),
    (CRITICAL, 21, "$50-100"),
    # 22-25: any "$50-100+"; 22 belongs here; more than 25 too
    (LOW, 22, "$50-100+"),
    (MODERATE, 25, "$50-100+"),
    (HIGH, 22, "$50-100+"),
    (CRITICAL, 25, "$50-100+"),
    (LOW, 40, "$50-100+"),
])
def test_every_cost_row(phases: list[MeasuredPhase], iterations: int, cost: str) -> None:
    result = estimate(phases, iterations=iterations)
    assert result.cost_range == cost
    assert result.iterations == iterations


def test_whole_estimate_of_a_mixed_plan() -> None:
    # implementation: 120 counted lines + medium (1,000) = 1,120 lines -> 11,200 x 2.0 = 22,400
    # verification: small (200) -> 2,000 x 0.5 = 1,000
    # exploration: large (5,000) -> 50,000 x 1.5 = 75,000
    # peak = 5,000 + 3 x 5,000 + (22,400 + 1,000 + 75,000 = 98,400) + 20,000 = 138,400
    # 138,400 / 200,000 = 69.2 % -> high; 12 iterations, high -> "$20-50"
    phases = [
        MeasuredPhase(type="implementation", files=[
            FileEstimate(source="src/a.py", counted=True, lines=120),
            FileEstimate(source="medium", counted=False, lines=1_000),
        ]),
        unread("verification", "small"),
        unread("exploration", "large"),
    ]
    result = estimate(phases, iterations=12)
    assert result.model_dump() == {
        "peak_tokens": 138_400,
        "peak_percent": 69.2,
        "pressure": "high",
        "action": "recommend decomposition",
        "cost_range": "$20-50",
        "iterations": 12,
        "context_window": 200_000,
        "lines_read": 6_320,  # 1,120 + 200 + 5,000
        "size": "medium",
        "breakdown": {"base": 5_000, "phases": 15_000, "files": 98_400, "reasoning": 20_000},
        "phases": [
            {"type": "implementation", "weight": 2.0, "lines": 1_120, "file_tokens": 11_200,
             "weighted_tokens": 22_400, "files": [
                 {"source": "src/a.py", "counted": True, "lines": 120},
                 {"source": "medium", "counted": False, "lines": 1_000}]},
            {"type": "verification", "weight": 0.5, "lines": 200, "file_tokens": 2_000,
             "weighted_tokens": 1_000, "files": [
                 {"source": "small", "counted": False, "lines": 200}]},
            {"type": "exploration", "weight": 1.5, "lines": 5_000, "file_tokens": 50_000,
             "weighted_tokens": 75_000, "files": [
                 {"source": "large", "counted": False, "lines": 5_000}]},
        ],
        "disclaimer": seed_disclaimer("200k"),
    }


def test_a_phase_without_files_costs_its_allowance_only() -> None:
    # 5,000 + 5,000 + 0 + 20,000 = 30,000 -> 15 %
    result = estimate([MeasuredPhase(type="exploration")], iterations=3)
    assert (result.peak_tokens, result.peak_percent, result.size) == (30_000, 15.0, "small")


@pytest.mark.parametrize(("lines", "peak", "percent", "pressure"), [
    # one implementation file of N lines: peak = 30,000 + 2.0 x 10 x N = 30,000 + 20 N
    (1_499, 59_980, 30.0, "low"),  # 29.99 %: shown rounded to 30.0, still low
    (1_500, 60_000, 30.0, "moderate"),  # exactly 30 %: moderate starts here
    (4_499, 119_980, 60.0, "moderate"),  # 59.99 %
    (4_500, 120_000, 60.0, "high"),  # exactly 60 %: high starts here
    (6_500, 160_000, 80.0, "high"),  # exactly 80 %: still high ("critical > 80 %")
    (6_501, 160_020, 80.0, "critical"),  # 80.01 %
])
def test_band_boundaries_on_counted_files(tmp_path: Path, lines: int, peak: int,
                                          percent: float, pressure: str) -> None:
    (tmp_path / "big.py").write_text("x = 1\n" * lines)
    phases = measure([PhaseSpec(type="implementation", files=["big.py"])], tmp_path)
    result = estimate(phases, iterations=10)
    assert (result.peak_tokens, result.peak_percent, result.pressure) == (
        peak, percent, pressure)
    assert result.phases[0].files == [FileEstimate(source="big.py", counted=True, lines=lines)]


def test_pressure_for_other_windows() -> None:
    # LOW's 31,000 tokens against 100,000 is 31 % -> moderate; against 1,000,000, 3.1 % -> low
    assert pressure_for(31_000, 100_000) == "moderate"
    assert pressure_for(31_000, 1_000_000) == "low"
    result = estimate(LOW, iterations=6, context_window=100_000)
    assert (result.peak_percent, result.pressure, result.cost_range) == (
        31.0, "moderate", "$5-20")
    assert result.disclaimer == seed_disclaimer("100k")


@pytest.mark.parametrize(("lines", "size"), [
    (0, "small"), (1_999, "small"), (2_000, "medium"), (10_000, "medium"), (10_001, "large"),
])
def test_size_categories(lines: int, size: str) -> None:
    assert size_category(lines) == size


@pytest.mark.parametrize(("window", "label"), [
    (200_000, "200K"), (128_000, "128K"), (1_000_000, "1,000K"), (128_500, "128.5K"),
    (32_768, "32.768K"),
])
def test_window_label(window: int, label: str) -> None:
    assert window_label(window) == label


def test_cost_range_table_has_no_hole() -> None:
    for iterations in range(1, 60):
        for pressure in ("low", "moderate", "high", "critical"):
            assert cost_range(iterations, pressure).startswith(("under $", "$"))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"phases": [], "iterations": 5}, "give at least one phase"),
    ({"phases": LOW, "iterations": 0}, "--iterations must be 1 or more, not 0"),
    ({"phases": LOW, "iterations": 5, "context_window": 0}, "--window must be a positive"),
])
def test_estimate_refuses_impossible_input(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        estimate(**kwargs)  # type: ignore[arg-type]


# ---- line counting and measuring real files ----

@pytest.mark.parametrize(("content", "lines"), [
    (b"", 0), (b"\n", 1), (b"a\nb\n", 2), (b"a\nb", 2), (b"one line, no newline", 1),
    (b"a\r\nb\r\n", 2), (b"\x00\xff\n\x00", 2),
])
def test_count_lines(tmp_path: Path, content: bytes, lines: int) -> None:
    path = tmp_path / "f"
    path.write_bytes(content)
    assert count_lines(path) == lines


def test_count_lines_across_read_chunks(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"0123456789abcde\n" * 200_000)  # 3.2 MB, 1 MiB chunks
    assert count_lines(path) == 200_000


def test_measure_counts_paths_and_assumes_complexities(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a\n" * 30)
    (tmp_path / "src" / "b.py").write_text("b\n" * 12 + "last")
    (tmp_path / "small").write_text("a file named small\n")
    phases = measure([
        PhaseSpec(type="implementation", files=["src/a.py", "src/b.py"]),
        PhaseSpec(type="exploration", files=["large", "./small"]),
    ], tmp_path)
    assert phases == [
        MeasuredPhase(type="implementation", files=[
            FileEstimate(source="src/a.py", counted=True, lines=30),
            FileEstimate(source="src/b.py", counted=True, lines=13)]),
        MeasuredPhase(type="exploration", files=[
            FileEstimate(source="large", counted=False, lines=5_000),
            FileEstimate(source="./small", counted=True, lines=1)]),
    ]


def test_measure_refuses_missing_files_and_directories(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    with pytest.raises(UsageError, match=r"^no file src/nope.py; give a file that exists"):
        measure([PhaseSpec(type="implementation", files=["src/nope.py"])], tmp_path)
    with pytest.raises(UsageError, match=r"^src is a directory: name its files instead"):
        measure([PhaseSpec(type="implementation", files=["src"])], tmp_path)


@pytest.mark.parametrize(("text", "spec"), [
    ("implementation:src/a.py,src/b.py",
     PhaseSpec(type="implementation", files=["src/a.py", "src/b.py"])),
    ("Exploration: large , medium", PhaseSpec(type="exploration", files=["large", "medium"])),
    ("verification", PhaseSpec(type="verification", files=[])),
    ("verification:", PhaseSpec(type="verification", files=[])),
])
def test_parse_phase(text: str, spec: PhaseSpec) -> None:
    assert parse_phase(text) == spec


@pytest.mark.parametrize(("text", "message"), [
    ("implement:src/a.py", "unknown phase type 'implement': use implementation, verification "
                           "or exploration"),
    ("src/a.py", "unknown phase type 'src/a.py'"),
    ("implementation:a.py,,b.py", "empty file name in --phase"),
])
def test_parse_phase_refusals(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as caught:
        parse_phase(text)
    assert "\n" not in str(caught.value)


def test_load_spec(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({
        "phases": [{"type": "implementation", "files": ["src/a.py", "large"]},
                   {"type": "verification"}],
        "iterations": 12, "context_window": 100_000,
    }))
    assert load_spec(path) == BudgetSpec(
        phases=[PhaseSpec(type="implementation", files=["src/a.py", "large"]),
                PhaseSpec(type="verification")],
        iterations=12, context_window=100_000,
    )


@pytest.mark.parametrize(("content", "detail"), [
    ("{not json", "not JSON"),
    ('{"phases": [], "iterations": 3}', "phases: List should have at least 1 item"),
    ('{"phases": [{"type": "coding"}], "iterations": 3}', "phases.0.type: Input should be"),
    ('{"phases": [{"type": "exploration"}], "iterations": 0}', "iterations: Input should be"),
    ('{"phases": [{"type": "exploration"}], "iterations": 3, "model": "x"}',
     "model: Extra inputs are not permitted"),
])
def test_load_spec_refusals(tmp_path: Path, content: str, detail: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=r"^the spec .*plan\.json is invalid \(") as caught:
        load_spec(path)
    assert detail in str(caught.value)
    assert '"iterations": 12}' in str(caught.value)  # the message shows what to write


