"""What every entry point does first (a stop, a start, a resume, `ralph status`): find the
session's unfinished multi-step operation (`finesse.state.intents`) and finish it or roll
it back, saying what was done (docs/design.md, "Crash safety"). The caller holds the
session's lock. Standard library only: the Stop path runs it.

- A start interrupted after its loop was saved, before the model was told: rolled back.
  The loop is archived as cancelled, with a message saying why, so no loop is ever active
  that the model was not given; the next call tells the user.
- A gate step (commit or revert) interrupted against the state still active: left to that
  loop's next stop, which finishes it before anything else (`finesse.loop.gate.step`).
- A record whose state was saved over since (the operation had finished, its removal had
  not), or whose loop is no longer active: removed.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from finesse.record import replace
from finesse.recording import end_loop
from finesse.state.intents import GATE_OP, START_OP, Intents, stamp
from finesse.state.store import LoopStore, utcnow

INTERRUPTED_BY = "an interrupted start"


def begin_start(store: LoopStore, session_id: str, now: datetime) -> None:
    """Write down that a loop of this session is being started at `now`; first remove the
    temps a killed save left among our state files (any session's: only a writer that is
    gone leaves one, so a live writer's temp stays), also of files never written again
    (each write removes its own file's)."""
    from finesse.support.writes import remove_stale_temps

    paths = store.paths
    for folder in (paths.loops, paths.history, paths.reports, paths.requests, paths.temp):
        removed = remove_stale_temps(folder)
        if removed:
            store.log(f"removed {len(removed)} temp file(s) a killed write left in {folder}")
    Intents(paths).write(session_id, {"op": START_OP, "started_at": now.isoformat()})


def withdraw(store: LoopStore, session_id: str, started_at: str, why: str) -> str | None:
    """Archive the session's active loop started at `started_at` as cancelled (`why`);
    the one-line message for the user, or None when no such loop is active."""
    from finesse.loop import judge_watch

    state = store.load(session_id)
    if state is None or state.started_at.isoformat() != started_at:
        return None
    message = (f"Ralph loop {state.loop_id} was not started: {why}, so Claude was never "
               "given its task. Type the command again to start it.")
    ended = replace(end_loop(state, "cancelled", message, utcnow()), ended_by=INTERRUPTED_BY)
    store.archive(ended)
    judge_watch.unmark(store.paths, session_id)
    store.log(message)
    return message


def _clear_own_lock(store: LoopStore, record: dict[str, object]) -> None:
    from finesse.support.git import Git
    from finesse.support.git_index import remove_lock_left_by

    name = Git(store.paths.root).text("rev-parse", "--git-path", "index")
    if name:
        remove_lock_left_by(Path(name) if Path(name).is_absolute() else store.paths.root / name,
                            record)


def _unmark_unless_judged(store: LoopStore, session_id: str) -> None:
    """A judge start marks the session before it saves the loop: killed between the two,
    the marker outlives the start, and every tool call of the session would load a state
    that is not there. Removed unless a judge loop of the session is active."""
    if not store.paths.judge_marker(session_id).exists():
        return
    state = store.load(session_id)
    if state is None or state.judge is None:
        from finesse.loop import judge_watch

        judge_watch.unmark(store.paths, session_id)


def recover(store: LoopStore, session_id: str) -> str | None:
    """Finish or roll back the session's interrupted operation; a line saying what was
    recovered, or None when there was nothing to recover (or it is left to the next stop)."""
    intents = Intents(store.paths)
    record = intents.read(session_id)
    if record is None:
        return None
    if record.get("op") == START_OP:
        _clear_own_lock(store, record)  # a --allow-dirty snapshot's failed commit, killed
        said = withdraw(store, session_id, str(record.get("started_at")),
                        "its start was interrupted (the hook was killed) before Claude was told")
        _unmark_unless_judged(store, session_id)  # a judge start killed before its save
        intents.clear(session_id)
        return said
    if record.get("op") == GATE_OP:
        state = store.load(session_id)
        if state is not None and record.get("stamp") == stamp(state):
            return None  # its loop's next stop finishes it, before running anything else
    intents.clear(session_id)
    return None


def pending(store: LoopStore) -> list[str]:
    """A line for each interrupted operation of the project that a call still has to finish
    or roll back, for `ralph status` and /ralph-status (reads only: the session's next call,
    holding its lock, does the work)."""
    from finesse.errors import StateError
    from finesse.state.paths import is_valid_session_id

    intents = Intents(store.paths)
    lines = []
    for session_id in intents.sessions():
        if not is_valid_session_id(session_id):
            continue
        record = intents.read(session_id, repair=False)
        if record is None:
            continue
        try:
            state = store.peek(session_id)
        except StateError:
            state = None
        if record.get("op") == START_OP:
            if state is not None and state.started_at.isoformat() == record.get("started_at"):
                lines.append(f"loop {state.loop_id}: its start was interrupted before Claude was "
                             "told; the session's next prompt or stop rolls it back")
        elif state is not None and record.get("stamp") == stamp(state):
            action = ("its commit" if record.get("action") == "commit"
                      else f"its revert to {str(record.get('base'))[:12]}")
            lines.append(f"loop {state.loop_id}: the gate step of iteration {state.iteration} "
                         f"({action}) was interrupted; the loop's next stop finishes it first")
    return lines
