"""Loop states and projects for the tests (also imported by worker processes)."""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from finesse.models import Gate, LoopState
from finesse.record import replace
from finesse.recording import Observation
from finesse.results import CommandResult
from finesse.signals import Reading, read_reply
from finesse.state.paths import StatePaths
from finesse.state.store import LoopStore
from finesse.support.verify import fingerprint

SESSION = "0b7c5c3e-1f2a-4d3b-8c4d-5e6f7a8b9c0d"
OTHER_SESSION = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
T0 = datetime(2026, 11, 30, 7, 0, 0, tzinfo=UTC)
T1 = datetime(2026, 11, 30, 7, 5, 0, tzinfo=UTC)


def make_state(root: Path, session_id: str = SESSION, **overrides: Any) -> LoopState:
    fields: dict[str, Any] = {
        "loop_id": f"20261130T070000Z-{session_id[:8]}-abc123",
        "session_id": session_id,
        "project_root": str(root),
        "prompt": "Make the tests pass",
        "promise": "DONE",
        "max_iterations": 8,
        "started_at": T0,
        "updated_at": T0,
        "iteration_started_at": T0,
    }
    fields.update(overrides)
    return LoopState(**fields)


GATE_FIELDS = frozenset({"branch", "iteration_base", "snapshot_commit", "repairing",
                         "red_streak", "empty_iterations"})


def changed(state: LoopState, **changes: Any) -> LoopState:
    """`state` with some fields changed, those of its gate part (`GATE_FIELDS`) named as if
    they were its own: the tests of gate mode's counters read better that way."""
    gate_changes = {name: changes.pop(name) for name in list(changes) if name in GATE_FIELDS}
    if gate_changes:
        if state.gate is None:
            raise ValueError(f"{sorted(gate_changes)}: not a gate-mode state")
        changes["gate"] = replace(changes.get("gate") or state.gate, **gate_changes)
    return replace(state, **changes)


def gate_of(state: LoopState) -> Gate:
    """A gate-mode loop's gate part (an AssertionError for any other loop)."""
    assert state.gate is not None, "not a gate-mode loop"
    return state.gate


def observed(reply: str | None, now: datetime, *, promise: str = "DONE",
         **fields: Any) -> Observation:
    """An observation of `reply`, read once for a loop whose promise is `promise` (as
    `finesse.loop.observe` reads it)."""
    reading = read_reply(reply, promise) if reply is not None else Reading()
    return Observation(reply=reply, now=now, reading=reading, **fields)


def command_result(command: str, exit_code: int | None = 0, output: str = "",
                   *, timed_out: bool = False, seconds: float = 0.5,
                   output_bytes: int | None = None) -> CommandResult:
    """A verification command's result as verify.run_command would report it (output_bytes:
    what the whole output weighed when `output` is only its tail)."""
    return CommandResult(
        command=command, exit_code=exit_code, timed_out=timed_out, duration_seconds=seconds,
        output_tail=output,
        output_bytes=len(output.encode()) if output_bytes is None else output_bytes,
        fingerprint=fingerprint(exit_code, timed_out, output),
    )


def store_for(root: Path) -> LoopStore:
    return LoopStore(StatePaths(root))


def files_under(directory: Path) -> list[str]:
    """Every file below directory, relative, sorted: to check what a step left behind."""
    if not directory.exists():
        return []
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*")
                  if path.is_file())


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def increment_iteration(root: str, session_id: str, times: int) -> None:
    """A worker process: locked read-modify-write of `iteration`, `times` times."""
    store = store_for(Path(root))
    for _ in range(times):
        with store.locked(session_id):
            state = store.load(session_id)
            assert state is not None
            store.save(replace(state, iteration=state.iteration + 1))


@contextlib.contextmanager
def hold_lock(path: Path) -> Iterator[None]:
    """Hold a lock file the way another process would: its own open file, flock'ed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def lock_is_free(path: Path) -> bool:
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True



def active(root: Path, session_id: str = SESSION) -> LoopState:
    """The session's running loop in the project; fails when there is none."""
    state = store_for(root).load(session_id)
    assert state is not None
    return state


def archived(root: Path) -> list[LoopState]:
    """Every ended loop of the project, as the store's history lists them."""
    return store_for(root).history()


def only_archived(root: Path) -> LoopState:
    """The one ended loop of the project; fails when there is not exactly one."""
    [ended] = archived(root)
    return ended
