"""Starting, cancelling and describing loops: shared by the hooks and the `ralph` CLI."""

from __future__ import annotations

import secrets
from datetime import datetime

from finesse.engine import end_loop, excerpt, iteration_header
from finesse.errors import UsageError
from finesse.grammar import StartRequest
from finesse.models import LoopState
from finesse.store import LoopStore


def new_loop_id(session_id: str, now: datetime) -> str:
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{session_id[:8]}-{secrets.token_hex(3)}"


def start_loop(
    store: LoopStore, session_id: str, request: StartRequest, now: datetime
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
    state = LoopState(
        loop_id=new_loop_id(session_id, now),
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
    )
    store.save(state)
    return state


def cancel_loop(store: LoopStore, session_id: str, now: datetime, by: str) -> LoopState | None:
    """Archive this session's loop as cancelled; None when it has none. Caller holds the lock."""
    state = store.load(session_id)
    if state is None:
        return None
    message = f"Ralph loop cancelled by {by} at iteration {state.iteration}/{state.max_iterations}."
    ended = end_loop(state, "cancelled", message, now)
    store.archive(ended)
    return ended


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
        "</ralph-task>"
    )


def describe(state: LoopState, now: datetime) -> str:
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
    return "\n".join(lines)
