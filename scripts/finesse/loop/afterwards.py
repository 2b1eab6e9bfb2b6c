"""What follows a loop's end, once its reports are written (the HTML one beside the
Markdown one, `finesse.loop.html.files`) and it is archived: the notifications. Called from
the one place every loop ends (`finesse.loop.lifecycle.finish`), in a session's Stop hook as
in `ralph run`; imported only there, at an end, so no stop that continues a loop pays for it.

Neither part can change the loop's result or fail its end: each problem is logged to the
project's `.claude/ralph/finesse.log`, and the notifications are back within
`send.NOTIFY_SECONDS`."""

from __future__ import annotations

from pathlib import Path

from finesse.models import LoopState
from finesse.state.store import LoopStore


def tell(store: LoopStore, state: LoopState, html: Path | None) -> None:
    """Send the loop's notifications, and log each that failed."""
    if state.notify is None:
        return
    from finesse.loop.notify.message import body, loop_record
    from finesse.loop.notify.send import deliver

    for delivery in deliver(state.notify, body(state, html), loop_record(state),
                            cwd=store.paths.root):
        if delivery.problem:
            store.log(f"notify {delivery.target} of loop {state.loop_id}: {delivery.problem}")

