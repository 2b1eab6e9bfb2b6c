"""The loop's decision at each stop: a pure function of the state and what was observed.

`decide` does no I/O: the Stop hook gathers the observation (the reply, the verification
results it ran, the tool calls, the working tree) and acts on the decision. The ending rules
are applied in a fixed order and the first match wins (DESIGN.md):

1. cancelled (kill switch)
2. completion claimed (promise or `RESULT: VERIFIED_COMPLETE`): with verification commands,
   all green ends in success; red continues with the failure, asks for a re-plan when the
   same failure repeats, and ends as blocked on a third identical failure or when the
   re-plans are used up. Without verification commands, the claim ends in success.
3. `RESULT: BLOCKED` -> blocked
4. quiescence: the same reply twice in a row, or `quiesce_after` iterations in a row with
   no tool call and no change to the working tree -> quiesced (resumable)
5. iteration cap -> limit (resumable)
6. deadline passed -> timeout (resumable)
7. otherwise continue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from finesse import signals
from finesse.models import CommandResult, GateStep, IterationRecord, LoopState, Outcome, replace
from finesse.prompts import iteration_header, loop_prompt, protocol_notes, repair_prompt
from finesse.support.evidence import failure_excerpt

__all__ = ["Decision", "Observation", "decide", "iteration_header", "loop_prompt",
           "protocol_notes"]

EXCERPT_CHARS = 300
STORED_OUTPUT_CHARS = 1500
MAX_REPLANS = 2
BLOCKING_STREAK = 3
RED_STREAK_LIMIT = 3
RESUMABLE: frozenset[str] = frozenset({"limit", "quiesced", "timeout", "blocked"})


@dataclass(frozen=True)
class Observation:
    """What the Stop hook saw. `reply` is None when it could not be read; `verification` is
    None when no command was run; `tool_calls` None when the transcript could not tell."""

    reply: str | None
    now: datetime
    cancelled: bool = False
    verification: list[CommandResult] | None = None
    tool_calls: int | None = None
    tree_fingerprint: str | None = None
    gate: GateStep | None = None  # gate mode: what the gate and git did this iteration
    loop_done: bool = False  # the agent wrote `done` to its loop-done file


@dataclass(frozen=True)
class Decision:
    action: Literal["continue", "end"]
    state: LoopState
    reason: str = ""  # what the model gets when the loop continues
    message: str = ""  # what the user is shown
    notes: list[str] = field(default_factory=list)  # for the plan's Review

    @property
    def outcome(self) -> Outcome | None:
        return self.state.outcome


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _stored(results: list[CommandResult]) -> list[CommandResult]:
    return [replace(result, output_tail=result.output_tail[-STORED_OUTPUT_CHARS:])
            for result in results]


def _record(state: LoopState, observation: Observation, result: str) -> LoopState:
    reply = observation.reply or ""
    fields = signals.record_fields(reply)
    tree_changed = (
        None if observation.tree_fingerprint is None
        else observation.tree_fingerprint != state.tree_fingerprint
    )
    record = IterationRecord(
        number=state.iteration,
        started_at=state.iteration_started_at,
        ended_at=observation.now,
        result=result,
        reply_excerpt=excerpt(reply),
        approach=fields.get("approach", ""),
        evidence=fields.get("evidence", ""),
        learning=fields.get("learning", ""),
        next_action=fields.get("next", ""),
        verification=_stored(observation.verification or []),
        tool_calls=observation.tool_calls,
        tree_changed=tree_changed,
        **_gate_fields(observation.gate),
    )
    learnings = state.learnings
    if record.learning and record.learning not in learnings:
        learnings = [*learnings, record.learning]
    return replace(
        state,
        iterations=[*state.iterations, record],
        updated_at=observation.now,
        last_reply_excerpt=record.reply_excerpt or state.last_reply_excerpt,
        last_reply_digest=signals.digest(reply) if observation.reply is not None else "",
        tree_fingerprint=observation.tree_fingerprint,
        learnings=learnings,
        last_verification=(_stored(observation.verification)
                           if observation.verification is not None
                           else state.last_verification),
    )


def _gate_fields(step: GateStep | None) -> dict[str, Any]:
    if step is None:
        return {}
    return {"gate": _stored(step.results), "gate_action": step.action, "commit": step.commit,
            "restored": step.restored, "removed": step.removed}


def _gate_counters(state: LoopState, step: GateStep) -> LoopState:
    """Gate mode's counters after this iteration. A green iteration resets the red streak;
    a commit resets the empty count, a green one with nothing to commit raises it; a red
    one asks for a repair; a reverted repair raises the red streak. Red iterations break a
    run of empty ones (the count is of consecutive green iterations with nothing to commit).
    A loop-done signal in a red iteration does not end the loop: the repair comes first."""
    if step.action == "committed":
        return replace(state, red_streak=0, empty_iterations=0, repairing=False,
                       iteration_base=step.commit)
    if step.action == "empty":
        return replace(state, red_streak=0, empty_iterations=state.empty_iterations + 1,
                       repairing=False)
    if step.action == "repair":
        return replace(state, repairing=True, empty_iterations=0)
    if step.action == "reverted":
        return replace(state, red_streak=state.red_streak + 1, repairing=False,
                       empty_iterations=0, iteration_base=step.commit or state.iteration_base)
    return state


def end_loop(state: LoopState, outcome: Outcome, message: str, now: datetime) -> LoopState:
    return replace(state, outcome=outcome, ended_at=now, updated_at=now, end_message=message)


def _end(state: LoopState, now: datetime, outcome: Outcome, message: str,
         notes: list[str] | None = None) -> Decision:
    """End the loop; an iteration recorded as "continue" is marked with the outcome."""
    if state.iterations and state.iterations[-1].result == "continue":
        last = replace(state.iterations[-1], result=outcome)
        state = replace(state, iterations=[*state.iterations[:-1], last])
    return Decision("end", end_loop(state, outcome, message, now), message=message,
                    notes=notes or [])


def _continue(state: LoopState, now: datetime, feedback: str = "",
              notes: list[str] | None = None, repair: list[CommandResult] | None = None
              ) -> Decision:
    following = replace(state, iteration=state.iteration + 1, iteration_started_at=now)
    reason = (repair_prompt(following, repair) if repair is not None
              else loop_prompt(following, feedback))
    return Decision(
        "continue", following, reason=reason,
        message=f"Ralph iteration {following.iteration}/{following.max_iterations}",
        notes=notes or [],
    )


def _limits(state: LoopState, now: datetime, done: str) -> Decision | None:
    """The resumable ends that apply whatever the reply said: cap, then deadline."""
    if state.iteration >= state.max_iterations:
        return _end(state, now, "limit",
                    f"Ralph loop stopped: {state.max_iterations} iterations made without "
                    f"<promise>{state.promise}</promise>.")
    if state.deadline_at is not None and now >= state.deadline_at:
        return _end(state, now, "timeout",
                    f"Ralph loop timed out after {state.timeout_minutes} minutes, at "
                    f"iteration {done}.")
    return None


def _rejected_claim(state: LoopState, observation: Observation, done: str) -> Decision:
    """The agent claimed completion and a verification command is red."""
    results = observation.verification or []
    failed = [result for result in results if not result.passed]
    fingerprint = "+".join(result.fingerprint for result in failed)
    streak = state.failure_streak + 1 if fingerprint == state.failure_fingerprint else 1
    recorded = replace(_record(state, observation, "rejected"),
                       failure_fingerprint=fingerprint, failure_streak=streak)
    now = observation.now
    names = ", ".join(f"`{result.command}`" for result in failed)
    if streak >= BLOCKING_STREAK or (streak == 2 and state.replans >= MAX_REPLANS):
        why = (f"the same verification failure ({names}) {streak} times in a row"
               if streak >= BLOCKING_STREAK else
               f"the same verification failure ({names}) again after {MAX_REPLANS} re-plans")
        blocker = f"Blocked by {why}."
        return _end(replace(recorded, blocker=blocker), now, "blocked",
                    f"Ralph loop blocked at iteration {done}: {why}.", [blocker])
    limited = _limits(recorded, now, done)
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
            "identical failure ends the loop as blocked)."
        )
        notes.append(f"Re-plan {recorded.replans} asked at iteration {state.iteration}: "
                     f"{names} failed the same way twice.")
    return _continue(recorded, now, feedback, notes)


def decide(state: LoopState, observation: Observation) -> Decision:
    done = f"{state.iteration}/{state.max_iterations}"
    now = observation.now
    reply = observation.reply
    if observation.cancelled:
        return _end(_record(state, observation, "cancelled"), now, "cancelled",
                    f"Ralph loop cancelled at iteration {done}.")
    step = observation.gate
    if step is not None:
        gated = _gated(state, observation, step, done)
        if isinstance(gated, Decision):
            return gated
        state = gated
    if observation.loop_done and (step is None or step.green):
        return _end(_record(state, observation, "success"), now, "success",
                    f"Ralph loop done: the agent wrote done to its loop-done file at "
                    f"iteration {done}.")
    claimed = reply is not None and signals.claims_completion(reply, state.promise)
    if claimed and step is not None and not step.green:
        claimed = False  # in gate mode a red gate is the answer to any claim: repair first
    if claimed and reply is not None:
        if state.verify and observation.verification is None:
            raise ValueError("a completion claim needs the verification results")
        if all(result.passed for result in observation.verification or []):
            verified = (f" and verified ({len(state.verify)} command(s) green)"
                        if state.verify else "")
            return _end(_record(state, observation, "success"), now, "success",
                        f"Ralph loop done: <promise>{state.promise}</promise> seen at "
                        f"iteration {done}{verified}.")
        return _rejected_claim(state, observation, done)
    blocked = signals.blocker(reply) if reply is not None else None
    if blocked is not None:
        recorded = replace(_record(state, observation, "blocked"), blocker=blocked)
        return _end(recorded, now, "blocked",
                    f"Ralph loop blocked at iteration {done}: {excerpt(blocked, 200)}",
                    [f"Blocked at iteration {state.iteration}: {blocked}"])
    repeated = (reply is not None and bool(state.last_reply_digest)
                and signals.digest(reply) == state.last_reply_digest)
    idle = (not observation.tool_calls
            and (observation.tree_fingerprint is None
                 or observation.tree_fingerprint == state.tree_fingerprint))
    recorded = replace(_record(state, observation, "continue"),
                       idle_iterations=state.idle_iterations + 1 if idle else 0)
    if step is not None:
        still = recorded.empty_iterations >= state.quiesce_after
        why = f"{recorded.empty_iterations} green iterations in a row with nothing to commit"
    else:
        still = recorded.idle_iterations >= state.quiesce_after
        why = (f"{recorded.idle_iterations} iterations in a row with no tool call and no "
               "change to the project")
    if repeated or still:
        why = "the same reply twice in a row" if repeated else why
        return _end(recorded, now, "quiesced", f"Ralph loop quiesced at iteration {done}: {why}.")
    limited = _limits(recorded, now, done)
    if limited is not None:
        return limited
    if step is not None and step.action == "repair":
        return _continue(recorded, now, repair=step.results)
    if step is not None and step.action == "reverted":
        return _continue(recorded, now, "Your last attempt was reverted: the gate was still "
                         "red after the repair. Start this iteration from the reverted tree.")
    return _continue(recorded, now)


def _gated(state: LoopState, observation: Observation, step: GateStep,
           done: str) -> LoopState | Decision:
    """Gate mode's own ends, before the general rules: a git failure or a red baseline is an
    infrastructure failure; a red streak of three is a failure. Else the updated counters."""
    now = observation.now
    if step.action == "error":
        return _end(_record(state, observation, "failure"), now, "failure",
                    f"Ralph loop failed at iteration {done}: git: {step.error}")
    if step.baseline is not None and not all(result.passed for result in step.baseline):
        return _end(_record(state, observation, "failure"), now, "failure",
                    f"Ralph loop failed at iteration {done}: the gate is red on the reverted "
                    "baseline too, so the gate or its environment is broken (an "
                    "infrastructure failure, not counted as an iteration's result).")
    counted = _gate_counters(state, step)
    if counted.red_streak >= RED_STREAK_LIMIT:
        return _end(_record(counted, observation, "failure"), now, "failure",
                    "Ralph loop failed: a systemic red streak reverted three consecutive "
                    f"iterations (at iteration {done}).")
    return counted
