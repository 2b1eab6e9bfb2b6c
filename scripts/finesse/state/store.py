"""Loop state on disk: one JSON file per active loop, archived (never just deleted) at the end.

Every read-modify-write happens under a per-session file lock, and every write is a temp
file plus `os.replace`, so a crash leaves the old file or the new one, never half of one.
A file that cannot be read is moved aside to `corrupt/` and reported, never overwritten.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from finesse.errors import StateError
from finesse.models import LoopState
from finesse.record import Record
from finesse.schema import SchemaError
from finesse.state.paths import StatePaths, is_valid_session_id
from finesse.support.files import FileProblem, open_regular, read_bytes, read_text, shown_name
from finesse.support.locks import LockTimeout, LockUnusable, exclusive
from finesse.support.writes import write_atomic

LOCK_TIMEOUT_SECONDS = 15.0
MAX_STATE_BYTES = 32 * 1024 * 1024


class LockBusy(StateError):
    """Another process held a session's lock for longer than the timeout."""


class UnreadableState(StateError):
    """A state file could not be read as a loop state; it is left where it is (`problem`
    says why, in a few words)."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem


class CorruptStateError(StateError):
    """A state file was unreadable; it has been moved to `moved_to`."""

    def __init__(self, message: str, moved_to: Path) -> None:
        super().__init__(message)
        self.moved_to = moved_to


class Scan(Record):
    """The project's active loops, and a line for each loops-folder file that is none."""

    loops: list[LoopState]
    unreadable: list[str]


def utcnow() -> datetime:
    return datetime.now(UTC)


