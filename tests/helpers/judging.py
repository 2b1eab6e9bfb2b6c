"""Judge-mode states, contract objects and whole attempts, for the pure tests (steps,
decide, prompts, report) and the hook tests."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from finesse.judging import steps
from finesse.judging.decide import StopView
from finesse.judging.records import JudgeState, judge_of, with_judge
from finesse.models import CommandResult, LoopState
from tests.helpers.states import T0, command_result, make_state

VERIFY = "pytest -q"
CRITERIA = ["GET /reports/1.csv returns 200 and text/csv", "existing tests still pass"]
WORKER: dict[str, Any] = {
    "summary": "Added the CSV route.",
    "changes": ["src/reports.py: GET /reports/<id>.csv"],
    "verifier_runs": [{"cmd": VERIFY, "status": "pass", "output_excerpt": "3 passed"}],
    "remaining_known_failures": [],
    "next_suggestions": [],
}
FAIL: dict[str, Any] = {
    "pass": False, "score": 40, "blocking_issues": ["text/csv header missing"],
    "non_blocking_issues": [], "required_actions": ["set Content-Type: text/csv"],
    "evidence": ["pytest -q: 1 failed"],
    "next_iteration_focus": "Set the Content-Type header of the CSV route.",
}
PASS: dict[str, Any] = {
    "pass": True, "score": 95, "blocking_issues": [], "non_blocking_issues": [],
    "required_actions": [], "evidence": ["pytest -q: 4 passed", "curl: text/csv"],
    "next_iteration_focus": "None: done.",
}


def green(command: str = VERIFY) -> CommandResult:
    return command_result(command, 0, "4 passed")


def red(command: str = VERIFY) -> CommandResult:
    return command_result(command, 1, "FAILED tests/test_csv.py::test_header")


def judge_loop(root: Path | str = "/project", **overrides: Any) -> LoopState:
    """A judge-mode loop as it starts: cap 100, one verifier, two criteria."""
    judge = overrides.pop("judge_state", JudgeState(criteria=list(CRITERIA)))
    fields: dict[str, Any] = {"max_iterations": 100, "verify": [VERIFY]}
    fields.update(overrides)
    return with_judge(make_state(Path(root), **fields), judge)


def at(minutes: int, tree: str | None = "tree-0", changed: list[str] | None = None
       ) -> steps.Seen:
    return steps.Seen(T0 + timedelta(minutes=minutes), tree, changed or [])


def view(minutes: int, tree: str | None = "tree-0", **fields: Any) -> StopView:
    return StopView(now=T0 + timedelta(minutes=minutes), tree=tree, **fields)


def attempt(state: LoopState, worker: str, judge: str, verdict: dict[str, Any],
            verification: list[CommandResult] | None = None, minute: int = 0,
            tree: str = "tree-0") -> LoopState:
    """One whole attempt through the steps: worker start and result, the hook's verifiers,
    judge start and verdict, on an unchanged tree `tree`."""
    state = steps.worker_start(state, worker, at(minute, tree)).state
    state = steps.worker_done(state, dict(WORKER), at(minute + 1, tree),
                              verification or [green()], [], []).state
    state = steps.judge_start(state, judge, at(minute + 2, tree)).state
    return steps.judge_done(state, dict(verdict), at(minute + 3, tree), []).state


def judge(state: LoopState) -> JudgeState:
    return judge_of(state)

