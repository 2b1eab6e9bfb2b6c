"""Judge mode at the subagents' edges: what a worker's or a judge's start and stop do to
the loop. Pure: the hooks measure (the tree, the verifiers, the protected paths, the
spend) and pass it in; nothing here reads a file or runs a command.

- A worker start opens the next attempt (its prompt is the plugin's: seed 002's template)
  unless an attempt is already open or the agent id was used before (a resumed agent): such
  a worker is not counted, and its writes are denied (`guard`).
- A judge start is counted only for the open attempt's worker result, once; if the tree
  changed since the verifiers ran, the hook ran them again first.
- A stop's final message is read against the contract; an invalid one is answered with the
  problem, at most CONTRACT_RETRIES times, then the attempt ends as a contract failure.
- A verdict given while the working tree changed is void: the attempt needs a new judge.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from finesse.judging.prompts import judge_prompt, worker_prompt
from finesse.judging.records import (
    CONTRACT_RETRIES,
    JUDGE_TYPE,
    WORKER_TYPE,
    Attempt,
    JudgeState,
    merge_usage,
)
from finesse.models import IterationRecord, LoopState, judge_of
from finesse.record import Record, field, replace
from finesse.recording import excerpt, stored
from finesse.results import CommandResult, ModelUsage
from finesse.spend import cost
from finesse.support.snapshot import changed

NOT_COUNTED = ("You are not counted by this judge-mode loop: {why}. Do not change anything "
               "(your writes are denied); reply with one line saying so and stop.")


class Seen(Record):
    """The working tree at a subagent's edge: its fingerprint, and the changed files with
    their size and time (`finesse.loop.judge_watch.Tree`)."""

    now: datetime
    tree: str | None = None
    changed: list[str] = field(default_factory=list)


class Step(Record):
    state: LoopState
    context: str = ""  # SubagentStart: what the subagent is told first
    retry: str = ""  # SubagentStop: why it must answer again (the hook blocks with it)
    closed: IterationRecord | None = None  # an attempt ended: its record


def role(state: LoopState, agent_id: str, agent_type: str) -> str:
    """"worker" or "judge" when this agent is the open attempt's, else ""."""
    current = judge_of(state).current
    if current is None or not agent_id:
        return ""
    if agent_type == WORKER_TYPE and agent_id == current.worker_id:
        return "worker"
    if agent_type == JUDGE_TYPE and agent_id == current.judge_id:
        return "judge"
    return ""


def note_outside(judge: JudgeState, now_changed: list[str], where: str) -> JudgeState:
    """Record the files that changed since the last checkpoint, when no worker ran between."""
    names = changed(judge.snapshot, now_changed)
    entries = [f"{name} ({where})" for name in names]
    current = judge.current
    attempts = judge.attempts
    if current is not None and entries:
        attempts = [*attempts[:-1], replace(current,
                                            outside_changes=current.outside_changes + entries)]
    return replace(judge, snapshot=list(now_changed), attempts=attempts,
                   outside_changes=judge.outside_changes + entries)


def _update(judge: JudgeState, attempt: Attempt, **changes: Any) -> JudgeState:
    return replace(judge, attempts=[*judge.attempts[:-1], attempt],
                   activity=judge.activity + 1, **changes)


def worker_start(state: LoopState, agent_id: str, seen: Seen) -> Step:
    judge = judge_of(state)
    if agent_id in judge.used_agents:
        return Step(state, NOT_COUNTED.format(why="this agent already worked for an earlier "
                                                  "attempt, and a worker is never reused"))
    if judge.current is not None:
        return Step(state, NOT_COUNTED.format(
            why=f"attempt {judge.current.number} already has its worker"))
    last = judge.last
    if last is not None and last.number >= state.iteration:
        if state.iteration >= state.max_iterations:
            return Step(state, NOT_COUNTED.format(
                why=f"the loop's {state.max_iterations} attempts are used up"))
        state = replace(state, iteration=state.iteration + 1, iteration_started_at=seen.now)
    judge = note_outside(judge, seen.changed,
                         f"changed outside a worker, before attempt {state.iteration}")
    attempt = Attempt(number=state.iteration, started_at=seen.now, worker_id=agent_id,
                      worker_started_at=seen.now)
    # `waiting_for` stays: a background worker's start may come after the stop that told
    # the orchestrator to wait for it.
    judge = replace(judge, attempts=[*judge.attempts, attempt], activity=judge.activity + 1,
                    used_agents=[*judge.used_agents, agent_id])
    return Step(replace(state, judge=judge), worker_prompt(state, judge))


