"""Judge mode at each stop of the main thread (the orchestrator trying to end its turn): a
pure function of the loop state and what the Stop hook saw. The rules, first match wins:

1. cancelled or aborted (as for every loop)
2. a worker or judge of the loop still runs in the background: not an attempt's end; the
   orchestrator is told once to end its turn and wait for the notification, then its stops
   go ahead until the agent is done
3. the open attempt's verdict passed (its checks were made when it came): if the working
   tree is unchanged since the judge started -> **success**; else the verdict is void and a
   new judge is needed
4. quiescence: `quiesce_after` stops in a row with no worker or judge event between them
5. the next step: no attempt open -> the cap (limit, with the final status) or a fresh
   worker with the judge's focus; a worker result without a judge -> spawn the judge; a
   worker or judge that ended unseen -> the attempt has no result / the judge is void
6. budgets, quota and the deadline, as for every loop (the final status too)
7. otherwise continue with that step.

The orchestrator's promise or `RESULT:` line never ends the loop: it is answered with the
judge's status. Changes to the tree seen at a stop, while no worker runs, are recorded as
made outside any worker.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from finesse.engine import ABORTED_BY, quota_reached
from finesse.judging import steps
from finesse.judging.prompts import agent_call, next_focus
from finesse.judging.records import JUDGE_TYPE, WORKER_TYPE, JudgeState, merge_usage
from finesse.judging.report_sections import final_status
from finesse.models import IterationRecord, LoopState, Outcome, judge_of
from finesse.record import Record, field, replace
from finesse.recording import end_loop, excerpt, stored
from finesse.results import CommandResult, Cursor, ModelUsage, Quota
from finesse.signals import Reading
from finesse.spend import cost, over_budget

LIMITS: frozenset[str] = frozenset({"limit", "budget", "quota", "timeout"})


class StopView(Record):
    """What the Stop hook saw at a stop of the main thread."""

    now: datetime
    reply: str | None = None
    reading: Reading = field(default_factory=Reading)  # the reply, read once
    cancelled_by: str = ""
    background: list[tuple[str, str]] = field(default_factory=list)  # running (id, type)
    tree: str | None = None
    changed: list[str] = field(default_factory=list)
    usage: list[ModelUsage] = field(default_factory=list)
    cursor: Cursor | None = None
    quota: Quota | None = None
    verification: list[CommandResult] | None = None  # a fresh run for the final status
    protect_changed: list[str] = field(default_factory=list)  # measured when a pass waits


class JudgeDecision(Record):
    action: Literal["continue", "end", "wait"]  # wait: let this stop go ahead, loop on
    state: LoopState
    reason: str = ""  # what the orchestrator is told
    message: str = ""  # what the user is shown
    notes: list[str] = field(default_factory=list)
    closed: bool = False  # an attempt ended at this stop

    @property
    def outcome(self) -> Outcome | None:
        return self.state.outcome


def stale_verification(state: LoopState, tree: str | None) -> bool:
    """The last verifier run is not about this tree (or there was none): a final status
    needs a fresh one."""
    last = next((a for a in reversed(judge_of(state).attempts) if a.verification), None)
    return last is None or last.verified_tree != tree


def _pending(state: LoopState, now: datetime) -> LoopState:
    """The state with what was spent and not yet in an attempt's record as one more record
    (for the budgets, before an attempt ends)."""
    judge = judge_of(state)
    current = judge.current
    parts = [current.worker_usage, current.judge_usage, current.void_usage] if current else []
    usage = merge_usage(judge.main_usage, *parts)
    if not usage:
        return state
    entry = IterationRecord(number=state.iteration, started_at=now, ended_at=now,
                            result="pending", usage=usage, cost=cost(usage, state.prices))
    return replace(state, iterations=[*state.iterations, entry])


def _end(state: LoopState, view: StopView, outcome: Outcome, message: str,
         notes: list[str] | None = None) -> JudgeDecision:
    judge = judge_of(state)
    if judge.current is not None:
        state = steps.close(state, outcome, message, view.now).state
    elif judge.main_usage and state.iterations:  # the orchestrator's spend since the last
        last = state.iterations[-1]
        usage = merge_usage(last.usage, judge.main_usage)
        state = replace(replace(state, judge=replace(judge, main_usage=[])), iterations=[
            *state.iterations[:-1],
            replace(last, usage=usage, cost=round(cost(usage, state.prices), 6))])
    return JudgeDecision("end", end_loop(state, outcome, message, view.now), message=message,
                         notes=notes or [])


def _limited(state: LoopState, view: StopView, opening: bool) -> JudgeDecision | None:
    """Budgets, quota, the cap (only when a new attempt would open) and the deadline, with
    seed 002's final status."""
    done = f"attempt {state.iteration}/{state.max_iterations}"
    if view.verification is not None:
        state = replace(state, last_verification=stored(view.verification))
    spent = over_budget(_pending(state, view.now))
    quota = quota_reached(state, view.quota)
    if spent:
        outcome: Outcome = "budget"
        message = f"Ralph loop (judge mode) stopped at {done}: its budget is spent: {spent}."
    elif quota:
        outcome, message = "quota", f"Ralph loop (judge mode) stopped at {done}: {quota}"
    elif opening and state.iteration >= state.max_iterations:
        outcome = "limit"
        message = (f"Ralph loop (judge mode) stopped: {state.max_iterations} attempts made "
                   "without a passing verdict.")
    elif state.deadline_at is not None and view.now >= state.deadline_at:
        outcome = "timeout"
        message = (f"Ralph loop (judge mode) timed out after {state.timeout_minutes} "
                   f"minutes, at {done}.")
    else:
        return None
    decision = _end(state, view, outcome, message)
    status = final_status(decision.state)
    ended = replace(decision.state, blocker=status)
    return replace(decision, state=ended, notes=[status])


