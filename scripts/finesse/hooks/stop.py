"""Stop hook, active-loop path: gather what happened, decide, then continue or end the loop.

The launcher `hooks/stop.py` has already found that this session may have a loop. Standard
library only, like everything this imports: it runs on every stop of a looping session.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO, TextIO

from finesse.engine import Observation, decide
from finesse.errors import StateError
from finesse.hooks.boundary import run_hook
from finesse.hooks.output import HookOutput, block, tell_user
from finesse.loop.gate.step import run_gate_step
from finesse.loop.lifecycle import finish, record_iteration
from finesse.models import StopInput
from finesse.schema import SchemaError, from_json
from finesse.signals import claims_completion
from finesse.state.paths import StatePaths, find_project_root, is_valid_session_id
from finesse.state.store import CorruptStateError, LoopStore, utcnow
from finesse.support import git as gitstate
from finesse.support.transcript import last_assistant_text, tool_calls_since_turn_start
from finesse.support.verify import run_all


def last_reply(data: StopInput) -> str | None:
    """`last_assistant_message` when Claude Code sent it: the transcript may lag behind."""
    if data.last_assistant_message is not None:
        return data.last_assistant_message
    if data.transcript_path:
        return last_assistant_text(Path(data.transcript_path))
    return None


def _consume(path: Path) -> bool:
    """Whether the loop-done channel says `done`; the file is removed once read, so it is
    never committed, reverted or seen as a change to the project."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            said = handle.read(64).strip().lower()
        path.unlink()
    except OSError:
        return False
    return said == "done"


def handle(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    try:
        data = from_json(StopInput, raw, strict=False)
    except SchemaError:
        return None
    if not is_valid_session_id(data.session_id):
        return None
    root = find_project_root(env, data.cwd or cwd)
    store = LoopStore(StatePaths(root))
    try:
        with store.locked(data.session_id):
            state = store.load(data.session_id)
            if state is None:
                return None
            reply = last_reply(data)
            cancelled = store.paths.kill_switch.exists()
            verification = None
            if (not cancelled and reply is not None and state.verify
                    and claims_completion(reply, state.promise)):
                verification = run_all(state.verify, cwd=root, settings=env)
            transcript = Path(data.transcript_path) if data.transcript_path else None
            done_file = store.paths.loop_done_file(state.session_id)
            loop_done = _consume(done_file)
            gate_step = None
            if state.gate and not cancelled:
                gate_step = run_gate_step(
                    state, root, reply,
                    lambda commands, where: run_all(commands, cwd=where, settings=env),
                )
            decision = decide(state, Observation(
                reply=reply,
                now=utcnow(),
                cancelled=cancelled,
                verification=verification,
                tool_calls=tool_calls_since_turn_start(transcript) if transcript else None,
                tree_fingerprint=gitstate.tree_fingerprint(root),
                gate=gate_step,
                loop_done=loop_done,
            ))
            if decision.action == "continue":
                following = record_iteration(
                    store, decision.state, decision.state.iterations[-1], decision.notes
                )
                store.save(following)
                return block(decision.reason, system_message=decision.message)
            return tell_user(finish(store, decision.state, decision.notes))
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
