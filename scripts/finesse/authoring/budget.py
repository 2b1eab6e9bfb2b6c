"""Context budget of a loop plan: how much of the window one iteration's working set takes.

`estimate` is pure arithmetic over stated heuristics (docs/budget.md has the formula and
why). The only I/O is in `count_lines` and `measure`, which turn the paths a plan names into
line counts, and in `load_spec`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from finesse.errors import UsageError
from finesse.support import json_text
from finesse.support.files import FileProblem, read_bytes, shown_name
from finesse.support.strict import StrictModel, problems

PhaseType = Literal["implementation", "verification", "exploration"]
Complexity = Literal["small", "medium", "large"]
Pressure = Literal["low", "moderate", "high", "critical"]
Action = Literal["proceed", "note", "recommend decomposition", "re-route"]

DEFAULT_CONTEXT_WINDOW = 200_000
TOKENS_PER_LINE = 10
# The prompt itself takes 2,000 to 5,000 tokens; a peak is an upper estimate, so the top.
PROMPT_BASE_TOKENS = 5_000
TOKENS_PER_PHASE = 5_000
REASONING_TOKENS_PER_ITERATION = 20_000
# How often a phase's files pass through the context: edited code is read, changed and
# read again; exploration skims some files twice; verification mostly reads test output.
PHASE_WEIGHTS: dict[PhaseType, float] = {
    "implementation": 2.0,
    "verification": 0.5,
    "exploration": 1.5,
}
UNREAD_FILE_LINES: dict[Complexity, int] = {"small": 200, "medium": 1_000, "large": 5_000}
SMALL_BELOW_LINES = 2_000
LARGE_ABOVE_LINES = 10_000
ACTIONS: dict[Pressure, Action] = {
    "low": "proceed",
    "moderate": "note",
    "high": "recommend decomposition",
    "critical": "re-route",
}
# (first iteration count of the row, cost by pressure). A row runs up to the next row's
# first count, exclusive: the shared boundaries 8, 15 and 22 belong to the costlier row.
# Fewer than 5 iterations use the first row; more than 25 use the last. Critical pressure
# costs what high costs, as in the 15-22 row (docs/budget.md explains each choice).
COST_ROWS: tuple[tuple[int, dict[Pressure, str]], ...] = (
    (0, {"low": "under $5", "moderate": "$5-20", "high": "$5-20", "critical": "$5-20"}),
    (8, {"low": "$5-20", "moderate": "$5-20", "high": "$20-50", "critical": "$20-50"}),
    (15, {"low": "$20-50", "moderate": "$20-50", "high": "$50-100", "critical": "$50-100"}),
    (22, {"low": "$50-100+", "moderate": "$50-100+", "high": "$50-100+",
          "critical": "$50-100+"}),
)
MAX_SPEC_BYTES = 1024 * 1024
# A source file past this is counted as "large" by hand; reading it whole is not worth it.
MAX_COUNTED_BYTES = 64 * 1024 * 1024
_PHASE_TYPES: dict[str, PhaseType] = {kind: kind for kind in PHASE_WEIGHTS}
_COMPLEXITIES: dict[str, Complexity] = {word: word for word in UNREAD_FILE_LINES}
_TYPES_HINT = "implementation, verification or exploration"
_PHASE_HINT = 'type --phase "implementation:src/a.py,src/b.py" or --phase "exploration:large"'


class PhaseSpec(StrictModel):
    """A phase as the user wrote it: each file is a path, or small / medium / large."""

    type: PhaseType
    files: list[str] = Field(default_factory=list)


class BudgetSpec(StrictModel):
    """The `--spec FILE.json` document; the same data as the command-line options."""

    phases: list[PhaseSpec] = Field(min_length=1)
    iterations: int = Field(ge=1)
    context_window: int | None = Field(default=None, gt=0)


class FileEstimate(StrictModel):
    source: str  # the path as given, or the complexity word
    counted: bool  # True: lines counted on disk; False: the default for that complexity
    lines: int = Field(ge=0)


class MeasuredPhase(StrictModel):
    type: PhaseType
    files: list[FileEstimate] = Field(default_factory=list)


class PhaseBreakdown(StrictModel):
    type: PhaseType
    weight: float
    lines: int
    file_tokens: int
    weighted_tokens: int
    files: list[FileEstimate]


class Breakdown(StrictModel):
    base: int
    phases: int
    files: int
    reasoning: int


class BudgetEstimate(StrictModel):
    peak_tokens: int
    peak_percent: float
    pressure: Pressure
    action: Action
    cost_range: str
    iterations: int
    context_window: int
    lines_read: int
    size: Complexity
    breakdown: Breakdown
    phases: list[PhaseBreakdown]
    disclaimer: str


def estimate(
    phases: Sequence[MeasuredPhase], iterations: int,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
) -> BudgetEstimate:
    """Peak tokens of one iteration, its pressure on the window, and the loop's cost band.

    peak = prompt base + 5,000 x phases + sum of weight x 10 x lines + 20,000 reasoning.
    """
    if not phases:
        raise UsageError(f"give at least one phase: {_PHASE_HINT}")
    if iterations < 1:
        raise UsageError(f"--iterations must be 1 or more, not {iterations}")
    if context_window < 1:
        raise UsageError(f"--window must be a positive token count, not {context_window}")
    rows = [_phase_breakdown(phase) for phase in phases]
    breakdown = Breakdown(
        base=PROMPT_BASE_TOKENS,
        phases=TOKENS_PER_PHASE * len(rows),
        files=sum(row.weighted_tokens for row in rows),
        reasoning=REASONING_TOKENS_PER_ITERATION,
    )
    peak = breakdown.base + breakdown.phases + breakdown.files + breakdown.reasoning
    pressure = pressure_for(peak, context_window)
    lines_read = sum(row.lines for row in rows)
    return BudgetEstimate(
        peak_tokens=peak,
        peak_percent=round(peak * 100 / context_window, 1),
        pressure=pressure,
        action=ACTIONS[pressure],
        cost_range=cost_range(iterations, pressure),
        iterations=iterations,
        context_window=context_window,
        lines_read=lines_read,
        size=size_category(lines_read),
        breakdown=breakdown,
        phases=rows,
        disclaimer=disclaimer(context_window),
    )


def _phase_breakdown(phase: MeasuredPhase) -> PhaseBreakdown:
    weight = PHASE_WEIGHTS[phase.type]
    lines = sum(file.lines for file in phase.files)
    file_tokens = lines * TOKENS_PER_LINE
    return PhaseBreakdown(
        type=phase.type, weight=weight, lines=lines, file_tokens=file_tokens,
        # Exact: the weights are halves and file_tokens a multiple of 10.
        weighted_tokens=round(weight * file_tokens), files=list(phase.files),
    )


def pressure_for(peak_tokens: int, context_window: int) -> Pressure:
    """low < 30 %, moderate 30 to under 60 %, high 60 to 80 %, critical over 80 %."""
    # Compared in integers so 60 % of the window is high, never moderate by rounding.
    scaled = peak_tokens * 100
    if scaled < 30 * context_window:
        return "low"
    if scaled < 60 * context_window:
        return "moderate"
    if scaled <= 80 * context_window:
        return "high"
    return "critical"


def cost_range(iterations: int, pressure: Pressure) -> str:
    costs = COST_ROWS[0][1]
    for first, row in COST_ROWS:
        if iterations >= first:
            costs = row
    return costs[pressure]


def size_category(lines: int) -> Complexity:
    if lines < SMALL_BELOW_LINES:
        return "small"
    if lines <= LARGE_ABOVE_LINES:
        return "medium"
    return "large"


def window_label(context_window: int) -> str:
    """200000 -> "200K", 1000000 -> "1,000K", 128500 -> "128.5K"."""
    thousands, rest = divmod(context_window, 1000)
    fraction = f"{rest:03d}".rstrip("0")
    return f"{thousands:,}" + (f".{fraction}" if fraction else "") + "K"


def disclaimer(context_window: int) -> str:
    """Seed 000's Cost Disclaimer Template, with the window in thousands of tokens."""
    return (
        "Cost estimates are order-of-magnitude approximations based on a "
        f"{context_window / 1000:g}k token context window. Actual costs vary with model "
        "choice (Sonnet vs Opus), caching behavior, codebase growth during execution, and "
        "agent reasoning patterns. Treat these as directional, not precise."
    )


