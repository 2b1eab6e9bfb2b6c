"""The loop's records: hook inputs (lenient, Claude Code adds fields) and our own state
(strict: unknown fields refused). Standard-library dataclasses, checked by finesse.schema,
because these are read on every stop of a looping session (see schema.py for why)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

from finesse import schema

Outcome = Literal[
    "success", "limit", "cancelled", "aborted", "blocked", "failure", "quiesced", "timeout",
    "budget", "quota", "error",
]
STATE_VERSION = 1
Record = TypeVar("Record")


def replace(record: Record, **changes: Any) -> Record:
    """A copy of a frozen record with some fields changed (and checked again)."""
    return dataclasses.replace(record, **changes)  # type: ignore[type-var]


def _at_least_one(record: object, *names: str) -> None:
    for name in names:
        if getattr(record, name) < 1:
            raise ValueError(name, "expected an integer >= 1")


# Bounds a loop file is checked against when it is read: a tampered or garbled number is
# corruption, never a loop that runs for 10**30 iterations.
MAX_ITERATIONS_EVER = 100_000
MAX_COUNTER = 1_000_000
MAX_TOKENS_EVER = 10**12  # --max-tokens and --max-cost take no more (finesse.loop.budgets)
MAX_COST_EVER = 1_000_000.0
MAX_OFFSET = 2**63 - 1  # a file offset


def _within(record: object, ceiling: int, *names: str) -> None:
    for name in names:
        value = getattr(record, name)
        if value is not None and not 0 <= value <= ceiling:
            raise ValueError(name, f"expected an integer from 0 to {ceiling}")


@dataclass(frozen=True)
class CommandResult:
    """One verification command's outcome.

    `exit_code` is None when the command timed out or could not start; a negative code means
    the shell itself was killed by that signal. `output_tail` is the end of stdout and stderr
    together, decoded as UTF-8 with replacement; `output_bytes` counts all of it.
    """

    command: str
    exit_code: int | None
    timed_out: bool
    duration_seconds: float
    output_tail: str
    output_bytes: int
    fingerprint: str

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True)
class GateStep:
    results: list[CommandResult]
    action: str  # committed | empty | repair | reverted | error
    commit: str | None = None
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    untouched: list[str] = field(default_factory=list)  # submodules a revert left as they are
    baseline: list[CommandResult] | None = None  # the gate on the reverted baseline
    error: str = ""

    @property
    def green(self) -> bool:
        return all(result.passed for result in self.results)


@dataclass(frozen=True)
class HookInput:
    session_id: str
    transcript_path: str | None = None
    cwd: str | None = None
    permission_mode: str | None = None
    hook_event_name: str | None = None


@dataclass(frozen=True)
class StopInput(HookInput):
    stop_hook_active: bool = False
    last_assistant_message: str | None = None


@dataclass(frozen=True)
class PromptInput(HookInput):
    prompt: str = ""


@dataclass(frozen=True)
class ModelUsage:
    """Tokens one model used in an iteration, as the API reported them."""

    model: str
    input: int = 0
    output: int = 0
    cache_creation: int = 0
    cache_read: int = 0

    @property
    def billed(self) -> int:
        """Input, cache creation and output: what --max-tokens counts (cache reads apart)."""
        return self.input + self.cache_creation + self.output


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens for a model family (a model id prefix)."""

    family: str
    input: float
    output: float
    cache_write: float
    cache_read: float


@dataclass(frozen=True)
class Quota:
    """The plan's usage windows as Claude Code's status line last reported them."""

    at: datetime
    five_hour: float | None = None  # used percentage
    five_hour_resets_at: datetime | None = None
    seven_day: float | None = None
    seven_day_resets_at: datetime | None = None


@dataclass(frozen=True)
class IterationRecord:
    """One iteration as it ended: what the agent said it did, and what was checked."""

    number: int
    started_at: datetime
    ended_at: datetime
    result: str
    reply_excerpt: str = ""
    approach: str = ""
    evidence: str = ""
    learning: str = ""
    next_action: str = ""
    verification: list[CommandResult] = field(default_factory=list)
    tool_calls: int | None = None
    tree_changed: bool | None = None
    # Gate mode: the gate's results, and what git did with the iteration.
    gate: list[CommandResult] = field(default_factory=list)
    gate_action: str = ""  # committed, empty, repair, reverted
    commit: str | None = None
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    untouched: list[str] = field(default_factory=list)  # submodules not reverted inside
    # Spend: tokens per model read from the transcript; partial when not all could be read.
    usage: list[ModelUsage] = field(default_factory=list)
    usage_partial: bool = False
    cost: float = 0.0  # estimated dollars, priced when the iteration ended

    def __post_init__(self) -> None:
        _at_least_one(self, "number")


@dataclass(frozen=True)
class ResumeRecord:
    at: datetime
    after: str  # the outcome the loop had ended with
    by: str


