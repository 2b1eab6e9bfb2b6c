"""Reopening an ended loop: the latest resumable one of a session or project, and the
reopened state with its history, counters and raised limits. The caller holds the lock of
the loop's session."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from finesse.engine import RESUMABLE
from finesse.errors import UsageError
from finesse.loop import judge_watch
from finesse.loop.lifecycle import first_cursor
from finesse.loop.neighbours import refuse_beside
from finesse.models import Budgets, HeadlessRun, LoopState, ResumeRecord
from finesse.record import replace
from finesse.spend import over_budget, raised_budgets
from finesse.state.store import LoopStore
from finesse.support import git as gitstate

if TYPE_CHECKING:
    from finesse.loop.grammar import ResumeRequest


def latest_resumable(store: LoopStore, session_id: str | None) -> LoopState:
    """The most recently ended loop of the session (or of the project), if it may resume."""
    ended = [loop for loop in store.history()
             if session_id is None or loop.session_id == session_id]
    if not ended:
        where = "this session" if session_id else "this project"
        raise UsageError(f"no ended Ralph loop in {where} to resume; start one with /ralph-loop")
    latest = max(ended, key=lambda loop: loop.ended_at or loop.updated_at)
    if latest.outcome not in RESUMABLE:
        raise UsageError(
            f"the last loop ({latest.loop_id}) ended in {latest.outcome}, which cannot be "
            "resumed: start a new one with /ralph-loop"
        )
    return latest


def resume_loop(store: LoopStore, previous: LoopState, request: ResumeRequest, now: datetime,
                by: str, transcript: Path | None = None,
                headless: HeadlessRun | None = None) -> LoopState:
    """Reopen an ended loop with its history and counters; the caller holds the lock of its
    session. The cap rises to --max-iterations, or by the loop's own cap when it was used
    up; a timeout gets a fresh window; a budget that is spent must be raised (refused
    otherwise: the loop would stop again at once). Gate mode goes on from the branch and
    commit HEAD is on now: a person may have committed or switched since. `headless`: how
    a headless loop runs from now on (`ralph resume --claude-bin`), saved with the rest in
    one write, so a kill can never leave the loop reopened with the old settings."""
    if store.load(previous.session_id) is not None:
        raise UsageError("a Ralph loop is already running in that session: /cancel-ralph first")
    refuse_beside(store, previous.session_id, gate=bool(previous.gate))
    store.clear_request(previous.session_id)  # see start_loop
    made = previous.iteration
    cap = previous.max_iterations
    if request.max_iterations is not None:
        if request.max_iterations <= made:
            raise UsageError(
                f"--max-iterations {request.max_iterations} leaves no room: the loop has made "
                f"{made} iterations; give a larger number, e.g. {made + previous.max_iterations}"
            )
        cap = request.max_iterations
    elif made >= cap:
        cap = made + previous.max_iterations
    minutes = request.timeout_minutes or previous.timeout_minutes
    budgets = request.budgets
    gate = previous.gate
    if gate is not None:
        from finesse.loop.gate import commits as gate_git

        branch = gate_git.current_branch(store.paths.root)
        if branch is None:
            raise UsageError("HEAD is detached, and gate mode commits each green iteration on "
                             "a branch: switch to one (`git switch <branch>`), then resume")
        # Gate mode starts again from what is committed now, on the branch the person
        # chose: they may have committed since, and a revert must never undo their work.
        gate = replace(gate, iteration_base=gitstate.head(store.paths.root), branch=branch,
                       repairing=False)
    cursor = first_cursor(transcript)
    reopened = replace(
        previous,
        outcome=None, ended_at=None, end_message="", ended_by="", blocker="", report_path="",
        iteration=made + 1, max_iterations=cap, iteration_started_at=now, updated_at=now,
        timeout_minutes=minutes,
        deadline_at=now + timedelta(minutes=minutes) if minutes else None,
        # A person looked at it: stuck counters start again, the re-plans used stay used.
        idle_iterations=0, last_reply_digest="", failure_streak=0, failure_fingerprint="",
        tree_fingerprint=gitstate.tree_fingerprint(store.paths.root),
        gate=gate,
        budgets=Budgets(
            max_tokens=budgets.max_tokens or previous.budgets.max_tokens,
            max_cost=budgets.max_cost or previous.budgets.max_cost,
            stop_at_quota=budgets.stop_at_quota or previous.budgets.stop_at_quota),
        cursor=cursor if cursor is not None else previous.cursor,
        resumes=[*previous.resumes, ResumeRecord(at=now, after=previous.outcome or "", by=by)],
        headless=headless if headless is not None else previous.headless,
    )
    spent = over_budget(reopened)
    if spent:
        raise UsageError(f"the loop's budget is still spent ({spent}): resume with a larger "
                         f"one, e.g. {' '.join(raised_budgets(reopened))}")
    if reopened.judge is not None:
        # Marked before the save, as a start marks before its save: killed between the
        # two, a marker with no loop is ignored by every hook, a judge loop without its
        # marker would go unguarded (the hot hooks look for the marker alone).
        judge_watch.mark(store.paths, reopened.session_id)
    store.save(reopened)
    return reopened


