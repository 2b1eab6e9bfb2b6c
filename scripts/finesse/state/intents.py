"""Intent records: what a multi-step operation of a session is about to do, written down
before its first step so that whoever comes next (the session's next stop, a start, a
resume, `ralph status`, `ralph run`) can finish it or roll it back (docs/design.md, "Crash
safety"). Standard library only: the Stop path reads it.

One record per session, at `.claude/ralph/intents/<session>.json`, always under the
session's lock. It is written with the one atomic writer, durably (temp file, fsync,
rename, folder fsync), so a kill leaves the old record or the new one. A record names the
loop and the state it was written against (`stamp`): once that state has been saved over,
the operation is known to have finished and the record is stale, whether or not its
removal happened. A record that is not JSON is moved aside to `corrupt/`, never trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from finesse.state.paths import StatePaths
from finesse.support import json_text
from finesse.support.files import FileProblem, read_bytes
from finesse.support.writes import remove_stale_temps, write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from finesse.models import LoopState

MAX_INTENT_BYTES = 4 * 1024 * 1024
GATE_OP = "gate-step"  # a gate commit or revert (`finesse.loop.gate.step`)
START_OP = "start"  # a loop being started (`finesse.loop.recovery`)


def stamp(state: LoopState) -> str:
    """Which saved state an operation started from: a save after it changes the stamp."""
    return f"{state.loop_id}#{state.iteration}#{state.updated_at.isoformat()}"


class Intents:
    def __init__(self, paths: StatePaths) -> None:
        self.paths = paths

    def write(self, session_id: str, record: dict[str, Any]) -> None:
        """Write down (or move on) the session's operation; durable before it returns."""
        body = {**record, "pid": os.getpid(), "written_ns": time.time_ns()}
        remove_stale_temps(self.paths.intents)  # a write of a record killed before its rename
        write_atomic(self.paths.intent_file(session_id), json.dumps(body, sort_keys=True),
                     durable=True)

    def sessions(self) -> list[str]:
        """The sessions with a record, for `ralph status` (reads only)."""
        try:
            return sorted(name[:-5] for name in os.listdir(self.paths.intents)
                          if name.endswith(".json"))
        except OSError:
            return []

    def read(self, session_id: str, *, repair: bool = True) -> dict[str, Any] | None:
        """The session's recorded operation, None when there is none (or it was unreadable:
        then, with `repair` (the lock holder), it is moved aside, and the loop's state and
        git are what is trusted)."""
        path = self.paths.intent_file(session_id)
        try:
            raw = read_bytes(path, subject=str(path), limit=MAX_INTENT_BYTES)
        except FileProblem as err:
            if err.kind != "missing" and repair:
                self._move_aside(path)
            return None
        try:
            record = json_text.loads(raw)
        except ValueError:  # json_text: nesting past the parser is a ValueError too
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("op"), str):
            if repair:
                self._move_aside(path)
            return None
        return record

    def clear(self, session_id: str) -> None:
        with contextlib.suppress(OSError):
            self.paths.intent_file(session_id).unlink()

    def _move_aside(self, path: Path) -> None:
        with contextlib.suppress(OSError):
            self.paths.move_aside(path, prefix="intent-")
