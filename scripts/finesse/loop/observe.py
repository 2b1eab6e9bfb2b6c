"""One stop's observation, gathered in one order for every loop, whoever runs it: a Claude
Code session's Stop hook (`finesse.hooks.stop`), `ralph run` (`finesse.headless.runner`),
and judge mode's stops (`finesse.hooks.judge_stop`, which take the first part only).

What the agent's side of the loop recorded comes from a `Source`: the session's transcript
(`TranscriptSource`, here) or the headless child's stream (`finesse.headless.stream_source`).
The order:

1. the agent's activity: the reply (read once: `signals.read_reply`), its tool calls and
   token usage since the last stop, and where the transcript was read to;
2. the loop-done channel, consumed (never committed, reverted or seen as a change);
3. a cancel (a signal to `ralph run`, the kill switch, one recorded while a stop held the
   lock) wins at once: nothing is run (a gate step a kill interrupted is finished, never
   left half done), the tree is fingerprinted;
4. gate mode's step (gate, then commit, repair or revert; or, when the last one was
   interrupted, that step finished instead: `finesse.loop.gate.step`);
5. the verification commands, only when the engine says a claim needs them;
6. a cancel asked for meanwhile still wins, after the gate step, so no iteration is half
   committed;
7. the plan's usage windows, for --stop-at-quota;
8. the working tree's fingerprint.
"""

from __future__ import annotations

import time
from pathlib import Path

from finesse.models import LoopState, StopInput
from finesse.record import Record, field, replace
from finesse.recording import Observation
from finesse.results import Cursor, GateStep, ModelUsage, Quota
from finesse.signals import Reading, read_reply
from finesse.state.quota import read_quota
from finesse.state.store import LoopStore, utcnow
from finesse.support import git as gitstate
from finesse.support.files import is_regular_file
from finesse.support.transcript import last_assistant_text, tool_calls_since_turn_start
from finesse.support.usage import Increment, read_increment, start_cursor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime
    from typing import Protocol

    class Source(Protocol):
        """Where a stop learns what the agent did."""

        def activity(self, state: LoopState) -> Activity: ...

        def quota(self, store: LoopStore, now: datetime) -> Quota | None: ...

        def interrupted(self) -> str | None:
            """Who cancelled the loop from the runner's side (a signal), if anyone."""


class Activity(Record):
    """What the agent did since the last stop, as its side of the loop recorded it.
    `tool_calls` is None when that could not be told; `cursor` is where the transcript was
    read to (None: not read)."""

    reply: str | None
    tool_calls: int | None = None
    usage: list[ModelUsage] = field(default_factory=list)
    usage_partial: bool = False
    cursor: Cursor | None = None
    refused: list[str] = field(default_factory=list)  # usage fields that held no count


class Gathered(Record):
    """The first part of every stop's observation: the activity, its reply read once, the
    clock, and who cancels the loop (or "")."""

    activity: Activity
    reading: Reading
    now: datetime
    cancelled_by: str = ""


def cancelled_by(store: LoopStore, state: LoopState, source: Source) -> str:
    return source.interrupted() or store.cancel_requested(state.session_id) or ""


def gather(state: LoopState, store: LoopStore, source: Source) -> Gathered:
    activity = source.activity(state)
    if activity.refused:
        store.log(f"loop {state.session_id}: the transcript's usage held no token count in "
                  f"{', '.join(sorted(set(activity.refused)))}: refused, counted as 0")
    reading = (read_reply(activity.reply, state.promise) if activity.reply is not None
               else Reading())
    return Gathered(activity, reading, utcnow(), cancelled_by(store, state, source))


def interrupted_step(state: LoopState, store: LoopStore,
                     env: Mapping[str, str] | None = None) -> GateStep | None:
    """The gate step a kill interrupted, finished now (`finesse.loop.gate.step.
    finish_interrupted`): for a cancel (no `env`: nothing of the gate runs), or with `env`
    for a revert's baseline check. None outside gate mode, or with none."""
    if state.gate is None:
        return None
    from finesse.loop.gate.step import finish_interrupted
    from finesse.state.intents import Intents
    from finesse.support.verify import run_all

    run = None if env is None else (
        lambda commands, where: run_all(commands, cwd=where, settings=env))
    return finish_interrupted(state, store.paths.root, Intents(store.paths), log=store.log,
                              run=run)


def observe_interrupted(state: LoopState, store: LoopStore,
                        env: Mapping[str, str]) -> Observation | None:
    """The stop a kill cut short, observed again as far as it can be: its interrupted gate
    step finished, with no reply (the killed run's is gone). For `ralph run` picking up a
    loop, before its next agent works; None when no step was interrupted."""
    step = interrupted_step(state, store, env)
    if step is None:
        return None
    return Observation(reply=None, now=utcnow(), gate=step,
                       tree_fingerprint=gitstate.tree_fingerprint(store.paths.root))


