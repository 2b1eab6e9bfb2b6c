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
from finesse.schema import SchemaError
from finesse.state.paths import StatePaths, is_valid_session_id
from finesse.support.files import write_atomic
from finesse.support.locks import LockTimeout, exclusive

LOCK_TIMEOUT_SECONDS = 15.0


class CorruptStateError(StateError):
    """A state file was unreadable; it has been moved to `moved_to`."""

    def __init__(self, message: str, moved_to: Path) -> None:
        super().__init__(message)
        self.moved_to = moved_to


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
        except LockTimeout:
            raise StateError(
                f"another process holds {lock_path} for over {self.lock_timeout:.0f} s; "
                "try again, or run `ralph status`"
            ) from None

    def load(self, session_id: str) -> LoopState | None:
        """This session's active loop, None if it has none."""
        return self._load_file(self.paths.loop_file(session_id))

    def _load_file(self, path: Path) -> LoopState | None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            raise StateError(f"cannot read {path}: {err.strerror}") from None
        try:
            return LoopState.from_json(raw)
        except SchemaError as err:
            moved_to = self._move_aside(path)
            raise CorruptStateError(
                f"the loop state {path.name} was unreadable ({err}); "
                f"it was moved to {moved_to} and the loop has stopped",
                moved_to,
            ) from None

    def _move_aside(self, path: Path) -> Path:
        self.paths.corrupt.mkdir(parents=True, exist_ok=True)
        stamp = utcnow().strftime("%Y%m%dT%H%M%S%fZ")
        target = self.paths.corrupt / f"{path.stem}.{stamp}{path.suffix}"
        os.replace(path, target)
        return target

    def save(self, state: LoopState) -> None:
        write_atomic(self.paths.loop_file(state.session_id), state.to_json())

    def archive(self, state: LoopState) -> Path:
        """Write the ended loop to history/, then remove its active file."""
        if state.outcome is None:
            raise ValueError("only an ended loop is archived")
        target = self.paths.history / f"{state.loop_id}.json"
        write_atomic(target, state.to_json())
        with contextlib.suppress(FileNotFoundError):
            self.paths.loop_file(state.session_id).unlink()
        return target

    def active_loops(self) -> list[LoopState]:
        """Every readable active loop of the project, oldest first; unreadable ones are
        moved aside like everywhere else."""
        loops: list[LoopState] = []
        if not self.paths.loops.is_dir():
            return loops
        for path in sorted(self.paths.loops.glob("*.json")):
            if not is_valid_session_id(path.stem):
                continue
            with contextlib.suppress(CorruptStateError):
                state = self._load_file(path)
                if state is not None:
                    loops.append(state)
        return sorted(loops, key=lambda loop: loop.started_at)

    def history(self) -> list[LoopState]:
        ended: list[LoopState] = []
        if not self.paths.history.is_dir():
            return ended
        for path in self.paths.history.glob("*.json"):
            with contextlib.suppress(StateError):
                state = self._load_file(path)
                if state is not None:
                    ended.append(state)
        return sorted(ended, key=lambda loop: loop.started_at)

    def log(self, line: str) -> None:
        """Append one line to the project's finesse log; never raises."""
        with contextlib.suppress(OSError):
            self.paths.base.mkdir(parents=True, exist_ok=True)
            with open(self.paths.log, "a", encoding="utf-8") as handle:
                handle.write(f"{utcnow().isoformat()} {' '.join(line.split())}\n")
