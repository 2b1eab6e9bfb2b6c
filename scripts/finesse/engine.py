"""The loop's decision at each stop: a pure function of the state and what was observed.

`decide` does no I/O: the Stop hook gathers the observation (the reply read once, the
verification results it ran, the gate's step, the tool calls, the working tree) and acts on
the decision. The ending rules are applied in a fixed order and the first match wins
(docs/design.md):

1. cancelled or aborted (`/cancel-ralph`, `/ralph-abort`, `ralph cancel|abort`, the kill
   switch)
2. gate mode: a git failure or a red baseline -> failure; a red streak of 3 -> failure
3. a terminal `RESULT: BLOCKED` -> blocked, promise or not, verification or not (the blocker
   is recorded)
4. a completion claim (the promise, `RESULT: VERIFIED_COMPLETE`, the loop-done file): in
   gate mode a red gate answers it with the repair; with verification commands all green
   -> success (verified), red -> continue with the failure (the same failure twice asks
   for a re-plan; a third time, or after two re-plans, the loop stops as a limit, blocked
   in seed 001's sense); without any -> success (verified by a green gate, else
   **unverified**: on the agent's word, and said so)
5. quiescence: the same reply twice, or `quiesce_after` iterations with no tool call and no
   change to the project (gate mode: green iterations with nothing to commit) -> quiesced
6. budgets: --max-tokens, --max-cost (estimated) -> budget; --stop-at-quota -> quota
7. the iteration cap -> limit (blocked in seed 001's sense: the Review says what to do)
8. the deadline -> timeout
9. otherwise continue, with the previous learnings in the next prompt.
"""

from __future__ import annotations

from datetime import datetime

from finesse.models import Gate, LoopState, Outcome
from finesse.prompts import reverted_note
from finesse.record import replace
from finesse.recording import (
    RESUMABLE,
    Decision,
    Observation,
    controls,
    end,
    end_loop,
    excerpt,
    proceed,
    record,
)
from finesse.results import CommandResult, GateStep, Quota
from finesse.signals import digest
from finesse.spend import over_budget
from finesse.support.evidence import failure_excerpt

__all__ = ["RESUMABLE", "Decision", "Observation", "decide", "end_loop", "excerpt",
           "needs_verification", "quota_reached"]

MAX_REPLANS = 2
BLOCKING_STREAK = 3
RED_STREAK_LIMIT = 3
ABORTED_BY = frozenset({"/ralph-abort", "`ralph abort`"})


def claims_done(state: LoopState, observation: Observation) -> bool:
    """The agent says the work is done: the promise or VERIFIED_COMPLETE in a reply whose
    terminal line is not BLOCKED, or the loop-done file."""
    return observation.loop_done or observation.reading.claims_completion


def needs_verification(state: LoopState, observation: Observation) -> bool:
    """Whether the Stop hook must run the verification commands for this observation (it
    has read the reply and run the gate, not the commands yet)."""
    if not state.verify or observation.cancelled:
        return False
    if observation.reading.blocked:
        return False
    gate = observation.gate
    if gate is not None and not gate.green:
        return False  # the repair answers the claim; nothing could succeed now
    return claims_done(state, observation)


def decide(state: LoopState, observation: Observation) -> Decision:
    progress = f"{state.iteration}/{state.max_iterations}"
    now = observation.now
    reading = observation.reading
    if observation.cancelled:
        by = observation.cancelled_by or "the kill switch"
        outcome: Outcome = "aborted" if by in ABORTED_BY else "cancelled"
        ended = record(state, observation, outcome)
        return end(replace(ended, ended_by=by), now, outcome,
                   f"Ralph loop {outcome} by {by} at iteration {progress}.")
    step = observation.gate
    if step is not None:
        gated = _gated(state, observation, step, progress)
        if isinstance(gated, Decision):
            return gated
        state = gated
    if reading.blocked:
        blocker = reading.blocker or "(no reason given)"
        recorded = replace(record(state, observation, "blocked"), blocker=blocker)
        return end(recorded, now, "blocked",
                   f"Ralph loop blocked at iteration {progress}: {excerpt(blocker, 200)}",
                   [f"Blocked at iteration {state.iteration}: {blocker}"])
    if claims_done(state, observation) and (step is None or step.green):
        if state.verify and observation.verification is None:
            raise ValueError("a completion claim needs the verification results")
        results = observation.verification or []
        if all(result.passed for result in results):
            return _success(state, observation, progress)
        return _rejected_claim(state, observation, progress)
    repeated = (observation.reply is not None and bool(state.last_reply_digest)
                and digest(observation.reply) == state.last_reply_digest)
    idle = (not observation.tool_calls
            and (observation.tree_fingerprint is None
                 or observation.tree_fingerprint == state.tree_fingerprint))
    recorded = replace(record(state, observation, "continue"),
                       idle_iterations=state.idle_iterations + 1 if idle else 0)
    if recorded.gate is not None and step is not None:
        empty = recorded.gate.empty_iterations
        still = empty >= state.quiesce_after
        why = f"{empty} green iterations in a row with nothing to commit"
    else:
        still = recorded.idle_iterations >= state.quiesce_after
        why = (f"{recorded.idle_iterations} iterations in a row with no tool call and no "
               "change to the project")
    if repeated or still:
        why = "the same reply twice in a row" if repeated else why
        return end(recorded, now, "quiesced",
                   f"Ralph loop quiesced at iteration {progress}: {why}.")
    limited = _limits(recorded, now, progress, observation.quota)
    if limited is not None:
        return limited
    if step is not None and step.action == "repair":
        return proceed(recorded, now, repair=step.results)
    if step is not None and step.action == "reverted":
        return proceed(recorded, now, reverted_note(step.untouched))
    return proceed(recorded, now)