def observe(state: LoopState, store: LoopStore, source: Source,
            env: Mapping[str, str]) -> Observation:
    """The whole observation of a stop of a loop that is not in judge mode."""
    from finesse.engine import needs_verification

    root = store.paths.root
    gathered = gather(state, store, source)
    activity = gathered.activity
    observation = Observation(
        reply=activity.reply, reading=gathered.reading, now=gathered.now,
        loop_done=store.consume_loop_done(state.session_id),
        tool_calls=activity.tool_calls, usage=list(activity.usage),
        usage_partial=activity.usage_partial, cursor=activity.cursor,
    )
    if gathered.cancelled_by:
        return replace(observation, cancelled=True, cancelled_by=gathered.cancelled_by,
                       gate=interrupted_step(state, store),
                       tree_fingerprint=gitstate.tree_fingerprint(root))
    if state.gate is not None:
        # Imported here: most loops have no gate, and this path runs on every stop.
        from finesse.loop.gate.step import run_gate_step
        from finesse.state.intents import Intents
        from finesse.support.verify import run_all

        step = run_gate_step(state, root, activity.reply,
                             lambda commands, where: run_all(commands, cwd=where,
                                                             settings=env),
                             intents=Intents(store.paths), log=store.log)
        observation = replace(observation, gate=step)
    if needs_verification(state, observation):
        from finesse.support.verify import run_all  # only a stop that runs checks needs it

        observation = replace(observation,
                              verification=run_all(state.verify, cwd=root, settings=env))
    late = cancelled_by(store, state, source)  # asked for while the checks ran
    if late:
        observation = replace(observation, cancelled=True, cancelled_by=late)
    quota = (source.quota(store, observation.now)
             if state.budgets.stop_at_quota is not None else None)
    return replace(observation, quota=quota, tree_fingerprint=gitstate.tree_fingerprint(root))


TRANSCRIPT_LAG_SECONDS = 1.0
_sleep, _monotonic = time.sleep, time.monotonic  # the wait's clock (tests set their own)


class TranscriptSource:
    """A Claude Code session's side of the loop: the Stop input and the transcript."""

    def __init__(self, data: StopInput) -> None:
        self.data = data
        self.path = Path(data.transcript_path) if data.transcript_path else None

    def reply(self) -> str | None:
        """`last_assistant_message` when Claude Code sent it (the transcript may lag behind
        the reply), else the transcript's last assistant text."""
        if self.data.last_assistant_message is not None:
            return self.data.last_assistant_message
        if self.path is not None and is_regular_file(self.path):
            return last_assistant_text(self.path)
        return None

    def activity(self, state: LoopState) -> Activity:
        """The iteration's tool calls and token usage, from the transcript's new bytes since
        the last stop (flat in the transcript's size). Without a cursor yet (a loop started
        from a terminal), only whether there was a tool call, from the end, and a cursor for
        next time."""
        reply = self.reply()
        if self.path is None or not is_regular_file(self.path):
            return Activity(reply)
        if state.cursor is None:  # this iteration's usage is unknown: say partial
            return Activity(reply, tool_calls_since_turn_start(self.path, at_most=1),
                            usage_partial=True, cursor=start_cursor(self.path))
        increment = self._caught_up(state.cursor)
        if increment is None:
            return Activity(reply)
        return Activity(reply, increment.tool_calls, increment.model_usage(),
                        increment.partial, increment.cursor, list(increment.refused))

    def _caught_up(self, cursor: Cursor) -> Increment | None:
        """The new bytes, once they hold the reply the Stop input carries: Claude Code may
        run the hook before it has written the reply's lines, whose usage then belongs to
        this iteration. Waits at most TRANSCRIPT_LAG_SECONDS, and only when the reply is
        missing."""
        assert self.path is not None
        wanted = (self.data.last_assistant_message or "").strip()[:200]  # a start will do
        increment = read_increment(self.path, cursor)
        deadline = _monotonic() + TRANSCRIPT_LAG_SECONDS
        while (increment is not None and wanted
               and (increment.last_text or "").strip()[:200] != wanted
               and _monotonic() < deadline):
            _sleep(0.05)
            increment = read_increment(self.path, cursor)
        return increment

    def quota(self, store: LoopStore, now: datetime) -> Quota | None:
        return read_quota(store.paths, now)

    def interrupted(self) -> str | None:
        return None
