"""Stop hook, active-loop path: gather what happened, decide, then continue or end the loop.

`finesse.hooks.entry` has already found that this session may have a loop. Standard library
only, like everything this imports: it runs on every stop of a looping session. What a stop
observes, and in which order, is `finesse.loop.observe`'s; judge mode answers its stops from
its own state (`finesse.hooks.judge_stop`).
"""

from __future__ import annotations

from finesse.engine import Decision, decide
from finesse.errors import StateError
from finesse.hooks.boundary import run_hook
from finesse.hooks.output import HookOutput, continue_turn, tell_user
from finesse.loop.notebook import record_iteration
from finesse.loop.observe import TranscriptSource, observe, observe_interrupted
from finesse.loop.recovery import recover
from finesse.models import LoopState, StopInput
from finesse.schema import SchemaError, from_dict
from finesse.state.paths import StatePaths, find_project_root, is_valid_session_id
from finesse.state.store import CorruptStateError, LockBusy, LoopStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import BinaryIO, TextIO


BUSY_SECONDS = 0.5  # how long a prompt waits for a loop's lock before it leaves the step be


def _done_with_step(store: LoopStore, state: LoopState) -> None:
    """The gate step's intent record has served once the state is saved over it."""
    if state.gate is not None:
        from finesse.state.intents import Intents

        Intents(store.paths).clear(state.session_id)


def handle(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    import json

    try:
        data = from_dict(StopInput, json.loads(raw), strict=False)
    except (ValueError, RecursionError, SchemaError):
        return None
    if data.agent_id is not None or not is_valid_session_id(data.session_id):
        return None  # a subagent's stop is never an iteration of the main loop
    root = find_project_root(env, data.cwd or cwd)
    store = LoopStore(StatePaths(root))
    source = TranscriptSource(data)
    try:
        with store.locked(data.session_id):
            rolled_back = recover(store, data.session_id)
            if rolled_back is not None:
                return tell_user(f"finesse: {rolled_back}")
            state = store.load(data.session_id)
            if state is None:
                return None
            if state.judge is not None:  # judge mode answers every stop from its state
                from finesse.hooks.judge_stop import handle_judge_stop

                return handle_judge_stop(store, state, data, source, env)
            observation = observe(state, store, source, env)
            decision = decide(state, observation)
            recovered = observation.gate.recovered if observation.gate is not None else ""
            if decision.action == "continue":
                following = record_iteration(
                    store, decision.state, decision.state.iterations[-1], decision.notes
                )
                store.save(following)
                _done_with_step(store, state)
                message = (f"{decision.message}\nfinesse: {recovered}" if recovered
                           else decision.message)
                return continue_turn(decision.reason, system_message=message, env=env)
            from finesse.loop.lifecycle import finish  # only at an end: it imports the report

            banner = finish(store, decision.state, decision.notes)
            _done_with_step(store, state)
            return tell_user(f"{banner}\nfinesse: {recovered}" if recovered else banner)
    except CorruptStateError as err:
        store.log(str(err))
        return tell_user(f"finesse: {err}")
    except StateError as err:
        store.log(f"Stop: {err}")
        return tell_user(f"finesse: {err}; this stop went ahead")


def handle_interrupted(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    """UserPromptSubmit of a prompt that is none of ours, in a session whose loop a kill
    left half-way through a step (`entry.interrupted_here`): the step is finished and its
    iteration recorded (with no reply: the killed stop's is gone) before the prompt sets
    the agent working again; its next stop would otherwise finish a revert over the agent's
    new work, unseen by the gate. What was done goes to the user; the prompt goes on."""
    import json

    from finesse.models import PromptInput

    try:
        data = from_dict(PromptInput, json.loads(raw), strict=False)
    except (ValueError, RecursionError, SchemaError):
        return None
    if not is_valid_session_id(data.session_id):
        return None
    # A stop holding the lock is live, not killed: the step is its own, nothing to wait for.
    store = LoopStore(StatePaths(find_project_root(env, data.cwd or cwd)), BUSY_SECONDS)
    try:
        with store.locked(data.session_id):
            rolled_back = recover(store, data.session_id)
            if rolled_back is not None:
                return tell_user(f"finesse: {rolled_back}")
            state = store.load(data.session_id)
            seen = (None if state is None or state.judge is not None
                    else observe_interrupted(state, store, env))
            if state is None or seen is None or seen.gate is None:
                return None
            return tell_user(_decided(store, state, decide(state, seen), seen.gate.recovered))
    except LockBusy:
        return None
    except CorruptStateError as err:
        store.log(str(err))
        return tell_user(f"finesse: {err}")
    except StateError as err:
        store.log(f"UserPromptSubmit: {err}")
        return tell_user(f"finesse: {err}; your prompt went ahead")


def _decided(store: LoopStore, state: LoopState, decision: Decision, recovered: str) -> str:
    """The recovered iteration recorded (the loop goes on at its next stop) or the loop
    ended; what to tell the user."""
    said = f"finesse: {recovered}" if recovered else "finesse: an interrupted step was finished"
    if decision.action == "continue":
        store.save(record_iteration(store, decision.state, decision.state.iterations[-1],
                                    decision.notes))
        _done_with_step(store, state)
        return said
    from finesse.loop.lifecycle import finish

    banner = finish(store, decision.state, decision.notes)
    _done_with_step(store, state)
    return f"{banner}\n{said}"


def main(stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    return run_hook("Stop", handle, stdin, stdout)
