"""One exclusive file lock for the whole package: `fcntl.flock` on a lock file. Standard
library only, because the Stop hook and the environment bootstrap both take it."""

from __future__ import annotations

import contextlib
import fcntl
import time
from collections.abc import Iterator
from pathlib import Path

POLL_SECONDS = 0.02


class LockTimeout(Exception):
    """Another process held the lock for longer than the timeout."""


@contextlib.contextmanager
def exclusive(path: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold `path` exclusively; wait at most `timeout` seconds (None: as long as it takes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        if timeout is None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockTimeout(str(path)) from None
                    time.sleep(POLL_SECONDS)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
