"""SubagentStart and SubagentStop in a session with a judge-mode loop: the plugin gives a
worker or judge its prompt, reads its final message against seed 002's contract, runs the
verifiers itself after the worker, and records every attempt (`finesse.judging.steps`
decides; this module measures and writes).

SubagentStop reads the contracts with pydantic (`finesse.judging.contracts`): the entry
activates the plugin's virtualenv first, which the loop's start built. Everything else here
is standard library. Only `finesse:ralph-worker` and `finesse:ralph-judge` agents count;
the SubagentStop that compaction fires (`agent_type` "") and every other agent are left
alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, BinaryIO, TextIO

from finesse.hooks.boundary import run_hook
from finesse.hooks.output import HookOutput, add_context, block
from finesse.judging import steps
from finesse.judging.records import JUDGE_TYPE, WORKER_TYPE
from finesse.loop import judge_watch
from finesse.loop.notebook import record_iteration
from finesse.models import LoopState, judge_of
from finesse.state.paths import StatePaths, find_project_root, is_valid_session_id
from finesse.state.store import LoopStore, utcnow
from finesse.support.verify import run_all

OURS = (WORKER_TYPE, JUDGE_TYPE)
STOPPING = ("You are not counted by this judge-mode loop: it is being stopped ({why}). Do "
            "not change anything; reply with one line saying so and stop.")


def _input(raw: bytes) -> dict[str, Any] | None:
    try:
        fields = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if (not isinstance(fields, dict) or not is_valid_session_id(fields.get("session_id"))
            or fields.get("agent_type") not in OURS
            or not isinstance(fields.get("agent_id"), str)):
        return None
    return fields


def _store(fields: dict[str, Any], env: Mapping[str, str], cwd: str) -> LoopStore:
    where = fields.get("cwd")
    return LoopStore(StatePaths(find_project_root(env, where if isinstance(where, str)
                                                  else cwd)))


@contextmanager
def _judge_loop(raw: bytes, env: Mapping[str, str], cwd: str,
                ) -> Iterator[tuple[dict[str, Any], LoopStore, LoopState] | None]:
    """The event's fields, the store and the session's judge-mode loop, read under the
    session's lock (held until the block ends); None when the event is not ours."""
    fields = _input(raw)
    if fields is None:
        yield None
        return
    store = _store(fields, env, cwd)
    with store.locked(fields["session_id"]):
        state = store.load(fields["session_id"])
        yield None if state is None or state.judge is None else (fields, store, state)


def _seen(store: LoopStore, state: LoopState) -> steps.Seen:
    tree = judge_watch.tree(store.paths.root, state.baseline_commit)
    return steps.Seen(utcnow(), tree.fingerprint, tree.changed)


def _save(store: LoopStore, step: steps.Step) -> None:
    state = step.state
    if step.closed is not None:
        state = record_iteration(store, state, step.closed, [])
    store.save(state)


def handle_start(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    with _judge_loop(raw, env, cwd) as found:
        if found is None:
            return None
        fields, store, state = found
        agent = fields["agent_id"]
        stopping = store.cancel_requested(fields["session_id"])
        if stopping:
            return add_context("SubagentStart", STOPPING.format(why=stopping))
        seen = _seen(store, state)
        if fields["agent_type"] == WORKER_TYPE:
            step = steps.worker_start(state, agent, seen)
        else:
            verification = protect = after = None
            if steps.needs_verification(state, seen.tree):  # the tree changed since the run
                verification = run_all(state.verify, cwd=store.paths.root, settings=env)
                protect = judge_watch.protect_changes(store.paths.root, judge_of(state))
                after = _seen(store, state)
            step = steps.judge_start(state, agent, seen, verification, protect, after)
        if step.state is not state:
            _save(store, step)
    return add_context("SubagentStart", step.context) if step.context else None


def _worker_stop(store: LoopStore, state: LoopState, message: str,
                 usage: list[Any], env: Mapping[str, str]) -> steps.Step:
    from finesse.judging.contracts import parse_worker, unexplained_verifiers

    parsed = parse_worker(message)
    problem = parsed.problem
    if parsed.value is not None:
        missing = unexplained_verifiers(parsed.value, state.verify)
        if missing:
            problem = ("verifier_runs lacks " + ", ".join(f"`{c}`" for c in missing) + ", and "
                       "remaining_known_failures does not say why it was not run and what "
                       "evidence was used instead")
    if problem or parsed.value is None:
        return steps.invalid(state, "worker", problem, utcnow(), usage)
    root = store.paths.root
    verification = run_all(state.verify, cwd=root, settings=env)
    protect = judge_watch.protect_changes(root, judge_of(state))
    return steps.worker_done(state, parsed.value, _seen(store, state), verification, protect,
                             usage)


def _judge_stop(store: LoopStore, state: LoopState, message: str,
                usage: list[Any]) -> steps.Step:
    from finesse.judging.contracts import parse_judge

    seen = _seen(store, state)
    current = judge_of(state).current
    if current is None or seen.tree != current.judge_tree:
        return steps.judge_void(state, seen, usage, "the working tree changed while the judge "
                                "ran")
    parsed = parse_judge(message)
    if parsed.value is None:
        return steps.invalid(state, "judge", parsed.problem, seen.now, usage)
    return steps.judge_done(state, parsed.value, seen, usage)


def handle_stop(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    with _judge_loop(raw, env, cwd) as found:
        if found is None:
            return None
        fields, store, state = found
        message = fields.get("last_assistant_message")
        message = message if isinstance(message, str) else ""
        transcript = fields.get("agent_transcript_path")
        kind = steps.role(state, fields["agent_id"], fields["agent_type"])
        if not kind:
            return None  # not counted: an extra or reused agent
        usage = judge_watch.agent_usage(transcript if isinstance(transcript, str) else None,
                                        message)
        try:
            step = (_worker_stop(store, state, message, usage, env) if kind == "worker"
                    else _judge_stop(store, state, message, usage))
        except ImportError:  # the plugin's environment is gone: nothing can be checked
            step = steps.close(state, "contract-failure", "the plugin could not check the "
                               "contract: its Python environment is missing (`ralph doctor`)",
                               utcnow())
        _save(store, step)
    return block(step.retry) if step.retry else None


def main_start(stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    return run_hook("SubagentStart", handle_start, stdin, stdout)


def main_stop(stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    return run_hook("SubagentStop", handle_stop, stdin, stdout)

