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
from typing import Literal

from finesse import signals
from finesse.models import IterationRecord, LoopState, Outcome, replace
from finesse.verify import CommandResult, failure_excerpt

EXCERPT_CHARS = 300
STORED_OUTPUT_CHARS = 1500
MAX_REPLANS = 2
BLOCKING_STREAK = 3
RESUMABLE: frozenset[str] = frozenset({"limit", "quiesced", "timeout", "blocked"})
RECORD_REQUEST = (
    "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
    "`Next: ...`."
)


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


def iteration_header(state: LoopState) -> str:
    return (
        f"Ralph iteration {state.iteration}/{state.max_iterations}: output "
        f"<promise>{state.promise}</promise> only when it is completely true"
    )


def protocol_notes(state: LoopState) -> str:
    """What follows the task in every prompt: where the plan is, how to end, what to record."""
    lines = []
    if state.plan_file:
        lines.append(f"The plan is {state.plan_file}: re-read it now; your attempts are "
                     "recorded under its `## Attempts`.")
    if state.verify:
        shown = ", ".join(f"`{command}`" for command in state.verify)
        lines.append(f"When you claim completion, the plugin runs {shown} itself and rejects "
                     "the claim if any fails.")
    lines.append("If you cannot go on, end with a line `RESULT: BLOCKED` followed by what "
                 "blocks you.")
    lines.append(RECORD_REQUEST)
    return "\n".join(lines)


def loop_prompt(state: LoopState, feedback: str = "") -> str:
    """The prompt of each iteration: the header, the same task, then the protocol notes and
    what the last iteration left to fix."""
    parts = [iteration_header(state), state.prompt, "---", protocol_notes(state)]
    if feedback:
        parts.append(feedback)
    return "\n\n".join(parts)


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
              notes: list[str] | None = None) -> Decision:
    following = replace(state, iteration=state.iteration + 1, iteration_started_at=now)
    return Decision(
        "continue", following, reason=loop_prompt(following, feedback),
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
    if reply is not None and signals.claims_completion(reply, state.promise):
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
    if repeated or recorded.idle_iterations >= state.quiesce_after:
        why = ("the same reply twice in a row" if repeated else
               f"{recorded.idle_iterations} iterations in a row with no tool call and no "
               "change to the project")
        return _end(recorded, now, "quiesced", f"Ralph loop quiesced at iteration {done}: {why}.")
    limited = _limits(recorded, now, done)
    if limited is not None:
        return limited
    return _continue(recorded, now)