def _success(state: LoopState, observation: Observation, progress: str) -> Decision:
    """The claim stands: verified by green commands (or a green gate), or, with neither,
    on the agent's word alone, and said so."""
    reading = observation.reading
    how = (f"<promise>{state.promise}</promise>" if reading.promised
           else "RESULT: VERIFIED_COMPLETE" if reading.claims_completion
           else "the loop-done file")
    gate_green = observation.gate is not None and observation.gate.green
    if state.verify:
        checks = ", ".join(f"`{r.command}` exit {r.exit_code}"
                           for r in observation.verification or [])
        tail, verified = f" and verified: {checks}.", True
    elif gate_green:
        commands = state.gate.commands if state.gate is not None else []
        tail, verified = f" with the gate green ({len(commands)} command(s)).", True
    else:
        tail, verified = (" (unverified: no verification command, so it rests on the "
                          "agent's word)."), False
    recorded = replace(record(state, observation, "success"), verified=verified)
    return end(recorded, observation.now, "success",
               f"Ralph loop done: {how} at iteration {progress}{tail}")


def _limits(state: LoopState, now: datetime, progress: str,
            quota: Quota | None = None) -> Decision | None:
    """The resumable ends that apply whatever the reply said: the budgets, the quota, the
    cap, then the deadline."""
    spent = over_budget(state)
    if spent:
        return end(state, now, "budget",
                   f"Ralph loop stopped at iteration {progress}: its budget is spent: {spent}.")
    quota_end = quota_reached(state, quota)
    if quota_end:
        return end(state, now, "quota", f"Ralph loop stopped at iteration {progress}: {quota_end}")
    if state.iteration >= state.max_iterations:
        message = (f"Ralph loop stopped: {state.max_iterations} iterations made without "
                   f"<promise>{state.promise}</promise>.")
        return end(state, now, "limit", message, [_cap_blocker(state)])
    if state.deadline_at is not None and now >= state.deadline_at:
        return end(state, now, "timeout",
                   f"Ralph loop timed out after {state.timeout_minutes} minutes, at "
                   f"iteration {progress}.")
    return None


def quota_reached(state: LoopState, quota: Quota | None) -> str:
    """Why the plan's usage window is too full to go on, or ""."""
    if state.budgets.stop_at_quota is None or quota is None:
        return ""
    windows = [("five-hour", quota.five_hour, quota.five_hour_resets_at),
               ("weekly", quota.seven_day, quota.seven_day_resets_at)]
    for name, used, resets in windows:
        if used is not None and used >= state.budgets.stop_at_quota:
            when = (f"it resets at {resets:%Y-%m-%d %H:%M} UTC" if resets is not None
                    else "its reset time is unknown")
            return (f"the {name} usage window is at {used:g}% (--stop-at-quota "
                    f"{state.budgets.stop_at_quota}); {when}. Resume after that with "
                    f"{controls(state)[0]}.")
    return ""


def _cap_blocker(state: LoopState) -> str:
    """Seed 001: a cap that ends a loop is a BLOCKED result; the Review records its evidence
    and what the user must do."""
    red = [result for result in state.last_verification if not result.passed]
    if red:
        evidence = "; ".join(f"`{r.command}` exit {r.exit_code}" for r in red)
        evidence = f"the verification was still red ({evidence})"
    elif state.iterations and state.iterations[-1].approach:
        evidence = f"the last attempt was: {state.iterations[-1].approach}"
    else:
        evidence = "no verified result was reached"
    resume, abort = controls(state)
    return (f"BLOCKED (the iteration cap of {state.max_iterations} was hit): {evidence}. "
            f"Required user action: review the attempts above, then resume with "
            f"`{resume} --max-iterations {state.max_iterations * 2}` or give it up with "
            f"`{abort}`.")