def needs_verification(state: LoopState, tree: str | None) -> bool:
    """Whether a judge starting now needs the verifiers run again: the open attempt has a
    worker result, and the tree is not the one they ran on."""
    current = judge_of(state).current
    return (current is not None and current.worker is not None
            and not current.judge_id and current.verified_tree != tree)


def judge_start(state: LoopState, agent_id: str, seen: Seen,
                verification: list[CommandResult] | None = None,
                protect_changed: list[str] | None = None, after: Seen | None = None) -> Step:
    """`verification` and `protect_changed`: measured again because the tree changed since
    the worker stopped (see `needs_verification`); `after` is the tree after that run (what
    the verifiers themselves wrote is not a change made outside a worker)."""
    judge = judge_of(state)
    current = judge.current
    if agent_id in judge.used_agents:
        return Step(state, NOT_COUNTED.format(why="this agent already judged or worked"))
    if current is None or current.worker is None:
        return Step(state, NOT_COUNTED.format(why="there is no worker result to judge yet"))
    if current.judge_id:
        return Step(state, NOT_COUNTED.format(
            why=f"attempt {current.number} already has its judge"))
    judge = note_outside(judge, seen.changed,
                         f"changed outside a worker, before the judge of attempt "
                         f"{current.number}")
    current = judge.current or current
    seen = after or seen
    judge = replace(judge, snapshot=list(seen.changed))
    if verification is not None:
        current = replace(current, verification=stored(verification),
                          verified_tree=seen.tree,
                          protect_changed=(current.protect_changed if protect_changed is None
                                           else protect_changed))
        state = replace(state, last_verification=stored(verification))
    current = replace(current, judge_id=agent_id, judge_started_at=seen.now,
                      judge_tree=seen.tree, judge_problems=[], judge_usage=[])
    judge = _update(judge, current, used_agents=[*judge.used_agents, agent_id])
    return Step(replace(state, judge=judge), judge_prompt(state, judge, current))


def retry_text(kind: str, problem: str, tries: int) -> str:
    contract = "worker" if kind == "worker" else "judge"
    return (f"Your final message does not hold the {contract} JSON the loop needs: {problem}. "
            f"Reply again with only the {contract} JSON object, exactly the fields your "
            f"instructions give (try {tries} of {CONTRACT_RETRIES}; then this attempt is "
            "recorded as a contract failure).")


def invalid(state: LoopState, kind: str, problem: str, now: datetime,
            usage: list[ModelUsage]) -> Step:
    """The worker's or the judge's final message broke its contract."""
    judge = judge_of(state)
    current = judge.current
    assert current is not None
    if kind == "worker":
        problems = [*current.worker_problems, problem]
        current = replace(current, worker_problems=problems, worker_usage=usage)
    else:
        problems = [*current.judge_problems, problem]
        current = replace(current, judge_problems=problems, judge_usage=usage)
    judge = _update(judge, current)
    if len(problems) <= CONTRACT_RETRIES:
        return Step(replace(state, judge=judge), retry=retry_text(kind, problem, len(problems)))
    if kind == "worker":
        current = replace(current, worker_ended_at=now)
    else:
        current = replace(current, judge_ended_at=now)
    judge = _update(judge, current)
    note = (f"the {kind}'s final message broke the contract {len(problems)} times; the last "
            f"problem: {problem}")
    return close(replace(state, judge=judge), "contract-failure", excerpt(note, 300), now)