def _wait(state: LoopState, judge: JudgeState, agent_id: str, kind: str) -> JudgeDecision:
    if judge.waiting_for == agent_id:
        return JudgeDecision("wait", state)
    judge = replace(judge, waiting_for=agent_id)
    reason = (f"Judge mode: the {kind} {agent_id} is still running in the background. Do "
              "not spawn another one and do not do its work: end your turn now; its result "
              "reaches you as a task notification, and the loop goes on from there.")
    return JudgeDecision("continue", replace(state, judge=judge), reason=reason,
                         message=f"Ralph (judge mode): waiting for the {kind} {agent_id}")


def decide_stop(state: LoopState, view: StopView) -> JudgeDecision:
    decision = _decide(state, view)
    return replace(decision, closed=len(decision.state.iterations) > len(state.iterations))


def _decide(state: LoopState, view: StopView) -> JudgeDecision:
    judge = judge_of(state)
    judge = replace(judge, main_usage=merge_usage(judge.main_usage, view.usage))
    if view.cursor is not None:
        state = replace(state, cursor=view.cursor)
    state = replace(replace(state, judge=judge), updated_at=view.now)
    if view.cancelled_by:
        outcome: Outcome = "aborted" if view.cancelled_by in ABORTED_BY else "cancelled"
        ended = _end(state, view, outcome, f"Ralph loop (judge mode) {outcome} by "
                     f"{view.cancelled_by} at attempt {state.iteration}/"
                     f"{state.max_iterations}.")
        return replace(ended, state=replace(ended.state, ended_by=view.cancelled_by))
    ours = [(agent, kind) for agent, kind in view.background if kind in (WORKER_TYPE,
                                                                         JUDGE_TYPE)]
    if ours:
        agent, kind = ours[0]
        return _wait(state, judge, agent, "worker" if kind == WORKER_TYPE else "judge")
    current = judge.current
    if current is None or not current.worker_running:
        judge = steps.note_outside(judge, view.changed, "changed outside a worker, seen at "
                                   "a stop of the orchestrator")
    idle = judge.activity == judge.seen_activity
    judge = replace(judge, seen_activity=judge.activity, waiting_for="")
    state = replace(replace(state, judge=judge),
                    idle_iterations=state.idle_iterations + 1 if idle else 0)
    current = judge.current
    if current is not None and current.passed and current.judge_ended_at is not None:
        if view.protect_changed:
            state = steps.close(state, "failed", excerpt(
                "protected paths changed after the judge's verdict: "
                + ", ".join(view.protect_changed[:10]), 300), view.now).state
        elif view.tree == current.judge_tree:
            return _success(state, view)
        else:
            state = steps.judge_void(state, steps.Seen(view.now, view.tree, view.changed), [],
                                     "the working tree changed after the judge's verdict"
                                     ).state
    claimed = view.reading.claims_completion
    if claimed:
        judge = judge_of(state)
        state = replace(state, judge=replace(judge, claims=judge.claims + 1))
    if state.idle_iterations >= state.quiesce_after:
        return _end(state, view, "quiesced", f"Ralph loop (judge mode) quiesced at attempt "
                    f"{state.iteration}/{state.max_iterations}: {state.idle_iterations} stops "
                    "in a row with no worker or judge.")
    return _next(state, view, claimed)


