"""What the engine works with: the observation of one stop, the decision it returns, and how
an iteration is recorded into the loop's state. Pure: no I/O."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from finesse import signals
from finesse.models import IterationRecord, LoopState, Outcome
from finesse.prompts import loop_prompt, repair_prompt
from finesse.record import Record, field, replace
from finesse.results import CommandResult, Cursor, GateStep, ModelUsage, Quota
from finesse.signals import Reading
from finesse.spend import cost

EXCERPT_CHARS = 300
STORED_OUTPUT_CHARS = 1500
RESUMABLE: frozenset[str] = frozenset(
    {"limit", "quiesced", "timeout", "blocked", "budget", "quota"})


class Observation(Record):
    """What a stop saw (`finesse.loop.observe` gathers it). `reply` is None when it could not
    be read; `reading` is that reply read once (`signals.read_reply`: an empty Reading for
    no reply); `verification` is None when no command was run; `tool_calls` None when the
    transcript could not tell."""

    reply: str | None
    now: datetime
    cancelled: bool = False
    verification: list[CommandResult] | None = None
    tool_calls: int | None = None
    tree_fingerprint: str | None = None
    gate: GateStep | None = None  # gate mode: what the gate and git did this iteration
    loop_done: bool = False  # the agent wrote `done` to its loop-done file
    reading: Reading = field(default_factory=Reading)
    cancelled_by: str = ""  # who asked for the cancel, when one was asked for
    usage: list[ModelUsage] = field(default_factory=list)  # this iteration's tokens, by model
    usage_partial: bool = False
    cursor: Cursor | None = None  # where the transcript was read to
    quota: Quota | None = None  # the plan's usage windows, as the status line last saw them


class Decision(Record):
    action: Literal["continue", "end"]
    state: LoopState
    reason: str = ""  # what the model gets when the loop continues
    message: str = ""  # what the user is shown
    notes: list[str] = field(default_factory=list)  # for the plan's Review

    @property
    def outcome(self) -> Outcome | None:
        return self.state.outcome


def controls(state: LoopState) -> tuple[str, str]:
    """How a person resumes or gives up this loop: the slash commands in its session, the
    `ralph` commands for a headless run (`ralph run`), which has no session to type them in."""
    if state.headless is not None:
        return (f"ralph resume --session {state.session_id}",
                f"ralph abort --session {state.session_id}")
    return "/ralph-resume", "/ralph-abort"


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def stored(results: list[CommandResult]) -> list[CommandResult]:
    return [replace(result, output_tail=result.output_tail[-STORED_OUTPUT_CHARS:])
            for result in results]


def record(state: LoopState, observation: Observation, result: str) -> LoopState:
    """The state with this iteration recorded (its reply, checks and what git did)."""
    reply = observation.reply or ""
    fields = observation.reading.fields
    tree_changed = (
        None if observation.tree_fingerprint is None
        else observation.tree_fingerprint != state.tree_fingerprint
    )
    entry = IterationRecord(
        number=state.iteration,
        started_at=state.iteration_started_at,
        ended_at=observation.now,
        result=result,
        reply_excerpt=excerpt(reply),
        approach=fields.get("approach", ""),
        evidence=fields.get("evidence", ""),
        learning=fields.get("learning", ""),
        next_action=fields.get("next", ""),
        verification=stored(observation.verification or []),
        tool_calls=observation.tool_calls,
        tree_changed=tree_changed,
        usage=list(observation.usage),
        usage_partial=observation.usage_partial,
        cost=round(cost(list(observation.usage), state.prices), 6),
        **_gate_fields(observation.gate),
    )
    learnings = state.learnings
    if entry.learning and entry.learning not in learnings:
        learnings = [*learnings, entry.learning]
    cursor = observation.cursor
    return replace(
        state,
        cursor=cursor or state.cursor,
        iterations=[*state.iterations, entry],
        updated_at=observation.now,
        last_reply_excerpt=entry.reply_excerpt or state.last_reply_excerpt,
        last_reply_digest=signals.digest(reply) if observation.reply is not None else "",
        tree_fingerprint=observation.tree_fingerprint,
        learnings=learnings,
        last_verification=(stored(observation.verification)
                           if observation.verification is not None
                           else state.last_verification),
    )


def _gate_fields(step: GateStep | None) -> dict[str, Any]:
    if step is None:
        return {}
    return {"gate": stored(step.results), "gate_action": step.action, "commit": step.commit,
            "restored": step.restored, "removed": step.removed, "untouched": step.untouched}


def end_loop(state: LoopState, outcome: Outcome, message: str, now: datetime) -> LoopState:
    return replace(state, outcome=outcome, ended_at=now, updated_at=now, end_message=message)


def end(state: LoopState, now: datetime, outcome: Outcome, message: str,
        notes: list[str] | None = None) -> Decision:
    """End the loop; an iteration recorded as "continue" is marked with the outcome."""
    if state.iterations and state.iterations[-1].result == "continue":
        last = replace(state.iterations[-1], result=outcome)
        state = replace(state, iterations=[*state.iterations[:-1], last])
    return Decision("end", end_loop(state, outcome, message, now), message=message,
                    notes=notes or [])


def proceed(state: LoopState, now: datetime, feedback: str = "",
            notes: list[str] | None = None, repair: list[CommandResult] | None = None
            ) -> Decision:
    """Go on to the next iteration, with `feedback` (or the repair instruction) after the
    standing prompt."""
    following = replace(state, iteration=state.iteration + 1, iteration_started_at=now)
    reason = (repair_prompt(following, repair) if repair is not None
              else loop_prompt(following, feedback))
    return Decision(
        "continue", following, reason=reason,
        message=f"Ralph iteration {following.iteration}/{following.max_iterations}",
        notes=notes or [],
    )