def _rejected_claim(state: LoopState, observation: Observation, progress: str) -> Decision:
    """The agent claimed completion and a verification command is red."""
    results: list[CommandResult] = observation.verification or []
    failed = [result for result in results if not result.passed]
    fingerprint = "+".join(result.fingerprint for result in failed)
    streak = state.failure_streak + 1 if fingerprint == state.failure_fingerprint else 1
    recorded = replace(record(state, observation, "rejected"),
                       failure_fingerprint=fingerprint, failure_streak=streak)
    now = observation.now
    names = ", ".join(f"`{result.command}`" for result in failed)
    if streak >= BLOCKING_STREAK or (streak == 2 and state.replans >= MAX_REPLANS):
        why = (f"the same verification failure ({names}) {streak} times in a row"
               if streak >= BLOCKING_STREAK else
               f"the same verification failure ({names}) again after {MAX_REPLANS} re-plans")
        blocker = (f"BLOCKED (the re-plan limit was hit): {why}. Required user action: look "
                   "at the failure below, fix what the loop could not, then "
                   f"`{controls(state)[0]}`.")
        return end(replace(recorded, blocker=blocker), now, "limit",
                   f"Ralph loop stopped at iteration {progress}: {why}.", [blocker])
    limited = _limits(recorded, now, progress, observation.quota)
    if limited is not None:
        return limited
    feedback = ("Your completion claim was rejected: the verification failed.\n\n"
                + failure_excerpt(results))
    notes: list[str] = []
    if streak == 2:
        recorded = replace(recorded, replans=state.replans + 1)
        feedback += (
            f"\n\nThe same failure happened twice in a row. Stop: re-read the plan and the "
            f"failure, then write a new approach in a line starting `Re-plan:` before you "
            f"change anything (re-plan {recorded.replans} of {MAX_REPLANS}; a third "
            "identical failure stops the loop)."
        )
        notes.append(f"Re-plan {recorded.replans} asked at iteration {state.iteration}: "
                     f"{names} failed the same way twice.")
    return proceed(recorded, now, feedback, notes)


def _gate_counters(gate: Gate, step: GateStep) -> Gate:
    """Gate mode's counters after this iteration. A green iteration resets the red streak;
    a commit resets the empty count, a green one with nothing to commit raises it; a red
    one asks for a repair; a reverted repair raises the red streak. Red iterations break a
    run of empty ones (the count is of consecutive green iterations with nothing to commit).
    A completion claim in a red iteration does not end the loop: the repair comes first."""
    if step.action == "committed":
        return replace(gate, red_streak=0, empty_iterations=0, repairing=False,
                       iteration_base=step.commit)
    if step.action == "empty":
        return replace(gate, red_streak=0, empty_iterations=gate.empty_iterations + 1,
                       repairing=False)
    if step.action == "repair":
        return replace(gate, repairing=True, empty_iterations=0)
    if step.action == "reverted":
        return replace(gate, red_streak=gate.red_streak + 1, repairing=False,
                       empty_iterations=0, iteration_base=step.commit or gate.iteration_base)
    return gate


def _gated(state: LoopState, observation: Observation, step: GateStep,
           progress: str) -> LoopState | Decision:
    """Gate mode's own ends, before the general rules: a git failure or a red baseline is an
    infrastructure failure; a red streak of three is a failure. Else the updated counters."""
    now = observation.now
    if step.action == "error":
        return end(record(state, observation, "failure"), now, "failure",
                   f"Ralph loop failed at iteration {progress}: git: {step.error}")
    if step.baseline is not None and not all(result.passed for result in step.baseline):
        return end(record(state, observation, "failure"), now, "failure",
                   f"Ralph loop failed at iteration {progress}: the gate is red on the reverted "
                   "baseline too, so the gate or its environment is broken (an "
                   "infrastructure failure, not counted as an iteration's result).")
    if state.gate is None:
        raise ValueError("a gate step for a loop without a gate")
    counted = replace(state, gate=_gate_counters(state.gate, step))
    if counted.gate is not None and counted.gate.red_streak >= RED_STREAK_LIMIT:
        return end(record(counted, observation, "failure"), now, "failure",
                   "Ralph loop failed: a systemic red streak reverted three consecutive "
                   f"iterations (at iteration {progress}).")
    return counted
