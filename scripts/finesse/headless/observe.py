"""What a headless iteration did, as the engine's `Observation`: the same facts, read in the
same order, as the Stop hook gathers in a session (`finesse.hooks.stop`), from the child's
stream instead of the transcript.

Order: the reply is read once; the loop-done channel is consumed; a cancel (a signal to
`ralph run`, the kill switch, a cancel recorded while this iteration was being checked)
wins at once and nothing is run; gate mode runs the gate and commits, repairs or reverts;
the verification commands run only when the engine says a claim needs them; a cancel asked
for meanwhile still wins, after the gate step, so no iteration is ever half committed.
"""

from __future__ import annotations

from collections.abc import Mapping

from finesse.engine import Observation, needs_verification
from finesse.headless.child import Cancel, ChildResult
from finesse.loop.gate.step import run_gate_step
from finesse.models import LoopState
from finesse.record import replace
from finesse.signals import read_reply
from finesse.state.store import LoopStore, utcnow
from finesse.support import git as gitstate
from finesse.support.verify import run_all


def cancelled_by(store: LoopStore, session_id: str, cancel: Cancel) -> str | None:
    """Who ends the loop now: a signal to `ralph run`, the kill switch, or a cancel asked for
    while the run held the loop's lock; None when nobody does."""
    if cancel.requested:
        return cancel.by
    if store.paths.kill_switch.exists():
        return "the kill switch"
    return store.pending_cancel(session_id)


def observe(state: LoopState, store: LoopStore, result: ChildResult, cancel: Cancel,
            env: Mapping[str, str]) -> Observation:
    root = store.paths.root
    summary = result.stream
    reply = summary.reply
    observation = Observation(
        reply=reply,
        reading=read_reply(reply, state.promise) if reply is not None else None,
        now=utcnow(),
        loop_done=store.consume_loop_done(state.session_id),
        tool_calls=summary.tool_calls,
        usage=list(summary.usage),
        usage_partial=summary.usage_partial,
    )
    who = cancelled_by(store, state.session_id, cancel)
    if who is not None:
        return replace(observation, cancelled=True, cancelled_by=who,
                       tree_fingerprint=gitstate.tree_fingerprint(root))
    if state.gate:
        step = run_gate_step(state, root, reply,
                             lambda commands, where: run_all(commands, cwd=where,
                                                             settings=env))
        observation = replace(observation, gate=step)
    if needs_verification(state, observation):
        observation = replace(observation,
                              verification=run_all(state.verify, cwd=root, settings=env))
    who = cancelled_by(store, state.session_id, cancel)  # asked for while the checks ran
    if who is not None:
        observation = replace(observation, cancelled=True, cancelled_by=who)
    quota = summary.quota(observation.now) if state.budgets.stop_at_quota is not None else None
    return replace(observation, quota=quota, tree_fingerprint=gitstate.tree_fingerprint(root))
