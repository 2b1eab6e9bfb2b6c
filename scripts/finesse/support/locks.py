"""One exclusive file lock for the whole package, and the only door to the platform's file
locking: `fcntl.flock` on POSIX, `msvcrt.locking` of the lock file's first byte on Windows.
Standard library only, because the Stop hook and the environment bootstrap both take it.

The platform module is imported when a lock is first taken, never at import: the package
loads where `fcntl` does not exist. `msvcrt.locking` has no blocking mode worth the name (it
gives up after ten seconds), so on Windows waiting is polling, as it is for a timeout here.
A process that dies holding the lock loses it: POSIX drops a `flock` with its last open
descriptor; Windows unlocks a process's regions when it ends (when exactly, its
documentation leaves to the system).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import IO, Any

POLL_SECONDS = 0.02


class LockTimeout(Exception):
    """Another process held the lock for longer than the timeout."""


class LockUnusable(Exception):
    """The lock file cannot be opened as one: str(err) says why (a FIFO, a folder or a
    dangling link in its place, a read-only folder)."""



class PosixLocks:
    """`flock` on the whole file."""

    def __init__(self, fcntl: ModuleType) -> None:
        self.fcntl = fcntl

    def acquire(self, handle: IO[Any]) -> None:
        self.fcntl.flock(handle.fileno(), self.fcntl.LOCK_EX)

    def try_acquire(self, handle: IO[Any]) -> bool:
        try:
            self.fcntl.flock(handle.fileno(), self.fcntl.LOCK_EX | self.fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def release(self, handle: IO[Any]) -> None:
        self.fcntl.flock(handle.fileno(), self.fcntl.LOCK_UN)


class WindowsLocks:
    """`msvcrt.locking` of byte 0 (a byte past the end of an empty file may be locked)."""

    def __init__(self, msvcrt: ModuleType) -> None:
        self.msvcrt = msvcrt

    def acquire(self, handle: IO[Any]) -> None:
        while not self.try_acquire(handle):
            time.sleep(POLL_SECONDS)

    def try_acquire(self, handle: IO[Any]) -> bool:
        handle.seek(0)
        try:
            self.msvcrt.locking(handle.fileno(), self.msvcrt.LK_NBLCK, 1)
        except OSError:  # PermissionError: another process holds it
            return False
        return True

    def release(self, handle: IO[Any]) -> None:
        handle.seek(0)
        self.msvcrt.locking(handle.fileno(), self.msvcrt.LK_UNLCK, 1)


_chosen: PosixLocks | WindowsLocks | None = None


def locks_for(os_name: str) -> PosixLocks | WindowsLocks:
    """The locking of the platform named like `os.name` ("nt" is Windows)."""
    if os_name == "nt":
        return WindowsLocks(importlib.import_module("msvcrt"))
    return PosixLocks(importlib.import_module("fcntl"))


def platform_locks() -> PosixLocks | WindowsLocks:
    global _chosen
    if _chosen is None:
        _chosen = locks_for(os.name)
    return _chosen


@contextlib.contextmanager
def exclusive(path: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold `path` exclusively; wait at most `timeout` seconds (None: as long as it takes)."""
    locks = platform_locks()
    with _open_lock(path) as handle:
        if timeout is None:
            locks.acquire(handle)
        else:
            deadline = time.monotonic() + timeout
            while not locks.try_acquire(handle):
                if time.monotonic() >= deadline:
                    raise LockTimeout(str(path))
                time.sleep(POLL_SECONDS)
        try:
            yield
        finally:
            locks.release(handle)



_LOCK_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_NOFOLLOW", 0))


def _open_lock(path: Path) -> IO[Any]:
    """The lock file open for appending. Never waits and never leaves the folder: a FIFO
    there would block `open` until a reader came (O_NONBLOCK makes it fail at once), and a
    link could create a file wherever it points (O_NOFOLLOW refuses it)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, _LOCK_FLAGS, 0o644)
    except OSError as err:
        raise LockUnusable(_not_a_lock(path) or err.strerror or str(err)) from None
    handle = os.fdopen(descriptor, "a")
    problem = _not_a_lock(path)
    if problem:  # a FIFO someone reads opens at once
        handle.close()
        raise LockUnusable(problem)
    return handle


def _not_a_lock(path: Path) -> str:
    """What is at `path` instead of a lock file, or "" when it is a regular file (or
    nothing)."""
    if os.path.islink(path):
        return "a symbolic link"
    if os.path.isdir(path):
        return "a directory"
    if os.path.lexists(path) and not os.path.isfile(path):
        return "not a regular file (a FIFO, device or socket)"
    return ""
