"""Ctrl-C and SIGTERM (on Windows also Ctrl-Break) end a run cleanly: the first one asks every
loop of the run to stop (the running agents are ended, each loop is recorded as cancelled
with its report); a gate step under way finishes first, so no iteration is ever half
committed. Only the main thread may install handlers; the loops see the request through the
shared `Cancel`. Which signals those are is `finesse.support.processes`'s to say."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from finesse.headless.child import Cancel
from finesse.support import processes


@contextmanager
def cancel_on_signals(cancel: Cancel) -> Iterator[Cancel]:
    """While inside, SIGINT and SIGTERM request `cancel` instead of killing the process."""
    if threading.current_thread() is not threading.main_thread():
        yield cancel
        return
    names = processes.cancel_signals()

    def handler(signum: int, frame: FrameType | None) -> None:
        cancel.request(names.get(signum, f"signal {signum}"), signum)

    previous = {signum: signal.signal(signum, handler) for signum in names}
    try:
        yield cancel
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
