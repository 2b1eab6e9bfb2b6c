"""finesse.support.locks, the one door to file locking: the platform's branch is chosen by
`os.name` when a lock is first taken; on Windows `msvcrt.locking` of byte 0 (a stand-in for
msvcrt records the calls: non-blocking tries, polled, then the unlock); on POSIX a real
`flock` that a second process waits for, gives up on after its timeout, and gets once the
holder is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from finesse.support import locks
from finesse.support.locks import (
    LockTimeout,
    LockUnusable,
    PosixLocks,
    WindowsLocks,
    exclusive,
)

REPO = Path(__file__).resolve().parents[3]
LK_UNLCK, LK_NBLCK = 0, 2  # msvcrt's values


class StandInMsvcrt(types.ModuleType):
    """msvcrt.locking as Windows has it, recording (fd, mode, bytes, file position); it
    refuses the first `busy` non-blocking tries as a lock held elsewhere does."""

    LK_UNLCK = LK_UNLCK
    LK_NBLCK = LK_NBLCK

    def __init__(self, busy: int = 0) -> None:
        super().__init__("msvcrt")
        self.calls: list[tuple[int, int, int, int]] = []
        self.busy = busy

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        self.calls.append((fd, mode, nbytes, os.lseek(fd, 0, os.SEEK_CUR)))
        if mode == LK_NBLCK and self.busy > 0:
            self.busy -= 1
            raise PermissionError(13, "Permission denied")


def test_the_branch_follows_os_name(monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    stand_in = StandInMsvcrt()
    monkeypatch.setitem(sys.modules, "msvcrt", stand_in)
    windows = locks.locks_for("nt")
    assert isinstance(windows, WindowsLocks) and windows.msvcrt is stand_in
    posix = locks.locks_for("posix")
    assert isinstance(posix, PosixLocks) and posix.fcntl is fcntl


def _windows(monkeypatch: pytest.MonkeyPatch, stand_in: StandInMsvcrt) -> None:
    monkeypatch.setitem(sys.modules, "msvcrt", stand_in)
    monkeypatch.setattr(locks, "_chosen", locks.locks_for("nt"))


def test_windows_locks_byte_0_and_unlocks_it(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    stand_in = StandInMsvcrt()
    _windows(monkeypatch, stand_in)
    path = tmp_path / "loop.lock"
    path.write_text("bytes from before")  # opened to append, the file's position is its end
    with exclusive(path):
        held = list(stand_in.calls)
    [(fd, _, _, _), *_] = stand_in.calls
    assert held == [(fd, LK_NBLCK, 1, 0)]
    assert stand_in.calls == [(fd, LK_NBLCK, 1, 0), (fd, LK_UNLCK, 1, 0)]
    assert path.read_text() == "bytes from before"


def test_windows_waits_by_polling_until_the_holder_lets_go(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    stand_in = StandInMsvcrt(busy=3)
    _windows(monkeypatch, stand_in)
    with exclusive(tmp_path / "x.lock"):
        pass
    assert [mode for _, mode, _, _ in stand_in.calls] == [LK_NBLCK] * 4 + [LK_UNLCK]


def test_windows_gives_up_after_the_timeout(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    stand_in = StandInMsvcrt(busy=10**6)
    _windows(monkeypatch, stand_in)
    started = time.monotonic()
    with pytest.raises(LockTimeout) as timed_out, exclusive(tmp_path / "x.lock", timeout=0.2):
        pass
    assert str(timed_out.value) == str(tmp_path / "x.lock")
    assert time.monotonic() - started >= 0.2
    assert {mode for _, mode, _, _ in stand_in.calls} == {LK_NBLCK}  # never unlocked: not held


HOLD = (
    "import sys, time; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
    "from finesse.support.locks import exclusive\n"
    "with exclusive(Path(sys.argv[2])):\n"
    "    print('held', flush=True); time.sleep(60)\n"
)


def test_posix_a_second_process_waits_and_gets_the_lock_once_the_holder_is_killed(
        tmp_path: Path) -> None:
    path = tmp_path / "loop.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(REPO / "scripts"), str(path)],
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        with pytest.raises(LockTimeout), exclusive(path, timeout=0.3):
            pass
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        with exclusive(path, timeout=5):
            pass
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


def _unusable(path: Path) -> str:
    with pytest.raises(LockUnusable) as refused, exclusive(path, timeout=0):
        pass
    return str(refused.value)


def test_a_fifo_at_the_lock_is_refused_at_once(tmp_path: Path) -> None:
    """Opening a FIFO to write waits for a reader: the lock would hang for ever."""
    fifo = tmp_path / "s.lock"
    os.mkfifo(fifo)
    assert _unusable(fifo) == "not a regular file (a FIFO, device or socket)"


def test_a_link_at_the_lock_creates_nothing_where_it_points(tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "victim"
    outside.parent.mkdir()
    (tmp_path / "locks").mkdir()
    link = tmp_path / "locks" / "s.lock"
    link.symlink_to(outside)
    assert _unusable(link) == "a symbolic link"
    assert not outside.exists()


def test_a_folder_at_the_lock_or_a_file_for_its_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dir.lock").mkdir()
    assert _unusable(tmp_path / "dir.lock") == "a directory"
    (tmp_path / "locks").write_text("mine\n")
    assert _unusable(tmp_path / "locks" / "s.lock") == "File exists"
    assert (tmp_path / "locks").read_text() == "mine\n"


def test_a_plain_lock_file_is_still_taken_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "s.lock"
    with exclusive(path, timeout=0):
        assert path.is_file()
    with exclusive(path, timeout=0):
        pass
    assert path.read_bytes() == b""
