"""The loop's decision at each stop: a pure function of the state and what was observed.

`decide` does no I/O. The ending rules are applied in a fixed order and the first match
wins (DESIGN.md): cancelled, completion promise, iteration cap, otherwise continue.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from finesse.models import IterationRecord, LoopState, Outcome, replace
from finesse.signals import has_promise

EXCERPT_CHARS = 300


@dataclass(frozen=True)
class Observation:
    """What the Stop hook saw: the last reply (None when it could not be read)."""

    reply: str | None
    now: datetime
    cancelled: bool = False


@dataclass(frozen=True)
class Decision:
    action: Literal["continue", "end"]
    state: LoopState
    reason: str = ""  # what the model gets when the loop continues
    message: str = ""  # what the user is shown

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


def loop_prompt(state: LoopState) -> str:
    """The prompt the model gets at each iteration: the header, then the same task."""
    return f"{iteration_header(state)}\n\n{state.prompt}"


def _record(state: LoopState, observation: Observation, result: str) -> LoopState:
    record = IterationRecord(
        number=state.iteration,
        started_at=state.iteration_started_at,
        ended_at=observation.now,
        result=result,
        reply_excerpt=excerpt(observation.reply or ""),
    )
    return replace(
        state,
        iterations=[*state.iterations, record],
        updated_at=observation.now,
        last_reply_excerpt=record.reply_excerpt or state.last_reply_excerpt,
    )


def end_loop(state: LoopState, outcome: Outcome, message: str, now: datetime) -> LoopState:
    return replace(state, outcome=outcome, ended_at=now, updated_at=now, end_message=message)


def _ended(state: LoopState, observation: Observation, outcome: Outcome, message: str) -> Decision:
    recorded = _record(state, observation, outcome)
    return Decision("end", end_loop(recorded, outcome, message, observation.now), message=message)


def decide(state: LoopState, observation: Observation) -> Decision:
    done = f"{state.iteration}/{state.max_iterations}"
    if observation.cancelled:
        return _ended(state, observation, "cancelled", f"Ralph loop cancelled at iteration {done}.")
    if observation.reply is not None and has_promise(observation.reply, state.promise):
        return _ended(
            state, observation, "success",
            f"Ralph loop done: <promise>{state.promise}</promise> seen at iteration {done}.",
        )
    if state.iteration >= state.max_iterations:
        return _ended(
            state, observation, "limit",
            f"Ralph loop stopped: {state.max_iterations} iterations made without "
            f"<promise>{state.promise}</promise>. To go on, start it again with a higher "
            "--max-iterations.",
        )
    recorded = _record(state, observation, "continue")
    following = replace(
        recorded, iteration=state.iteration + 1, iteration_started_at=observation.now
    )
    return Decision(
        "continue",
        following,
        reason=loop_prompt(following),
        message=f"Ralph iteration {following.iteration}/{following.max_iterations}",
    )
