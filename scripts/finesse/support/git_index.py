"""The git index, saved before a step that may fail half-way and put back by git's own
protocol (`support/git` is the door that runs git; this keeps the one file we replace in
git's place).

git replaces its index by writing `index.lock` (created exclusively: whoever holds it owns
the index) and renaming it over `index`. Putting the saved bytes back the same way means a
process killed at any instant leaves the old index or the saved one, never a truncated
file; and the restored file gets the mtime it had, because git's check for "racily clean"
entries compares each entry's time with the index file's: with a fresh mtime, a file
changed within the same clock tick as its entry would look unchanged (seen: a failed
commit's tracked change vanished from `git status`)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from pathlib import Path

from finesse.support.writes import fault_point

LOCK_SUFFIX = ".lock"


class IndexBusy(OSError):
    """Another process holds the index's lock: the index was not put back."""


class SavedIndex:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            info = os.stat(path)
            self.data: bytes | None = path.read_bytes()
            self.mtime_ns: int | None = info.st_mtime_ns
            self.mode = info.st_mode & 0o777
        except FileNotFoundError:
            self.data, self.mtime_ns, self.mode = None, None, 0o644

    @property
    def lock(self) -> Path:
        return self.path.with_name(self.path.name + LOCK_SUFFIX)

    def restore(self) -> None:
        """Put the index back as it was saved (remove it when there was none)."""
        try:
            descriptor = os.open(self.lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, self.mode)
        except FileExistsError:
            raise IndexBusy(f"{self.lock} exists: another git command holds the index") \
                from None
        try:
            if self.data is None:
                os.close(descriptor)
                self.path.unlink(missing_ok=True)
                self.lock.unlink()
                return
            fault_point()
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(self.data)
                handle.flush()
                os.fsync(handle.fileno())
            if self.mtime_ns is not None:
                os.utime(self.lock, ns=(self.mtime_ns, self.mtime_ns))
            fault_point()
            os.replace(self.lock, self.path)
            fault_point()
        except BaseException:
            with contextlib.suppress(OSError):
                self.lock.unlink()
            raise


STALE_LOCK_SECONDS = 0.5


def remove_lock_left_by(index: Path, record: Mapping[str, object]) -> None:
    """`remove_stale_lock` for the operation an intent record describes (`written_ns`: when
    it began, `pid`: who ran it); a record without them removes nothing."""
    written, pid = record.get("written_ns"), record.get("pid")
    if not isinstance(written, int) or not isinstance(pid, int):
        return
    from finesse.support.processes import pid_alive  # only when there is a record

    remove_stale_lock(index, written, owner_alive=pid != os.getpid() and pid_alive(pid))


def remove_stale_lock(index: Path, since_ns: int, owner_alive: bool) -> bool:
    """Remove `index`'s lock when it was left by an operation of ours that was killed: made
    after `since_ns` (its change time: a restore sets the lock's mtime to the old index's),
    by an owner no longer alive, and unchanged for STALE_LOCK_SECONDS (no live git is
    writing it). True when it was removed. A lock that could be anyone else's stays."""
    lock = index.with_name(index.name + LOCK_SUFFIX)
    try:
        before = os.stat(lock)
    except OSError:
        return False
    if owner_alive or before.st_ctime_ns < since_ns:
        return False
    time.sleep(STALE_LOCK_SECONDS)
    try:
        after = os.stat(lock)
    except OSError:
        return False
    if (after.st_ctime_ns, after.st_size) != (before.st_ctime_ns, before.st_size):
        return False
    with contextlib.suppress(OSError):
        lock.unlink()
        return True
    return False