def _success(state: LoopState, view: StopView) -> JudgeDecision:
    current = judge_of(state).current
    assert current is not None
    checks = ", ".join(f"`{r.command}` exit {r.exit_code}" for r in current.verification)
    message = (f"Ralph loop done (judge mode): the judge passed attempt {current.number}/"
               f"{state.max_iterations} (score {(current.verdict or {}).get('score')}), "
               f"verified: {checks}.")
    state = steps.close(state, "success", "the judge passed it; the plugin's checks agree",
                        view.now).state
    return JudgeDecision("end", replace(end_loop(state, "success", message, view.now),
                                        verified=True), message=message)


def _next(state: LoopState, view: StopView, claimed: bool) -> JudgeDecision:
    judge = judge_of(state)
    current = judge.current
    if current is not None and current.worker_running:
        state = steps.close(state, "no-result", "the worker ended without a result the "
                            "plugin saw", view.now).state
    elif current is not None and current.judge_running:
        state = steps.judge_void(state, steps.Seen(view.now, view.tree, view.changed), [],
                                 "the judge ended without a verdict the plugin saw").state
    judge = judge_of(state)
    current = judge.current
    opening = current is None and judge.last is not None and (
        judge.last.number >= state.iteration)
    limited = _limited(state, view, opening)
    if limited is not None:
        return limited
    if opening:
        state = replace(state, iteration=state.iteration + 1, iteration_started_at=view.now)
    number = f"attempt {state.iteration}/{state.max_iterations}"
    if current is None:
        focus = next_focus(judge)
        last = judge.last
        status = (f"attempt {last.number} ended: {last.result}" if last is not None
                  else "no worker has started yet")
        step = (f"spawn a NEW worker: {agent_call('worker', state.iteration)}"
                + (f". Focus for this attempt: {focus.rstrip('.')}" if focus else ""))
    else:
        summary = excerpt(str((current.worker or {}).get("summary", "")), 200)
        red = [r.command for r in current.verification if not r.passed]
        checks = ("the plugin's verifiers are red: " + ", ".join(f"`{c}`" for c in red)
                  if red else "the plugin's verifiers are green")
        void = f" (the last verdict is void: {current.void[-1]})" if current.void else ""
        status = f"the worker finished ({summary}); {checks}{void}"
        step = f"spawn the judge: {agent_call('judge', current.number)}"
    claim = ("You said the work is done; in judge mode only the judge's verdict, checked by "
             "the plugin, ends the loop. " if claimed else "")
    reason = (f"{claim}Judge mode, {number}: {status}. Next: {step}. Do not do the work "
              "yourself.")
    return JudgeDecision("continue", state, reason=reason,
                         message=f"Ralph (judge mode) {number}")
