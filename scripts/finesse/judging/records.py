"""Judge mode's records, kept in the loop state (`LoopState.judge`): records
(`finesse.record`) checked by `finesse.schema`, like every record the Stop path reads.

An attempt is one fresh worker and the judge(s) that evaluate its result. The worker's and
the judge's JSON (seed 002's contracts, validated by `finesse.judging.contracts`) are kept
as they were given, under the contract's own field names.
"""

from __future__ import annotations

from finesse.record import Record, field
from finesse.results import CommandResult, ModelUsage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

PLUGIN = "finesse"
WORKER_TYPE = f"{PLUGIN}:ralph-worker"
JUDGE_TYPE = f"{PLUGIN}:ralph-judge"
# At most this many invalid final messages are answered with "try again" (the third ends
# the attempt as a contract failure).
CONTRACT_RETRIES = 2


class Attempt(Record):
    """One attempt. Open while `result` is "": passed, failed, contract-failure,
    no-result, or the loop's outcome when the loop ended in the middle of it."""

    number: int
    started_at: datetime
    worker_id: str = ""
    worker_started_at: datetime | None = None
    worker_ended_at: datetime | None = None
    worker: dict[str, Any] | None = None  # the worker's JSON, as given and validated
    worker_problems: list[str] = field(default_factory=list)  # contract problems, in order
    verification: list[CommandResult] = field(default_factory=list)  # the hook's own run
    verified_tree: str | None = None  # the working tree those results are about
    protect_changed: list[str] = field(default_factory=list)  # protected files changed
    judge_id: str = ""
    judge_started_at: datetime | None = None
    judge_ended_at: datetime | None = None
    judge_tree: str | None = None  # the working tree when the judge started
    verdict: dict[str, Any] | None = None  # the judge's JSON, as given and validated
    judge_problems: list[str] = field(default_factory=list)
    void: list[str] = field(default_factory=list)  # why earlier verdicts did not count
    outside_changes: list[str] = field(default_factory=list)  # files changed outside a worker
    worker_usage: list[ModelUsage] = field(default_factory=list)
    judge_usage: list[ModelUsage] = field(default_factory=list)  # the current judge's
    void_usage: list[ModelUsage] = field(default_factory=list)  # judges whose verdict is void
    ended_at: datetime | None = None
    result: str = ""
    note: str = ""  # why it ended, one line

    @property
    def open(self) -> bool:
        return not self.result

    @property
    def worker_running(self) -> bool:
        return bool(self.worker_id) and self.worker_ended_at is None

    @property
    def judge_running(self) -> bool:
        return bool(self.judge_id) and self.judge_ended_at is None

    @property
    def passed(self) -> bool:
        """The judge's verdict says pass (the loop still checks everything else)."""
        return self.verdict is not None and self.verdict.get("pass") is True

    @property
    def focus(self) -> str:
        """The judge's `next_iteration_focus`, or ""."""
        value = (self.verdict or {}).get("next_iteration_focus")
        return value if isinstance(value, str) else ""


class JudgeState(Record):
    """Judge mode's part of a loop: what the judge checks against, and every attempt."""

    criteria: list[str]
    protect: list[str] = field(default_factory=list)  # paths from the project root
    protect_snapshot: list[str] = field(default_factory=list)  # their files when it started
    attempts: list[Attempt] = field(default_factory=list)
    used_agents: list[str] = field(default_factory=list)  # every worker and judge id seen
    snapshot: list[str] = field(default_factory=list)  # changed files at the last checkpoint
    outside_changes: list[str] = field(default_factory=list)  # every change outside a worker
    main_usage: list[ModelUsage] = field(default_factory=list)  # not yet in an attempt
    activity: int = 0  # bumped by every worker or judge event; an idle stop sees none
    seen_activity: int = 0  # `activity` at the last stop of the main thread
    waiting_for: str = ""  # the background worker or judge the orchestrator waits for
    claims: int = 0  # completion claimed by the orchestrator, which never ends the loop

    @property
    def current(self) -> Attempt | None:
        """The open attempt, if there is one (it is always the last)."""
        if self.attempts and self.attempts[-1].open:
            return self.attempts[-1]
        return None

    @property
    def last(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None

    def last_verdict(self) -> Attempt | None:
        """The latest attempt that has a judge's verdict."""
        return next((a for a in reversed(self.attempts) if a.verdict is not None), None)


def merge_usage(*groups: list[ModelUsage]) -> list[ModelUsage]:
    """Token counts added up per model."""
    totals: dict[str, list[int]] = {}
    for group in groups:
        for usage in group:
            counts = totals.setdefault(usage.model, [0, 0, 0, 0])
            for index, value in enumerate((usage.input, usage.output, usage.cache_creation,
                                           usage.cache_read)):
                counts[index] += value
    return [ModelUsage(model, *counts) for model, counts in totals.items()]
