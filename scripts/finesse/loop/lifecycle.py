"""A loop's life: start, finish (notebook, report, archive), cancel or abort (resume is in
`finesse.loop.resume`, the neighbours a loop may not have in `finesse.loop.neighbours`).
Shared by the hooks and the `ralph` CLI; the caller holds the session's lock."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from finesse.engine import ABORTED_BY, RESUMABLE, end_loop
from finesse.errors import UsageError
from finesse.loop import final_report, notebook
from finesse.loop.final_report import EndFacts
from finesse.loop.neighbours import refuse_beside
from finesse.models import Gate, LoopState, Outcome
from finesse.record import Record, replace
from finesse.results import Cursor
from finesse.state.store import LockBusy, LoopStore
from finesse.support import git as gitstate
from finesse.support.usage import start_cursor
from finesse.support.writes import write_atomic

if TYPE_CHECKING:  # the grammar is not needed on the Stop path
    from finesse.loop.request import StartRequest


def new_loop_id(session_id: str, now: datetime) -> str:
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{session_id[:8]}-{os.urandom(3).hex()}"


def first_cursor(transcript: Path | None) -> Cursor | None:
    """Where the transcript ends now: the first stop counts usage from there. A session's
    first prompt comes before its transcript exists: then from the start of the file that
    appears (an empty identity matches any file). None: nothing to count from (no
    transcript given, or something there that is not a regular file)."""
    if transcript is None:
        return None
    cursor = start_cursor(transcript)
    if cursor is None and not os.path.lexists(transcript):
        return Cursor(0, "")
    return cursor


def start_loop(
    store: LoopStore, session_id: str, request: StartRequest, now: datetime,
    forced_past: Sequence[str] = (), transcript: Path | None = None,
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
    refuse_beside(store, session_id, gate=bool(request.gate))
    notebook = request.notebook
    if notebook and not request.plan_file and any(
            other.notebook == notebook for other in store.active_loops()
            if other.session_id != session_id):
        notebook = None  # another session's loop records its attempts there: one each
    loop_id = new_loop_id(session_id, now)
    store.paths.loop_done_file(session_id).unlink(missing_ok=True)  # a stale signal
    store.clear_request(session_id)  # a cancel meant for a loop that ended meanwhile
    snapshot = base = branch = None
    if request.gate:
        from finesse.loop.gate import commits as gate_git

        gate_git.check_can_gate(store.paths.root, allow_dirty=request.allow_dirty)
        if request.allow_dirty:
            snapshot = gate_git.snapshot(store.paths.root,
                                         f"ralph: snapshot before loop {loop_id}")
        base = gate_git.head_sha(store.paths.root)
        branch = gate_git.current_branch(store.paths.root)
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
        notebook=notebook,
        quiesce_after=request.quiesce_after,
        timeout_minutes=request.timeout_minutes,
        deadline_at=(now + timedelta(minutes=request.timeout_minutes)
                     if request.timeout_minutes else None),
        baseline_commit=(baseline := gitstate.head(store.paths.root)),
        dirty_at_start=gitstate.dirty_snapshot(store.paths.root, baseline),
        tree_fingerprint=gitstate.tree_fingerprint(store.paths.root),
        forced_past=list(forced_past),
        gate=(Gate(list(request.gate), branch=branch, iteration_base=base,
                   snapshot_commit=snapshot) if request.gate else None),
        effort=request.effort,
        budgets=request.budgets,
        prices=list(request.prices),
        cursor=first_cursor(transcript),
        notify=request.notify,
    )
    if request.judge:
        from finesse.loop import judge_watch

        state = judge_watch.start(store.paths, state, request.criteria, request.protect)
    store.save(state)
    return state


def end_facts(store: LoopStore, state: LoopState) -> EndFacts:
    """What the loop changed in the project (its notebook aside: those are the plugin's own
    writes), for the review, the report and the banner."""
    root = store.paths.root
    files = gitstate.changed_by_loop(root, state.baseline_commit, state.dirty_at_start)
    files = [name for name in files if name != state.notebook]
    state_file = store.paths.history / f"{state.loop_id}.json"
    return EndFacts(
        files=files,
        lines=gitstate.line_changes(root, state.baseline_commit, files),
        is_repository=state.baseline_commit is not None,
        state_file=str(state_file.relative_to(root)),
        scope=str(root),
    )


def finish(store: LoopStore, state: LoopState, notes: Sequence[str] = ()) -> str:
    """End a loop for good: the notebook's last entry and review, the report and the HTML
    report, the archive, then the notifications (`finesse.loop.afterwards`). Returns the
    banner for the user."""
    # Judge mode's parts are imported only by the stops that end a loop: the Stop hook
    # imports this module on every stop.
    from finesse.judging.report_sections import judge_banner, judge_report
    from finesse.loop import judge_watch

    facts = end_facts(store, state)
    edits: list[tuple[str, str]] = []
    if state.iterations and state.iterations[-1].ended_at == state.ended_at:
        edits.append(("attempt", notebook.attempt_entry(state.iterations[-1])))
    edits += [("note", note) for note in notes]
    edits.append(("review", notebook.review_text(state, facts)))
    notebook.edit(store, state, edits)
    target = store.paths.reports / f"{state.loop_id}.md"
    state = replace(state, report_path=str(target))
    shown = str(target.relative_to(store.paths.root))
    try:
        write_atomic(target, final_report.render_report(state, facts) + judge_report(state))
    except OSError as err:  # a report folder that is not one: the loop still ends
        why = ("its folder is not a folder" if isinstance(
            err, FileExistsError | NotADirectoryError) else err.strerror or str(err))
        store.log(f"the report of loop {state.loop_id} was not written to {target}: {why}")
        state = replace(state, report_path="")
        shown = f"not written ({why}); the ended loop's record is {facts.state_file}"
    from finesse.loop.afterwards import tell
    from finesse.loop.html.files import write_loop_html

    # Every report before the archive: once the history holds the loop, nothing runs its
    # ending again, so a kill after the archive must find them written.
    html = write_loop_html(store, state, facts)
    store.archive(state)
    judge_watch.unmark(store.paths, state.session_id)
    tell(store, state, html)  # the notifications
    return final_report.banner(state, facts, shown) + judge_banner(state)


def cancel_loop(store: LoopStore, session_id: str, now: datetime, by: str) -> LoopState | None:
    """End this session's loop at once: cancelled, or aborted when `by` is an abort (never
    resumable); None when it has none."""
    state = store.load(session_id)
    if state is None:
        return None
    outcome: Outcome = "aborted" if by in ABORTED_BY else "cancelled"
    message = (f"Ralph loop {outcome} by {by} at iteration "
               f"{state.iteration}/{state.max_iterations}.")
    state = _with_interrupted_step(store, state, now, outcome)
    ended = replace(end_loop(state, outcome, message, now), ended_by=by)
    finish(store, ended)
    if state.gate is not None:
        from finesse.state.intents import Intents

        Intents(store.paths).clear(session_id)  # its step, if any, is finished and recorded
    return ended


def _with_interrupted_step(store: LoopStore, state: LoopState, now: datetime,
                           outcome: Outcome) -> LoopState:
    """The state with the iteration whose gate step a kill interrupted recorded, that step
    finished first (`finesse.loop.observe.interrupted_step`): a cancel after a killed stop
    must not end the loop on a half-reverted tree, nor leave out an iteration git has
    committed. The state as it is when no step was interrupted."""
    from finesse.loop.observe import interrupted_step

    step = interrupted_step(state, store)
    if step is None:
        return state
    from finesse.recording import Observation, record

    return record(state, Observation(reply=None, now=now, gate=step,
                                     tree_fingerprint=gitstate.tree_fingerprint(
                                         store.paths.root)), outcome)


def abort_ended(store: LoopStore, session_id: str, now: datetime, by: str) -> LoopState | None:
    """Give up on this session's latest ended loop that could still be resumed: it is
    marked aborted in its history and can no longer be resumed. None when there is none."""
    ended = [loop for loop in store.history() if loop.session_id == session_id]
    if not ended:
        return None
    latest = max(ended, key=lambda loop: loop.ended_at or loop.updated_at)
    if latest.outcome not in RESUMABLE:
        return None
    aborted = replace(latest, outcome="aborted", ended_by=by, updated_at=now,
                      end_message=f"{latest.end_message} Then aborted by {by}.")
    store.archive(aborted)
    return aborted


class Stopped(Record):
    """What a cancel or an abort did: ended the running loop, recorded the request for a
    stop that held the lock, gave up an ended loop, or found nothing to stop."""

    ended: LoopState | None = None
    requested: bool = False
    given_up: LoopState | None = None


# How long a cancel waits for the loop's lock before it leaves its request to the stop that
# holds it: far longer than a stop's own work, far shorter than the checks it may be running.
CANCEL_WAIT_SECONDS = 2.0


def stop_loop(store: LoopStore, session_id: str, now: datetime, by: str) -> Stopped:
    """Cancel (or abort) this session's loop now, taking its lock. A cancel must win, at
    once: while a stop holds the lock (running its checks) the request is recorded, and
    that stop ends the loop as soon as they return."""
    waiting = LoopStore(store.paths, min(store.lock_timeout, CANCEL_WAIT_SECONDS))
    try:
        with waiting.locked(session_id):
            ended = cancel_loop(store, session_id, now, by=by)
            if ended is None and by in ABORTED_BY:
                return Stopped(given_up=abort_ended(store, session_id, now, by=by))
            return Stopped(ended=ended)
    except LockBusy:
        if store.peek(session_id) is not None and store.request_cancel(session_id, by):
            return Stopped(requested=True)
        raise
