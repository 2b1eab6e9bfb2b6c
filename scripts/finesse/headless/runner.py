"""`ralph run`'s loop: the in-session loop's engine, state and guarantees, with a fresh
`claude -p` process per iteration instead of one more turn of the same conversation.

Each iteration: the prompt (the iteration header, the standing prompt, the previous
learnings and what the last iteration left to fix: `finesse.prompts`) goes to a new
session; its stream gives the reply, the tool calls and the usage; `observe` gathers the
same facts the Stop hook gathers in a session (gate step, verification); `engine.decide`
decides; the notebook, state, report and history are written by the same lifecycle. What
carries over is the repository, the notebook's Attempts and the learnings, never the
conversation.

The loop's lock is held while an iteration is decided and recorded, never while its agent
works, so `ralph cancel` and `ralph status` answer at once; a cancel, the kill switch, or the
loop's file vanishing also ends the running child. The child is recorded in the loop's
state while it runs (`RunningAgent`), and dies with this process on Linux; a driver that
finds one recorded (its predecessor died) ends it first, so a loop never has two agents.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

from finesse.engine import Decision, decide
from finesse.errors import StateError, UsageError
from finesse.headless import ending
from finesse.headless.agents import agent_started, end_left_agent, without_agent
from finesse.headless.child import Cancel, ChildResult, run_child
from finesse.headless.progress import Progress, Silent
from finesse.headless.session import child_argv, child_env, new_session_id
from finesse.headless.stream_source import StreamSource
from finesse.loop.lifecycle import cancel_loop, finish, start_loop
from finesse.loop.notebook import record_iteration
from finesse.loop.observe import observe, observe_interrupted
from finesse.loop.request import StartRequest
from finesse.models import HeadlessRun, LoopState
from finesse.prompts import loop_prompt
from finesse.record import replace
from finesse.state.store import LoopStore, utcnow
from finesse.support.locks import LockTimeout, exclusive

WAIT_STEP_SECONDS = 2.0
# Judge mode's worker and judge are subagents of one session, owned by that session's hooks,
# which do nothing in a headless iteration.
JUDGE_REFUSED = ("--judge runs inside one Claude Code session, whose hooks own the worker and "
                 "judge subagents, and ralph run gives each iteration a fresh session: use "
                 "/ralph-loop --judge in a session, or leave out --judge")


@dataclass(frozen=True)
class Ended:
    state: LoopState  # as archived in the history
    banner: str


@dataclass(frozen=True)
class _Next:
    prompt: str
    wait_until: datetime | None = None
    why: str = ""


def start(store: LoopStore, request: StartRequest, settings: HeadlessRun,
          now: datetime | None = None) -> LoopState:
    """A new headless loop: its own id (a UUID, never a Claude Code session's), its state in
    the project's loops folder like any loop's."""
    if request.judge:
        raise UsageError(JUDGE_REFUSED)
    run_id = new_session_id()
    with store.locked(run_id):
        state = start_loop(store, run_id, request, now or utcnow())
        state = replace(state, headless=settings)
        store.save(state)
    return state


def _driver_lock(store: LoopStore, run_id: str) -> Path:
    return store.paths.locks / f"{run_id}.run"


@contextlib.contextmanager
def driving(store: LoopStore, run_id: str) -> Iterator[None]:
    """Held by the one process that runs a headless loop, for as long as it runs it: a loop
    whose driver died (SIGKILL, a lost machine) is free for `ralph resume` to pick up."""
    try:
        with exclusive(_driver_lock(store, run_id), timeout=0.5):
            yield
    except LockTimeout:
        raise StateError(f"the headless loop {run_id} is being run by another process "
                         "(`ralph run` or `ralph resume`): `ralph status` shows it") from None


def is_driven(store: LoopStore, run_id: str) -> bool:
    try:
        with exclusive(_driver_lock(store, run_id), timeout=0):
            return False
    except LockTimeout:
        return True


def drive(store: LoopStore, run_id: str, cancel: Cancel, progress: Progress | None = None,
          env: Mapping[str, str] | None = None) -> Ended:
    """Run the loop `run_id` (started, resumed, or left active by a driver that died) until
    it ends; the ended loop."""
    with driving(store, run_id):
        return _drive(store, run_id, cancel, progress, env)


def _drive(store: LoopStore, run_id: str, cancel: Cancel, progress: Progress | None,
           env: Mapping[str, str] | None) -> Ended:
    shown = progress or Silent()
    environment = dict(os.environ if env is None else env)
    with store.locked(run_id):
        state = store.load(run_id)
    if state is None or state.headless is None:
        raise ValueError(f"no active headless loop {run_id}")
    if state.headless.agent is not None:
        end_left_agent(store, state, shown.say)
    loop_id = state.loop_id
    prompt = loop_prompt(state)
    picked = _finish_interrupted(store, run_id, environment, shown)
    if isinstance(picked, Ended):
        return picked
    prompt = picked or prompt
    while True:
        with store.locked(run_id):
            state = store.load(run_id)
        if state is None:
            return ended_outside(store, loop_id)
        if cancel.requested:
            return _cancel_between(store, run_id, loop_id, cancel)
        timeout, limit_name = _child_timeout(state)
        result = run_child(
            child_argv(state, new_session_id()), cwd=Path(state.project_root),
            env=child_env(environment, state), prompt=prompt, timeout=timeout, cancel=cancel,
            stopped=lambda: _stopped(store, run_id),
            progress=partial(shown.live, state),
            started=partial(agent_started, store, run_id, state, shown.iteration_started))
        step = _after(store, run_id, loop_id, result, cancel, environment, limit_name, shown)
        if isinstance(step, Ended):
            return step
        if step.wait_until is not None:
            waited = _wait(store, run_id, loop_id, cancel, step.wait_until, step.why, shown)
            if waited is not None:
                return waited
        prompt = step.prompt


def _finish_interrupted(store: LoopStore, run_id: str, env: Mapping[str, str],
                        shown: Progress) -> Ended | str:
    """A gate step a killed run left half done, finished and recorded before an agent works
    again (`observe_interrupted`): the next prompt, the loop's end, or "" with none."""
    with store.locked(run_id):
        state = store.load(run_id)
        seen = None if state is None else observe_interrupted(state, store, env)
        if state is None or seen is None:
            return ""
        decision = decide(state, seen)
        if decision.action == "end":
            return _end(store, decision, shown)
        following = record_iteration(store, decision.state, decision.state.iterations[-1],
                                     decision.notes)
        store.save(following)
    shown.iteration_ended(following, following.iterations[-1], "")
    return decision.reason


def _child_timeout(state: LoopState) -> tuple[float | None, str]:
    """How long this iteration may run, and what limits it: --iteration-timeout, or the
    loop's deadline (--timeout-minutes) when that comes first."""
    assert state.headless is not None
    limit = state.headless.iteration_timeout
    timeout, name = (float(limit), f"--iteration-timeout {limit}") if limit else (None, "")
    if state.deadline_at is not None:
        left = max(1.0, (state.deadline_at - utcnow()).total_seconds())
        if timeout is None or left < timeout:
            timeout, name = left, f"the loop's deadline (--timeout-minutes {state.timeout_minutes})"
    return timeout, name


def _stopped(store: LoopStore, run_id: str) -> bool:
    """Whether the loop ended, or must end, from outside while its agent works."""
    return (not store.paths.loop_file(run_id).exists()
            or store.cancel_requested(run_id) is not None)


def _after(store: LoopStore, run_id: str, loop_id: str, result: ChildResult, cancel: Cancel,
           env: Mapping[str, str], limit_name: str, shown: Progress) -> Ended | _Next:
    """Decide the iteration that just ran, under the loop's lock, and record it."""
    _log_refused(store, run_id, result)
    with store.locked(run_id):
        state = store.load(run_id)
        if state is None:
            return ended_outside(store, loop_id)
        state = without_agent(state)  # it has ended (run_child ends its group)
        failure = ending.failure(result)
        if (failure or ending.limited(result)) and not cancel.requested:
            # No reply to read and nothing it claimed: nothing of gate mode runs, and what
            # the agent left in the tree is committed (or not) with the next iteration.
            observation = ending.bare_observation(state, result, utcnow())
            if failure:
                return _end(store, ending.blocked(state, observation, failure), shown)
            wait = ending.limit_wait(state, result, observation.now)
            if wait is None:
                return _end(store, ending.quota(state, observation, result), shown)
            decision = decide(state, observation)
            note = ending.limit_note(result, wait)
        else:
            decision = decide(state, observe(state, store, StreamSource(result, cancel), env))
            wait, note = None, ending.kill_note(result, limit_name)
        decision = ending.annotate(decision, note)
        if decision.action == "end":
            return _end(store, decision, shown, note)
        following = record_iteration(store, decision.state, decision.state.iterations[-1],
                                     decision.notes)
        store.save(following)
    shown.iteration_ended(following, following.iterations[-1], "" if wait else note)
    reason = decision.reason + (f"\n\n{note}" if note else "")
    return _Next(reason, wait, ending.limit_words(result, wait) if wait else "")


def _log_refused(store: LoopStore, run_id: str, result: ChildResult) -> None:
    """One log line for each figure of the stream that was no number (`support.numbers`)."""
    if result.stream.refused:
        store.log(f"loop {run_id}: the stream's usage held no token count in "
                  f"{', '.join(result.stream.refused)}: refused, counted as 0")
    error = result.stream.error
    if error is not None and error.resets_at is not None and \
            ending.sane_reset(result, utcnow()) is None:
        store.log(f"loop {run_id}: the usage limit's reset time {error.resets_at:%Y-%m-%d} is "
                  "further off than any usage window: refused, read as no reset time")


def _end(store: LoopStore, decision: Decision, shown: Progress, note: str = "") -> Ended:
    banner = finish(store, decision.state, decision.notes)
    archived = archived_loop(store, decision.state.loop_id) or decision.state
    entry = archived.iterations[-1] if archived.iterations else None
    shown.iteration_ended(archived, entry, note)
    return Ended(archived, banner)


def _wait(store: LoopStore, run_id: str, loop_id: str, cancel: Cancel, until: datetime,
          why: str, shown: Progress) -> Ended | None:
    """Wait for a usage limit's reset; a cancel or the loop's end from outside cuts it."""
    shown.say(why)
    while True:
        left = (until - utcnow()).total_seconds()
        if left <= 0:
            shown.say("the usage limit's reset time has passed: going on")
            with store.locked(run_id):  # the next iteration starts now, not when it waited
                state = store.load(run_id)
                if state is not None:
                    store.save(replace(state, iteration_started_at=utcnow()))
            return None
        if cancel.wait(min(left, WAIT_STEP_SECONDS)):
            return _cancel_between(store, run_id, loop_id, cancel)
        if _stopped(store, run_id):
            if store.peek(run_id) is None:
                return ended_outside(store, loop_id)
            return _cancel_between(store, run_id, loop_id, cancel)


def _cancel_between(store: LoopStore, run_id: str, loop_id: str, cancel: Cancel) -> Ended:
    """Cancel the loop while no iteration runs: nothing to record but the end."""
    with store.locked(run_id):
        by = (cancel.by if cancel.requested
              else store.cancel_requested(run_id) or "a cancel request")
        ended = cancel_loop(store, run_id, utcnow(), by=by)
    if ended is None:
        return ended_outside(store, loop_id)
    archived = archived_loop(store, loop_id) or ended
    return Ended(archived, _short_banner(store, archived))


def archived_loop(store: LoopStore, loop_id: str) -> LoopState | None:
    return next((loop for loop in store.history() if loop.loop_id == loop_id), None)


def ended_outside(store: LoopStore, loop_id: str) -> Ended:
    """The loop ended while its agent worked (`ralph cancel`, `ralph abort`): its record."""
    archived = archived_loop(store, loop_id)
    if archived is None:
        raise ending.LoopVanished(
            f"the loop {loop_id} is no longer active and has no record in "
            f"{store.paths.history}: see `ralph status`")
    return Ended(archived, _short_banner(store, archived))


def _short_banner(store: LoopStore, state: LoopState) -> str:
    where = state.report_path or ""
    if where:
        with contextlib.suppress(ValueError):
            where = str(Path(where).relative_to(store.paths.root))
    return state.end_message + (f"\nReport: {where}" if where else "")
