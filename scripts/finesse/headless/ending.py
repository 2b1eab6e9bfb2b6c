"""The ends only a headless iteration can have, and how they are recorded: its `claude -p`
could not start or failed (blocked: a person must fix what stops it), a usage limit refused
it (a resumable stop, or a wait for the reset with --wait-on-limit), or it ran over its time
(killed, recorded, and the loop goes on). Everything else is `engine.decide`'s.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from finesse.engine import Decision, Observation
from finesse.errors import StateError
from finesse.headless.child import ChildResult
from finesse.models import LoopState
from finesse.record import replace
from finesse.recording import end, excerpt, record
from finesse.support import git as gitstate
from finesse.support.numbers import RESET_HORIZON

# Without a reset time (an API key's rate limit), how long --wait-on-limit waits.
UNKNOWN_RESET_WAIT = timedelta(seconds=60)
# Waiting past the reported reset by this much: the two clocks need not agree.
RESET_MARGIN = timedelta(seconds=5)


class LoopVanished(StateError):
    """The loop's file went away and no history record says how it ended."""


def failure(result: ChildResult) -> str:
    """Why the iteration's `claude -p` failed, not through the agent's doing: it could not
    start, an API error outlasted Claude Code's retries, or it died before its reply ended.
    "" when it did not fail (a usage limit is not a failure: see `limited`)."""
    if result.exit_code is None and not result.killed:
        return f"could not start it: {result.stderr_tail or 'unknown error'}"
    error = result.stream.error
    if error is not None and not error.limited:
        status = f" (API status {error.status})" if error.status else ""
        return f"{error.message}{status}"
    if result.killed or result.stream.complete or error is not None:
        return ""
    said = [line.strip() for line in result.stderr_tail.splitlines() if line.strip()]
    detail = f": {excerpt(said[-1], 300)}" if said else ""
    return f"it exited with code {result.exit_code} before its reply ended{detail}"


def limited(result: ChildResult) -> bool:
    error = result.stream.error
    return error is not None and error.limited and not result.killed


def bare_observation(state: LoopState, result: ChildResult, now: datetime) -> Observation:
    """An iteration with no reply to read: its tool calls, usage and the tree."""
    summary = result.stream
    return Observation(reply=None, now=now, tool_calls=summary.tool_calls,
                       usage=list(summary.usage), usage_partial=summary.usage_partial,
                       tree_fingerprint=gitstate.tree_fingerprint(Path(state.project_root)))


def _done(state: LoopState) -> str:
    return f"{state.iteration}/{state.max_iterations}"


def blocked(state: LoopState, observation: Observation, why: str) -> Decision:
    blocker = (f"BLOCKED (claude -p failed at iteration {state.iteration}): {why}. Required "
               "user action: fix what stops claude from running (the message above), then "
               "`ralph resume`.")
    recorded = _with_excerpt(replace(record(state, observation, "blocked"), blocker=blocker),
                             f"(claude -p failed: {why})")
    return end(recorded, observation.now, "blocked",
               f"Ralph loop blocked at iteration {_done(state)}: claude -p failed: "
               f"{excerpt(why, 300)}", [blocker])


def _when(result: ChildResult) -> str:
    error = result.stream.error
    resets = error.resets_at if error is not None else None
    if resets is None:
        return "no reset time was reported (with an API key the CLI gives none)"
    return f"it resets at {resets:%Y-%m-%d %H:%M} UTC"


def _what(result: ChildResult) -> str:
    error = result.stream.error
    kind = error.limit_type if error is not None and error.limit_type else ""
    return f"a usage limit ({kind})" if kind else "a usage limit (HTTP 429)"


def quota(state: LoopState, observation: Observation, result: ChildResult) -> Decision:
    """A usage limit ended the iteration and the run does not wait: a resumable stop with
    the reset time, when Claude Code reported one."""
    assert state.headless is not None
    error = result.stream.error
    known = error is not None and error.resets_at is not None
    past = (" The reset comes after the loop's deadline (--timeout-minutes), so it did not "
            "wait." if state.headless.wait_on_limit else
            f" Resume {'after that' if known else 'once the limit has passed'} with "
            "`ralph resume`, or run with --wait-on-limit.")
    message = (f"Ralph loop stopped at iteration {_done(state)}: claude -p hit "
               f"{_what(result)}; {_when(result)}.{past}")
    recorded = _with_excerpt(record(state, observation, "quota"),
                             f"({_what(result)}: {excerpt(_error_text(result), 200)})")
    return end(recorded, observation.now, "quota", message)


def _error_text(result: ChildResult) -> str:
    return result.stream.error.message if result.stream.error is not None else ""


def limit_wait(state: LoopState, result: ChildResult, now: datetime) -> datetime | None:
    """Until when --wait-on-limit waits before the next iteration; None when the loop does
    not wait (no --wait-on-limit, or the reset comes after the loop's deadline)."""
    if state.headless is None or not state.headless.wait_on_limit:
        return None
    resets = sane_reset(result, now)
    until = resets + RESET_MARGIN if resets is not None else now + UNKNOWN_RESET_WAIT
    if state.deadline_at is not None and until > state.deadline_at:
        return None
    return until


def sane_reset(result: ChildResult, now: datetime) -> datetime | None:
    """The reset time the limit reported, unless it lies further off than any usage window
    (`RESET_HORIZON`): such a figure is no reset time (the year 9999 would have the run
    wait for ever, and overflows the time it adds its margin to)."""
    error = result.stream.error
    resets = error.resets_at if error is not None else None
    return resets if resets is None or resets - now <= RESET_HORIZON else None


def limit_note(result: ChildResult, until: datetime) -> str:
    return (f"The last iteration was cut short by {_what(result)}; the run waited until its "
            f"reset ({until:%H:%M:%S} UTC) before this one. Check what it left first.")


def limit_words(result: ChildResult, until: datetime | None) -> str:
    if until is None:
        return ""
    return (f"claude -p hit {_what(result)}; {_when(result)}: waiting until "
            f"{until:%Y-%m-%d %H:%M:%S} UTC (--wait-on-limit)")


def kill_note(result: ChildResult, limit_name: str) -> str:
    if result.killed != "timeout":
        return ""
    return (f"The last iteration was killed after {result.duration:.0f} s: it ran over "
            f"{limit_name or 'its time limit'}. Work in smaller steps.")


def _with_excerpt(state: LoopState, text: str) -> LoopState:
    if not state.iterations or state.iterations[-1].reply_excerpt:
        return state
    last = replace(state.iterations[-1], reply_excerpt=excerpt(text))
    return replace(state, iterations=[*state.iterations[:-1], last])


def annotate(decision: Decision, note: str) -> Decision:
    """An iteration that was killed or cut short says so in its record and the notebook."""
    if not note:
        return decision
    return replace(decision, state=_with_excerpt(decision.state, note),
                   notes=[*decision.notes, note])
