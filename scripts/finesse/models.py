"""The loop's records: hook inputs (lenient, Claude Code adds fields) and our own state
(strict: unknown fields refused). `finesse.record` records checked by `finesse.schema`,
because these are read on every stop of a looping session.

`LoopState` is one loop bound to the session that started it, composed of its parts: the
task and its counters at the top, then each concern in its own record (`Budgets`, the
transcript's `Cursor`, gate mode's `Gate`, judge mode's `JudgeState`, a headless run's
`HeadlessRun`). The state file's format has a version; a file of an older version is
migrated when it is read (`migrate`), so a loop started before an upgrade goes on.
"""

from __future__ import annotations

import json

from finesse import schema
from finesse.judging.records import JudgeState
from finesse.record import Record, field
from finesse.results import CommandResult, Cursor, ModelUsage, Price

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any, Literal, TypeAlias

Outcome: TypeAlias = (
    "Literal['success', 'limit', 'cancelled', 'aborted', 'blocked', 'failure', 'quiesced', "
    "'timeout', 'budget', 'quota', 'error']")
STATE_VERSION = 2


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


class HookInput(Record):
    """What every hook event's input carries (Claude Code adds more: ignored)."""

    session_id: str
    transcript_path: str | None = None
    cwd: str | None = None
    permission_mode: str | None = None
    hook_event_name: str | None = None


class StopInput(HookInput):
    """A Stop's input. `agent_id` is set only inside a subagent; `background_tasks` lists
    what still runs (judge mode's agents among them), whatever shape Claude Code gives it."""

    stop_hook_active: bool = False
    last_assistant_message: str | None = None
    agent_id: Any = None
    background_tasks: Any = None


class PromptInput(HookInput):
    """A UserPromptSubmit's input: the raw typed prompt."""

    prompt: str = ""


class IterationRecord(Record):
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


class ResumeRecord(Record):
    """A resume of an ended loop: when, after which outcome, by whom."""

    at: datetime
    after: str  # the outcome the loop had ended with
    by: str


class RunningAgent(Record):
    """The `claude -p` an iteration of `ralph run` started, recorded while it may run: what
    `ralph resume` (or any later driver of the loop) needs to end it when the `ralph run` that
    started it died, and to tell it from a later process given the same pid."""

    pid: int
    identity: str  # finesse.support.processes.process_identity when it started


class HeadlessRun(Record):
    """How `ralph run` drives a loop: each iteration a fresh `claude -p` process (seed 003's
    standing-prompt loop) instead of one more turn of a Claude Code session. Kept in the
    state so that `ralph resume` goes on the same way."""

    claude: str = "claude"  # the CLI each iteration runs
    model: str | None = None  # --model for every iteration
    claude_args: list[str] = field(default_factory=list)  # further flags for every iteration
    iteration_timeout: int | None = None  # seconds; an iteration over it is killed
    wait_on_limit: bool = False  # wait for a usage limit's reset instead of stopping
    agent: RunningAgent | None = None  # the iteration's agent, while it may be running

    def __post_init__(self) -> None:
        _within(self, 7 * 24 * 3600, "iteration_timeout")


class Budgets(Record):
    """--max-tokens, --max-cost (US dollars, estimated) and --stop-at-quota (a percentage of
    the plan's five-hour or weekly window); None where the loop has no such budget."""

    max_tokens: int | None = None
    max_cost: float | None = None
    stop_at_quota: int | None = None

    def __post_init__(self) -> None:
        _within(self, MAX_TOKENS_EVER, "max_tokens")
        _within(self, 100, "stop_at_quota")
        if self.max_cost is not None and not 0 <= self.max_cost <= MAX_COST_EVER:  # NaN too
            raise ValueError("max_cost", f"expected an amount from 0 to {MAX_COST_EVER:.0f}")


