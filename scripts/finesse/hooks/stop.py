"""Stop hook, active-loop path: gather what happened, decide, then continue or end the loop.

`finesse.hooks.entry` has already found that this session may have a loop. Standard library
only, like everything this imports: it runs on every stop of a looping session.

Order at each stop: the reply is read once (`signals.read_reply`); a cancel (the kill
switch, or one asked for while an earlier stop held the lock) wins at once; in gate mode the
gate runs and commits, repairs or reverts; the verification commands run only when the
engine says a claim needs them (never when the reply is BLOCKED or the gate is red); a
cancel asked for meanwhile still wins; then `engine.decide`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO, TextIO

from finesse.engine import Observation, decide, needs_verification
from finesse.errors import StateError
from finesse.hooks.boundary import run_hook
from finesse.hooks.output import HookOutput, continue_turn, tell_user
from finesse.loop.lifecycle import finish
from finesse.loop.notebook import record_iteration
from finesse.models import LoopState, StopInput
from finesse.record import replace
from finesse.results import Cursor
from finesse.schema import SchemaError, from_dict
from finesse.signals import read_reply
from finesse.state.paths import StatePaths, find_project_root, is_valid_session_id
from finesse.state.store import CorruptStateError, LoopStore, utcnow
from finesse.support import git as gitstate
from finesse.support.files import is_regular_file
from finesse.support.transcript import last_assistant_text, tool_calls_since_turn_start
from finesse.support.usage import Increment, read_increment, start_cursor
from finesse.support.verify import run_all


def last_reply(data: StopInput) -> str | None:
    """`last_assistant_message` when Claude Code sent it: the transcript may lag behind."""
    if data.last_assistant_message is not None:
        return data.last_assistant_message
    if data.transcript_path and is_regular_file(Path(data.transcript_path)):
        return last_assistant_text(Path(data.transcript_path))
    return None


def _cancel(store: LoopStore, session_id: str) -> str | None:
    """Who cancels the loop now: the kill switch, or a cancel asked for while a stop held
    the lock; None when nobody does."""
    if store.paths.kill_switch.exists():
        return "the kill switch"
    return store.pending_cancel(session_id)


def _transcript(data: StopInput, state: LoopState, observation: Observation) -> Observation:
    """The iteration's tool calls and token usage, from the transcript's new bytes since the
    last stop (flat in the transcript's size). Without a cursor yet (a loop started from a
    terminal), only whether there was a tool call, from the end, and a cursor for next time."""
    transcript = Path(data.transcript_path) if data.transcript_path else None
    if transcript is None or not is_regular_file(transcript):
        return observation
    if state.cursor is None:  # this iteration's usage is unknown: say partial
        return replace(observation,
                       tool_calls=tool_calls_since_turn_start(transcript, at_most=1),
                       usage_partial=True, cursor=start_cursor(transcript))
    increment = _read_caught_up(transcript, state.cursor, data.last_assistant_message)
    if increment is None:
        return observation
    return replace(observation, tool_calls=increment.tool_calls, usage=increment.model_usage(),
                   usage_partial=increment.partial, cursor=increment.cursor)


TRANSCRIPT_LAG_SECONDS = 1.0
_sleep, _monotonic = time.sleep, time.monotonic  # the wait's clock (tests set their own)


def _read_caught_up(transcript: Path, cursor: Cursor, reply: str | None) -> Increment | None:
    """The new bytes, once they hold the reply the Stop input carries: Claude Code may run
    the hook before it has written the reply's lines, whose usage then belongs to this
    iteration. Waits at most TRANSCRIPT_LAG_SECONDS, and only when the reply is missing."""
    wanted = (reply or "").strip()[:200]  # a start is enough, should either side be cut
    increment = read_increment(transcript, cursor)
    deadline = _monotonic() + TRANSCRIPT_LAG_SECONDS
    while (increment is not None and wanted
           and (increment.last_text or "").strip()[:200] != wanted
           and _monotonic() < deadline):
        _sleep(0.05)
        increment = read_increment(transcript, cursor)
    return increment


def _observe(data: StopInput, state: LoopState, store: LoopStore, root: Path,
             env: Mapping[str, str]) -> Observation:
    reply = last_reply(data)
    reading = read_reply(reply, state.promise) if reply is not None else None
    observation = _transcript(data, state, Observation(
        reply=reply,
        reading=reading,
        now=utcnow(),
        loop_done=store.consume_loop_done(state.session_id),
    ))
    cancelled_by = _cancel(store, state.session_id)
    if cancelled_by is not None:
        return replace(observation, cancelled=True, cancelled_by=cancelled_by)
    if state.gate:
        # Imported here, like the status line's reader below: most loops use neither, and
        # this path runs on every stop.
        from finesse.loop.gate.step import run_gate_step

        gate_step = run_gate_step(
            state, root, reply,
            lambda commands, where: run_all(commands, cwd=where, settings=env),
        )
        observation = replace(observation, gate=gate_step)
    if needs_verification(state, observation):
        observation = replace(observation,
                              verification=run_all(state.verify, cwd=root, settings=env))
    cancelled_by = _cancel(store, state.session_id)  # asked for while the checks ran
    if cancelled_by is not None:
        observation = replace(observation, cancelled=True, cancelled_by=cancelled_by)
    now = observation.now  # one reading of the clock per stop
    quota = None
    if state.budgets.stop_at_quota is not None:
        from finesse.hooks.statusline import read_quota

        quota = read_quota(store.paths, now)
    return replace(observation, quota=quota, tree_fingerprint=gitstate.tree_fingerprint(root))


def handle(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    import json

    try:
        fields = json.loads(raw)
        data = from_dict(StopInput, fields, strict=False)
    except (ValueError, RecursionError, SchemaError):
        return None
    if "agent_id" in fields or not is_valid_session_id(data.session_id):
        return None  # a subagent's stop is never an iteration of the main loop
    root = find_project_root(env, data.cwd or cwd)
    store = LoopStore(StatePaths(root))
    try:
        with store.locked(data.session_id):
            state = store.load(data.session_id)
            if state is None:
                return None
            if state.judge is not None:  # judge mode answers every stop from its state
                from finesse.hooks.judge_stop import handle_judge_stop

                return handle_judge_stop(store, state, fields, last_reply(data),
                                         _cancel(store, data.session_id), env)
            decision = decide(state, _observe(data, state, store, root, env))
            if decision.action == "continue":
                following = record_iteration(
                    store, decision.state, decision.state.iterations[-1], decision.notes
                )
                store.save(following)
                return continue_turn(decision.reason, system_message=decision.message,
                                     env=env)
            return tell_user(finish(store, decision.state, decision.notes))
    except CorruptStateError as err:
        store.log(str(err))
        return tell_user(f"finesse: {err}")
    except StateError as err:
        store.log(f"Stop: {err}")
        return tell_user(f"finesse: {err}; this stop went ahead")


def main(stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    return run_hook("Stop", handle, stdin, stdout)
