"""Stop hook, active-loop path: read the reply, decide, then continue or end the loop.

The launcher `hooks/stop.py` has already checked, with the standard library alone, that
this session has a loop; this module may import the heavier parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO, TextIO

from finesse.engine import Observation, decide
from finesse.errors import StateError
from finesse.hooks.boundary import run_hook
from finesse.hooks.output import HookOutput, block, tell_user
from finesse.models import StopInput
from finesse.paths import StatePaths, find_project_root, is_valid_session_id
from finesse.schema import SchemaError, from_json
from finesse.store import CorruptStateError, LoopStore, utcnow
from finesse.transcript import last_assistant_text


def last_reply(data: StopInput) -> str | None:
    """`last_assistant_message` when Claude Code sent it: the transcript may lag behind."""
    if data.last_assistant_message is not None:
        return data.last_assistant_message
    if data.transcript_path:
        return last_assistant_text(Path(data.transcript_path))
    return None


def handle(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    try:
        data = from_json(StopInput, raw, strict=False)
    except SchemaError:
        return None
    if not is_valid_session_id(data.session_id):
        return None
    store = LoopStore(StatePaths(find_project_root(env, data.cwd or cwd)))
    try:
        with store.locked(data.session_id):
            state = store.load(data.session_id)
            if state is None:
                return None
            observation = Observation(
                reply=last_reply(data),
                now=utcnow(),
                cancelled=store.paths.kill_switch.exists(),
            )
            decision = decide(state, observation)
            if decision.action == "continue":
                store.save(decision.state)
                return block(decision.reason, system_message=decision.message)
            store.archive(decision.state)
            return tell_user(decision.message)
    except CorruptStateError as err:
        store.log(str(err))
        return tell_user(f"finesse: {err}")
    except StateError as err:
        store.log(f"Stop: {err}")
        return tell_user(f"finesse: {err}; this stop went ahead")


def main(stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    return run_hook("Stop", handle, stdin, stdout)


if __name__ == "__main__":
    raise SystemExit(main())