def parse_phase(text: str) -> PhaseSpec:
    """`TYPE` or `TYPE:FILE,FILE,...`, each file a path or small / medium / large."""
    word, _, rest = text.partition(":")
    kind = _PHASE_TYPES.get(word.strip().lower())
    if kind is None:
        raise UsageError(f"unknown phase type {word.strip()!r}: use {_TYPES_HINT}; {_PHASE_HINT}")
    files = [item.strip() for item in rest.split(",")] if rest.strip() else []
    if any(not item for item in files):
        raise UsageError(f"empty file name in --phase {text!r}; {_PHASE_HINT}")
    return PhaseSpec(type=kind, files=files)


def load_spec(path: Path) -> BudgetSpec:
    shown = shown_name(path)
    try:
        raw = read_bytes(path, subject=f"the spec {shown}", limit=MAX_SPEC_BYTES)
    except FileProblem as err:
        if err.kind != "missing":
            raise
        raise UsageError(f"the spec {shown}: no such file; give a JSON file with phases and "
                         "iterations") from None
    try:
        data = json_text.loads(raw)
        return BudgetSpec.model_validate(data)
    except ValueError as err:
        detail = problems(err) if isinstance(err, ValidationError) else "not JSON"
        raise UsageError(
            f"the spec {shown} is invalid ({detail}); write "
            '{"phases": [{"type": "implementation", "files": ["src/a.py", "large"]}], '
            '"iterations": 12}'
        ) from None


def measure(phases: Sequence[PhaseSpec], base_dir: Path) -> list[MeasuredPhase]:
    """Count the lines of every path; a complexity word stands for a file not read yet."""
    measured = []
    for phase in phases:
        files = []
        for source in phase.files:
            complexity = _COMPLEXITIES.get(source)
            if complexity is not None:
                lines = UNREAD_FILE_LINES[complexity]
            else:
                lines = count_lines(base_dir / source, shown=source)
            files.append(FileEstimate(source=source, counted=complexity is None, lines=lines))
        measured.append(MeasuredPhase(type=phase.type, files=files))
    return measured


def count_lines(path: Path, shown: str | None = None) -> int:
    """Lines of a regular file; a last line without a newline still counts."""
    name = shown_name(shown if shown is not None else path)
    hint = "give a file that exists, or small / medium / large for one not read yet"
    try:
        data = read_bytes(path, subject=name, limit=MAX_COUNTED_BYTES)
    except FileProblem as err:
        if err.kind == "missing":
            raise UsageError(f"no file {name}; {hint}") from None
        if err.kind == "directory":
            raise UsageError(f"{name} is a directory: name its files instead, or {hint}") \
                from None
        raise UsageError(f"{err}, or small / medium / large for one not read yet") from None
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
