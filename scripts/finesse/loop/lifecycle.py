"""Starting, cancelling and describing loops: shared by the hooks and the `ralph` CLI."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from finesse.engine import RESUMABLE, end_loop, excerpt, iteration_header, protocol_notes
from finesse.errors import FinesseError, UsageError
from finesse.loop import report
from finesse.loop.todo import edit as todo
from finesse.models import IterationRecord, LoopState, ResumeRecord, replace
from finesse.state.store import LoopStore
from finesse.support import git as gitstate
from finesse.support.files import write_atomic

if TYPE_CHECKING:  # the grammar is not needed on the Stop path
    from finesse.loop.grammar import ResumeRequest
    from finesse.loop.request import StartRequest


def new_loop_id(session_id: str, now: datetime) -> str:
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{session_id[:8]}-{os.urandom(3).hex()}"


def start_loop(
    store: LoopStore, session_id: str, request: StartRequest, now: datetime,
    forced_past: Sequence[str] = (),
) -> LoopState:
    """Create this session's loop; the caller holds the session lock."""
    if store.paths.kill_switch.exists():
        raise UsageError(
            f"the kill switch {store.paths.kill_switch} exists, so every loop of this project "
            "stops at once: delete it to start loops again"
        )
    running = store.load(session_id)
    if running is not None:
        raise UsageError(
            f"a Ralph loop is already running in this session (iteration "
            f"{running.iteration}/{running.max_iterations}): /cancel-ralph first"
        )
    loop_id = new_loop_id(session_id, now)
    store.paths.loop_done_file(session_id).unlink(missing_ok=True)  # a stale signal
    snapshot = base = None
    if request.gate:
        from finesse.loop.gate import commits as gate_git

        gate_git.check_can_gate(store.paths.root, allow_dirty=request.allow_dirty)
        if request.allow_dirty:
            snapshot = gate_git.snapshot(store.paths.root,
                                         f"ralph: snapshot before loop {loop_id}")
        base = gate_git.head_sha(store.paths.root)
    state = LoopState(
        loop_id=loop_id,
        session_id=session_id,
        project_root=str(store.paths.root),
        prompt=request.prompt,
        promise=request.promise,
        max_iterations=request.max_iterations,
        verify=list(request.verify),
        prompt_file=request.prompt_file,
        promise_file=request.promise_file,
        started_at=now,
        updated_at=now,
        iteration_started_at=now,
        plan_file=request.plan_file,
        quiesce_after=request.quiesce_after,
        timeout_minutes=request.timeout_minutes,
        deadline_at=(now + timedelta(minutes=request.timeout_minutes)
                     if request.timeout_minutes else None),
        baseline_commit=(baseline := gitstate.head(store.paths.root)),
        dirty_at_start=gitstate.dirty_snapshot(store.paths.root, baseline),
        tree_fingerprint=gitstate.tree_fingerprint(store.paths.root),
        forced_past=list(forced_past),
        gate=list(request.gate),
        effort=request.effort,
        snapshot_commit=snapshot,
        iteration_base=base,
    )
    store.save(state)
    return state


def _edit_plan(store: LoopStore, state: LoopState, change: list[tuple[str, str]]) -> None:
    """Apply plan edits (("attempt" | "note" | "review", markdown)); a plan that vanished or
    cannot be written is logged, never fatal: the loop's record is in its state anyway."""
    if not state.plan_file or not change:
        return
    path = Path(state.plan_file)
    path = path if path.is_absolute() else store.paths.root / path
    try:
        text = path.read_text(encoding="utf-8")
        for kind, markdown in change:
            if kind == "attempt":
                text = todo.append_attempt(text, markdown)
            elif kind == "note":
                text = todo.append_review_note(text, markdown)
            else:
                text = todo.write_review(text, markdown)
        mode = path.stat().st_mode
        write_atomic(path, text)
        os.chmod(path, mode & 0o7777)
    except (OSError, UnicodeDecodeError, FinesseError) as err:
        store.log(f"loop {state.loop_id}: could not write the plan {path}: {err}")


def record_iteration(store: LoopStore, state: LoopState, record: IterationRecord,
                     notes: list[str]) -> LoopState:
    """After an iteration that goes on: its entry in the plan, and the working tree's new
    fingerprint, taken after that write so the plugin's own edit never counts as change."""
    if not state.plan_file:
        return state
    _edit_plan(store, state, [("attempt", report.attempt_entry(record)),
                              *(("note", note) for note in notes)])
    return replace(state, tree_fingerprint=gitstate.tree_fingerprint(store.paths.root))