class LoopStore:
    def __init__(self, paths: StatePaths, lock_timeout: float | None = None) -> None:
        self.paths = paths
        self.lock_timeout = LOCK_TIMEOUT_SECONDS if lock_timeout is None else lock_timeout

    @contextlib.contextmanager
    def locked(self, session_id: str) -> Iterator[None]:
        lock_path = self.paths.lock_file(session_id)
        try:
            with exclusive(lock_path, self.lock_timeout):
                yield
        except LockUnusable as err:
            raise StateError(f"cannot lock {lock_path}: {err}; remove what is there, or make "
                             f"{self.paths.locks} a writable folder, then try again") from None
        except LockTimeout:
            raise LockBusy(
                f"another process holds {lock_path} for over {self.lock_timeout:.0f} s; "
                "try again, or run `ralph status`"
            ) from None

    def peek(self, session_id: str) -> LoopState | None:
        """This session's active loop, None if it has none; reads, never writes, so needs no
        lock (the status line, PreToolUse, `ralph status`). A loop whose ended record is in
        the history, and which was not resumed since, has ended even when its active file is
        still there: None. An unreadable file is left as it is: UnreadableState."""
        path = self.paths.loop_file(session_id)
        state = self._read_file(path, session_id)
        if state is not None and self._archived_since(state, path):
            return None
        return state

    def load(self, session_id: str) -> LoopState | None:
        """`peek`, for a caller that holds the session's lock, which may repair: an ended
        loop's leftover active file is removed (it could not be, say in a read-only folder,
        when the loop ended), an unreadable one moved aside (CorruptStateError)."""
        path = self.paths.loop_file(session_id)
        state = self._load_file(path, session_id)
        if state is not None and self._archived_since(state, path):
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        return state

    def _archived_since(self, state: LoopState, active: Path) -> bool:
        """Whether the history holds this loop as ended, and not resumed since. Every write
        of the active file is under the session's lock, as the archive is: an active file
        written after the archived copy is a resume's, and the copy is not even read (a
        resumed loop would otherwise parse its old record at every stop)."""
        archived_path = self.paths.history / f"{state.loop_id}.json"
        try:
            if os.stat(archived_path).st_mtime_ns < os.stat(active).st_mtime_ns:
                return False
        except OSError:
            return False  # no archived copy (or no active file to compare with)
        try:
            archived = LoopState.from_json(
                read_bytes(archived_path, subject=str(archived_path), limit=MAX_STATE_BYTES))
        except (FileProblem, SchemaError):
            return False
        # A resume adds to `resumes`: the archived copy of a loop resumed since has fewer.
        return archived.outcome is not None and len(archived.resumes) >= len(state.resumes)

    def _read_file(self, path: Path, session_id: str | None = None) -> LoopState | None:
        """The state in `path`, None when there is no such file; UnreadableState when it is
        not a loop state (of that session). Reads only."""
        try:
            raw = read_bytes(path, subject=str(path), limit=MAX_STATE_BYTES)
        except FileProblem as err:
            if err.kind == "missing":
                return None
            if err.kind == "unreadable":
                raise StateError(str(err)) from None
            problem: str = str(err).rpartition(": ")[2] if err.kind != "too-big" else (
                f"over {MAX_STATE_BYTES // (1024 * 1024)} MiB")
            raise self._unreadable(path, problem) from None
        try:
            state = LoopState.from_json(raw)
        except SchemaError as err:
            raise self._unreadable(path, str(err)) from None
        if session_id is not None and state.session_id != session_id:
            raise self._unreadable(path, f"it names session {state.session_id!r}, not the "
                                         f"{session_id!r} of its file name")
        return state

    @staticmethod
    def _unreadable(path: Path, problem: str) -> UnreadableState:
        return UnreadableState(f"the loop state {shown_name(path.name)} is unreadable "
                               f"({problem})", problem)

    def _load_file(self, path: Path, session_id: str | None = None) -> LoopState | None:
        """`_read_file`, for a caller holding the lock: an unreadable file is moved aside."""
        try:
            return self._read_file(path, session_id)
        except UnreadableState as err:
            raise self._corrupt(path, err.problem) from None

    def _corrupt(self, path: Path, problem: str) -> CorruptStateError:
        """Move an unreadable state file aside; the error says where, in one line."""
        moved_to = self.paths.move_aside(path)
        return CorruptStateError(
            f"the loop state {shown_name(path.name)} was unreadable ({problem}); it was moved "
            f"to {shown_name(str(moved_to))} and the loop has stopped",
            moved_to,
        )

    def save(self, state: LoopState) -> None:
        write_atomic(self.paths.loop_file(state.session_id), state.to_json())

    def archive(self, state: LoopState) -> Path:
        """Write the ended loop to history/, then remove its active file. Once the history
        holds it the loop has ended for good, even if its active file cannot be removed
        (`load` says so); a StateError then tells the caller, in one line."""
        if state.outcome is None:
            raise ValueError("only an ended loop is archived")
        target = self.paths.history / f"{state.loop_id}.json"
        try:
            write_atomic(target, state.to_json())
        except OSError as err:  # history/ a file, a FIFO, a read-only folder: the loop stays
            raise StateError(
                f"cannot archive the ended loop into {self.paths.history} "
                f"({err.strerror or err}): make it a writable folder (move what is there "
                "aside); the loop is still active, and its next stop or cancel ends it") from None
        self.clear_request(state.session_id)
        try:
            self.paths.loop_file(state.session_id).unlink()
        except FileNotFoundError:
            pass
        except OSError as err:
            raise StateError(
                f"the loop has ended, but its file {self.paths.loop_file(state.session_id)} "
                f"could not be removed ({err.strerror}); it is ignored from now on"
            ) from None
        return target

    def request_cancel(self, session_id: str, by: str) -> bool:
        """Record a cancel for a loop whose stop is busy (running its verification): that
        stop ends the loop when it has decided. False when it cannot be recorded."""
        try:
            write_atomic(self.paths.request_file(session_id), by)
        except OSError:
            return False
        return True

    def cancel_requested(self, session_id: str | None = None) -> str | None:
        """Who cancels this session's loop now: the kill switch (which stops every loop of
        the project), or a cancel asked for while a stop held the loop's lock; None when
        nobody does. Without a session: the kill switch alone (a graph of loops)."""
        if self.paths.kill_switch.exists():
            return "the kill switch"
        return self.pending_cancel(session_id) if session_id is not None else None

    def pending_cancel(self, session_id: str) -> str | None:
        """Who asked to cancel this session's loop, if anyone has."""
        try:
            return read_text(self.paths.request_file(session_id), subject="cancel request",
                             limit=256).strip() or "a cancel request"
        except FileProblem:
            return None

    def consume_loop_done(self, session_id: str) -> bool:
        """Whether the session's loop-done channel says `done`; read once and removed, so it
        is never committed, reverted or seen as a change to the project. Anything but a
        regular file there (a FIFO, a directory) is no signal and is left alone."""
        path = self.paths.loop_done_file(session_id)
        handle = open_regular(path)
        if handle is None:
            return False
        with handle:
            try:
                said = handle.read(64).decode("utf-8", errors="replace").strip().lower()
            except OSError:
                return False
        try:
            path.unlink()
        except OSError:
            return False
        return said == "done"

    def clear_request(self, session_id: str) -> None:
        with contextlib.suppress(OSError):
            self.paths.request_file(session_id).unlink()

    def scan(self) -> Scan:
        """Every readable active loop of the project, oldest first, and a line for each file
        of the loops folder that is no readable loop. Reads only: an unreadable file is left
        for its session's next stop to move aside (under its lock), a stray name for a person
        (no session has it). A loop the history holds as ended is not active, even when its
        file could not be removed."""
        loops: list[LoopState] = []
        unreadable: list[str] = []
        if not self.paths.loops.is_dir():
            return Scan(loops, unreadable)
        for path in sorted(self.paths.loops.glob("*.json")):
            if not is_valid_session_id(path.stem):
                unreadable.append(f"{shown_name(path.name)}: not a session's loop file")
                continue
            try:
                state = self._read_file(path, path.stem)
            except StateError as err:
                unreadable.append(f"{shown_name(path.name)}: "
                                  f"{getattr(err, 'problem', None) or err}")
                continue
            if state is not None and not self._archived_since(state, path):  # see `peek`
                loops.append(state)
        return Scan(sorted(loops, key=lambda loop: loop.started_at), unreadable)

    def active_loops(self) -> list[LoopState]:
        return self.scan().loops

    def history(self) -> list[LoopState]:
        ended: list[LoopState] = []
        if not self.paths.history.is_dir():
            return ended
        for path in self.paths.history.glob("*.json"):
            with contextlib.suppress(StateError):  # unreadable: left as it is
                state = self._read_file(path)
                if state is not None:
                    ended.append(state)
        return sorted(ended, key=lambda loop: loop.started_at)

    def log(self, line: str) -> None:
        """Append one line to the project's finesse log; never raises."""
        with contextlib.suppress(OSError):
            self.paths.base.mkdir(parents=True, exist_ok=True)
            with open(self.paths.log, "a", encoding="utf-8") as handle:
                handle.write(f"{utcnow().isoformat()} {' '.join(line.split())}\n")