class Gate(Record):
    """Gate mode's part of a loop: commit on green, one repair on red, revert when still red
    (seed 003). `iteration_base` is the commit the next revert goes back to."""

    commands: list[str]
    branch: str | None = None  # the branch the loop commits on (refs/heads/...)
    iteration_base: str | None = None
    snapshot_commit: str | None = None  # --allow-dirty's snapshot of the tree at the start
    repairing: bool = False
    red_streak: int = 0
    empty_iterations: int = 0

    def __post_init__(self) -> None:
        _within(self, MAX_COUNTER, "red_streak", "empty_iterations")


class Notify(Record):
    """Who is told when the loop ends (`finesse.loop.notify`), fixed when it starts."""

    targets: list[str] = field(default_factory=list)  # --notify: desktop, http(s) URLs
    commands: list[str] = field(default_factory=list)  # --notify-cmd, split with shlex


class LoopState(Record):
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
    version: Literal[2] = 2
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
    effort: str | None = None
    # Spend: the budgets, and the prices the estimate uses (the package's table, or the
    # project's from .finesse/config.json, fixed when the loop starts).
    budgets: Budgets = field(default_factory=Budgets)
    prices: list[Price] = field(default_factory=list)
    cursor: Cursor | None = None  # where the transcript was read to at the last stop
    gate: Gate | None = None  # gate mode
    judge: JudgeState | None = None  # judge mode
    headless: HeadlessRun | None = None  # run by `ralph run`, not by a session's Stop hook
    notify: Notify | None = None  # told when it ends; None: nobody

    def __post_init__(self) -> None:
        _at_least_one(self, "max_iterations", "iteration", "quiesce_after")
        _within(self, MAX_ITERATIONS_EVER, "max_iterations")
        _within(self, self.max_iterations + 1, "iteration")
        _within(self, 7, "quiesce_after")
        _within(self, 7 * 24 * 60, "timeout_minutes")
        _within(self, MAX_COUNTER, "idle_iterations", "failure_streak", "replans")
        if self.cursor is not None and not 0 <= self.cursor.offset <= MAX_OFFSET:
            raise ValueError("cursor.offset", f"expected an integer from 0 to {MAX_OFFSET}")

    @classmethod
    def from_json(cls, raw: str | bytes) -> LoopState:
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as err:
            raise schema.SchemaError("", f"not valid JSON ({err})") from None
        except RecursionError:
            raise schema.SchemaError("", "nested too deeply to be a loop state") from None
        return schema.from_dict(cls, migrate(data))

    def to_json(self) -> str:
        return schema.to_json(self)


def judge_of(state: LoopState) -> JudgeState:
    """Judge mode's part of a loop; a loop that is not in judge mode has none: ValueError."""
    if state.judge is None:
        raise ValueError("not a judge-mode loop")
    return state.judge


# Version 1 kept every part flat in the state itself (the fields on the left).
_V1_CURSOR = ("transcript_offset", "transcript_identity", "recent_message_ids")
_V1_BUDGETS = ("max_tokens", "max_cost", "stop_at_quota")
_V1_GATE = {"gate": "commands", "gate_branch": "branch", "iteration_base": "iteration_base",
            "snapshot_commit": "snapshot_commit", "repairing": "repairing",
            "red_streak": "red_streak", "empty_iterations": "empty_iterations"}


def migrate(data: Any) -> Any:
    """A state file's JSON in today's format (`STATE_VERSION`). A version 1 file has its
    parts flat: they are gathered into their records. Anything else is left for the schema
    to judge (a later version, a file that is no state at all)."""
    if not isinstance(data, dict) or data.get("version") != 1:
        return data
    flat = dict(data)
    flat["version"] = 2
    offset = flat.pop("transcript_offset", None)
    identity = flat.pop("transcript_identity", "")
    recent = flat.pop("recent_message_ids", [])
    if offset is not None:
        flat["cursor"] = {"offset": offset, "identity": identity, "recent_ids": recent}
    budgets = {name: flat.pop(name) for name in _V1_BUDGETS if name in flat}
    if budgets:
        flat["budgets"] = budgets
    gate = {new: flat.pop(old) for old, new in _V1_GATE.items() if old in flat}
    if gate.get("commands"):
        flat["gate"] = gate
    else:
        flat.pop("gate", None)
    return flat