def finish(store: LoopStore, state: LoopState, notes: Sequence[str] = ()) -> str:
    """End a loop for good: the plan's last entry and review, the report, the archive.
    Returns the banner for the user. The caller holds the session lock."""
    files = gitstate.changed_by_loop(store.paths.root, state.baseline_commit,
                                     state.dirty_at_start)
    edits: list[tuple[str, str]] = []
    if state.iterations and state.iterations[-1].ended_at == state.ended_at:
        edits.append(("attempt", report.attempt_entry(state.iterations[-1])))
    edits += [("note", note) for note in notes]
    edits.append(("review", report.review_text(state, files)))
    _edit_plan(store, state, edits)
    target = store.paths.reports / f"{state.loop_id}.md"
    state = replace(state, report_path=str(target))
    write_atomic(target, report.render_report(state, files))
    store.archive(state)
    return report.banner(state, str(target.relative_to(store.paths.root)))


def cancel_loop(store: LoopStore, session_id: str, now: datetime, by: str) -> LoopState | None:
    """Archive this session's loop as cancelled; None when it has none. Caller holds the lock."""
    state = store.load(session_id)
    if state is None:
        return None
    message = f"Ralph loop cancelled by {by} at iteration {state.iteration}/{state.max_iterations}."
    ended = replace(end_loop(state, "cancelled", message, now), ended_by=by)
    finish(store, ended)
    return ended


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
                by: str) -> LoopState:
    """Reopen an ended loop with its history and counters; the caller holds the lock of its
    session. The cap rises to --max-iterations, or by the loop's own cap when it was used
    up; a timeout gets a fresh window."""
    if store.load(previous.session_id) is not None:
        raise UsageError("a Ralph loop is already running in that session: /cancel-ralph first")
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
    reopened = replace(
        previous,
        outcome=None, ended_at=None, end_message="", ended_by="", blocker="", report_path="",
        iteration=made + 1, max_iterations=cap, iteration_started_at=now, updated_at=now,
        timeout_minutes=minutes,
        deadline_at=now + timedelta(minutes=minutes) if minutes else None,
        # A person looked at it: stuck counters start again, the re-plans used stay used.
        idle_iterations=0, last_reply_digest="", failure_streak=0, failure_fingerprint="",
        tree_fingerprint=gitstate.tree_fingerprint(store.paths.root),
        # Gate mode starts again from what is committed now: a person may have committed
        # since, and a revert must never undo their work.
        iteration_base=(gitstate.head(store.paths.root) if previous.gate
                        else previous.iteration_base),
        repairing=False,
        resumes=[*previous.resumes, ResumeRecord(at=now, after=previous.outcome or "", by=by)],
    )
    store.save(reopened)
    return reopened


def start_context(state: LoopState) -> str:
    """What the model is told when a loop starts: the task, verbatim, under the header."""
    return (
        "A Ralph loop is running in this session (finesse plugin). You will be given the same "
        "task again each time you stop, until you output the completion promise or the "
        "iteration cap is reached.\n\n"
        f"{iteration_header(state)}\n\n"
        "The task, verbatim:\n"
        "<ralph-task>\n"
        f"{state.prompt}\n"
        "</ralph-task>\n\n"
        f"{protocol_notes(state)}"
    )


def describe(state: LoopState, now: datetime, *, history: bool = False) -> str:
    """A few lines about one active loop, for /ralph-status and `ralph status`."""
    minutes = int((now - state.started_at).total_seconds() // 60)
    lines = [
        f"Ralph loop {state.loop_id}: iteration {state.iteration}/{state.max_iterations}, "
        f"promise <promise>{state.promise}</promise>, running {minutes} min "
        f"(session {state.session_id})",
        f"task: {excerpt(state.prompt, 120)}",
    ]
    if state.verify:
        lines.append("verify: " + "; ".join(state.verify))
    if state.last_reply_excerpt:
        lines.append(f"last reply: {excerpt(state.last_reply_excerpt, 160)}")
    if history:
        for record in state.iterations:
            line = f"  iteration {record.number}: {record.result}"
            if record.approach:
                line += f" - {excerpt(record.approach, 100)}"
            red = [result.command for result in record.verification if not result.passed]
            if record.verification:
                line += f" [verify {'red: ' + ', '.join(red) if red else 'green'}]"
            lines.append(line)
    return "\n".join(lines)