def worker_done(state: LoopState, worker: dict[str, Any], seen: Seen,
                verification: list[CommandResult], protect_changed: list[str],
                usage: list[ModelUsage]) -> Step:
    """A valid worker result, with the verifiers the hook ran after it (`seen` is the tree
    after that run)."""
    judge = judge_of(state)
    current = judge.current
    assert current is not None
    current = replace(current, worker=worker, worker_ended_at=seen.now,
                      verification=stored(verification), verified_tree=seen.tree,
                      protect_changed=protect_changed, worker_usage=usage)
    judge = _update(judge, current, snapshot=list(seen.changed))
    return Step(replace(replace(state, judge=judge), last_verification=stored(verification)))


def judge_void(state: LoopState, seen: Seen, usage: list[ModelUsage], why: str) -> Step:
    """The open attempt's judge does not count: a new judge is needed."""
    judge = note_outside(judge_of(state), seen.changed,
                         "changed outside a worker, while a judge ran")
    current = judge.current
    assert current is not None
    current = replace(current, void=[*current.void, why],
                      void_usage=merge_usage(current.void_usage, current.judge_usage, usage),
                      judge_id="", judge_started_at=None, judge_ended_at=None,
                      judge_tree=None, judge_usage=[], judge_problems=[], verdict=None)
    return Step(replace(state, judge=_update(judge, current)))


def judge_done(state: LoopState, verdict: dict[str, Any], seen: Seen,
               usage: list[ModelUsage]) -> Step:
    """A valid verdict on an unchanged tree. A failing one ends the attempt; a passing one
    ends it too when the plugin's own checks disagree (red verifiers, a protected path
    changed, blocking issues listed); else the next stop of the orchestrator ends the loop."""
    judge = judge_of(state)
    current = judge.current
    assert current is not None
    current = replace(current, verdict=verdict, judge_ended_at=seen.now, judge_usage=usage)
    judge = _update(judge, current)
    state = replace(state, judge=judge)
    if not current.passed:
        return close(state, "failed", excerpt(current.focus or "the judge failed it", 300),
                     seen.now)
    red = [result.command for result in current.verification if not result.passed]
    if red:
        why = ("the judge passed it, but the plugin's verifiers are red: "
               + ", ".join(f"`{command}`" for command in red))
    elif current.protect_changed:
        why = ("the judge passed it, but protected paths changed: "
               + ", ".join(current.protect_changed[:10]))
    elif verdict.get("blocking_issues"):
        why = "the judge said pass while listing blocking issues: " + "; ".join(
            str(issue) for issue in verdict["blocking_issues"])
    else:
        return Step(state)
    return close(state, "failed", excerpt(why, 300), seen.now)


def close(state: LoopState, result: str, note: str, now: datetime) -> Step:
    """End the open attempt: its record joins the loop's iterations (with the
    orchestrator's spend since the last attempt ended)."""
    judge = judge_of(state)
    current = judge.current
    assert current is not None
    current = replace(current, result=result, note=note, ended_at=now)
    verdict = current.verdict or {}
    usage = merge_usage(current.worker_usage, current.judge_usage, current.void_usage,
                        judge.main_usage)
    learning = current.focus if result == "failed" and current.focus else (
        note if result not in ("passed", "success") else "")
    entry = IterationRecord(
        number=current.number, started_at=current.started_at, ended_at=now, result=result,
        reply_excerpt=excerpt(note, 300),
        approach=excerpt(str((current.worker or {}).get("summary", "")), 300),
        evidence=excerpt("; ".join(str(item) for item in verdict.get("evidence", [])), 300),
        learning=excerpt(learning, 300),
        next_action=excerpt("; ".join(str(a) for a in verdict.get("required_actions", [])), 300),
        verification=current.verification, usage=usage,
        cost=round(cost(usage, state.prices), 6),
    )
    learnings = state.learnings
    if entry.learning and entry.learning not in learnings:
        learnings = [*learnings, entry.learning]
    judge = replace(judge, attempts=[*judge.attempts[:-1], current], main_usage=[],
                    activity=judge.activity + 1)
    state = replace(replace(state, judge=judge), iterations=[*state.iterations, entry],
                    learnings=learnings, updated_at=now)
    return Step(state, closed=entry)