@dataclass(frozen=True)
class HeadlessRun:
    """How `ralph run` drives a loop: each iteration a fresh `claude -p` process (seed 003's
    standing-prompt loop) instead of one more turn of a Claude Code session. Kept in the
    state so that `ralph resume` goes on the same way."""

    claude: str = "claude"  # the CLI each iteration runs
    model: str | None = None  # --model for every iteration
    claude_args: list[str] = field(default_factory=list)  # further flags for every iteration
    iteration_timeout: int | None = None  # seconds; an iteration over it is killed
    wait_on_limit: bool = False  # wait for a usage limit's reset instead of stopping

    def __post_init__(self) -> None:
        _within(self, 7 * 24 * 3600, "iteration_timeout")


@dataclass(frozen=True)
class Notify:
    """Who is told when the loop ends (`finesse.loop.notify`), fixed when it starts."""

    targets: list[str] = field(default_factory=list)  # --notify: desktop, http(s) URLs
    commands: list[str] = field(default_factory=list)  # --notify-cmd, split with shlex


@dataclass(frozen=True)
class LoopState:
    """One loop, bound to the session that started it. Active while `outcome` is None."""

    loop_id: str
    session_id: str
    project_root: str
    prompt: str
    promise: str
    max_iterations: int
    started_at: datetime
    updated_at: datetime
    iteration_started_at: datetime
    version: Literal[1] = 1
    iteration: int = 1
    verify: list[str] = field(default_factory=list)
    prompt_file: str | None = None
    promise_file: str | None = None
    last_reply_excerpt: str = ""
    iterations: list[IterationRecord] = field(default_factory=list)
    outcome: Outcome | None = None
    ended_at: datetime | None = None
    end_message: str = ""
    ended_by: str = ""  # who ended it from outside: /cancel-ralph, `ralph cancel`, /clear...
    verified: bool | None = None  # a success: backed by green checks, or on the agent's word
    # The written plan and the protocol's counters.
    plan_file: str | None = None
    notebook: str | None = None  # where attempts and the review are written: the plan, or
    # a tasks/todo.md with the seed's headings
    quiesce_after: int = 2
    timeout_minutes: int | None = None
    deadline_at: datetime | None = None
    baseline_commit: str | None = None
    tree_fingerprint: str | None = None
    idle_iterations: int = 0
    last_reply_digest: str = ""
    failure_fingerprint: str = ""
    failure_streak: int = 0
    replans: int = 0
    last_verification: list[CommandResult] = field(default_factory=list)
    learnings: list[str] = field(default_factory=list)
    blocker: str = ""
    resumes: list[ResumeRecord] = field(default_factory=list)
    report_path: str = ""
    forced_past: list[str] = field(default_factory=list)  # checks /finesse-execute --force skipped
    dirty_at_start: list[str] = field(default_factory=list)  # files already changed, with stats
    # Gate mode: commit on green, one repair on red, revert when still red.
    gate: list[str] = field(default_factory=list)
    effort: str | None = None
    snapshot_commit: str | None = None
    iteration_base: str | None = None
    gate_branch: str | None = None  # the branch a gate loop commits on (refs/heads/...)
    # Spend: budgets, and the prices the estimate uses (the package's table, or the
    # project's from .finesse/config.json, fixed when the loop starts).
    max_tokens: int | None = None
    max_cost: float | None = None
    stop_at_quota: int | None = None
    prices: list[Price] = field(default_factory=list)
    # Where the transcript was read to at the last stop (support/usage.Cursor).
    transcript_offset: int | None = None
    transcript_identity: str = ""
    recent_message_ids: list[str] = field(default_factory=list)
    repairing: bool = False
    red_streak: int = 0
    empty_iterations: int = 0
    # Judge mode: finesse.judging.records.JudgeState as JSON, checked by that module (a
    # field of that type here would make an import circle).
    judge: dict[str, Any] | None = None
    # Run headless by `ralph run`, not by a Claude Code session's Stop hook.
    headless: HeadlessRun | None = None
    notify: Notify | None = None  # told when it ends; None: nobody

    def __post_init__(self) -> None:
        _at_least_one(self, "max_iterations", "iteration", "quiesce_after")
        _within(self, MAX_ITERATIONS_EVER, "max_iterations")
        _within(self, self.max_iterations + 1, "iteration")
        _within(self, 7, "quiesce_after")
        _within(self, 7 * 24 * 60, "timeout_minutes")
        _within(self, MAX_COUNTER, "idle_iterations", "failure_streak", "replans",
                "red_streak", "empty_iterations")
        _within(self, MAX_TOKENS_EVER, "max_tokens")
        _within(self, 100, "stop_at_quota")
        _within(self, MAX_OFFSET, "transcript_offset")
        if self.max_cost is not None and not 0 <= self.max_cost <= MAX_COST_EVER:  # NaN too
            raise ValueError("max_cost", f"expected an amount from 0 to {MAX_COST_EVER:.0f}")

    @classmethod
    def from_json(cls, raw: str | bytes) -> LoopState:
        return schema.from_json(cls, raw)

    def to_json(self) -> str:
        return schema.to_json(self)
