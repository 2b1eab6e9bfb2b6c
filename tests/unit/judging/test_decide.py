"""Judge mode at each stop of the main thread, in memory: every transition of the rules in
finesse.judging.decide, first match wins."""

from __future__ import annotations

from datetime import timedelta

import pytest

from finesse.judging import steps
from finesse.judging.decide import JudgeDecision, decide_stop, stale_verification
from finesse.judging.records import JudgeState
from finesse.models import Budgets
from finesse.record import replace
from finesse.results import ModelUsage, Quota
from tests.helpers.judging import (
    FAIL,
    PASS,
    WORKER,
    at,
    attempt,
    green,
    judge,
    judge_loop,
    red,
    view,
)
from tests.helpers.states import T0

WORKER_CALL = ('call the Agent tool with subagent_type "finesse:ralph-worker", '
               'run_in_background false, description "attempt {n} worker" and a one-line '
               "prompt (the plugin gives the worker its full instructions)")
JUDGE_CALL = WORKER_CALL.replace("worker", "judge")


def test_no_worker_yet_spawn_one() -> None:
    decision = decide_stop(judge_loop(), view(1, reply="I'll get started."))
    assert (decision.action, decision.reason, decision.message) == (
        "continue",
        "Judge mode, attempt 1/100: no worker has started yet. Next: spawn a NEW worker: "
        + WORKER_CALL.format(n=1) + ". Do not do the work yourself.",
        "Ralph (judge mode) attempt 1/100")
    assert decision.state.idle_iterations == 1


def test_worker_done_spawn_the_judge() -> None:
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    state = steps.worker_done(state, dict(WORKER), at(1), [red()], [], []).state
    decision = decide_stop(state, view(2))
    assert decision.reason == (
        "Judge mode, attempt 1/100: the worker finished (Added the CSV route.); the plugin's "
        "verifiers are red: `pytest -q`. Next: spawn the judge: " + JUDGE_CALL.format(n=1)
        + ". Do not do the work yourself.")
    assert decision.state.idle_iterations == 0


def test_judge_failed_a_new_worker_with_the_focus() -> None:
    state = attempt(judge_loop(), "w1", "j1", FAIL)
    decision = decide_stop(state, view(5))
    assert decision.reason == (
        "Judge mode, attempt 2/100: attempt 1 ended: failed. Next: spawn a NEW worker: "
        + WORKER_CALL.format(n=2) + ". Focus for this attempt: Set the Content-Type header of "
        "the CSV route. Do not do the work yourself.")
    assert (decision.state.iteration, decision.state.iteration_started_at) == (2, view(5).now)
    again = decide_stop(decision.state, view(6))
    assert again.state.iteration == 2  # told again, not advanced again


def test_judge_passed_and_tree_unchanged_success() -> None:
    state = attempt(judge_loop(), "w1", "j1", PASS)
    decision = decide_stop(state, view(5, reply="All done.\n<promise>DONE</promise>"))
    assert (decision.action, decision.outcome, decision.state.verified) == (
        "end", "success", True)
    assert decision.message == ("Ralph loop done (judge mode): the judge passed attempt 1/100 "
                                "(score 95), verified: `pytest -q` exit 0.")
    [ended] = judge(decision.state).attempts
    assert (ended.result, decision.state.iterations[-1].result, decision.closed) == (
        "success", "success", True)


def test_judge_passed_but_the_tree_changed_since_the_verdict_is_void() -> None:
    state = attempt(judge_loop(), "w1", "j1", PASS)
    decision = decide_stop(state, view(5, tree="tree-9", changed=["x.py\t1\t1"]))
    assert decision.action == "continue"
    current = judge(decision.state).current
    assert current is not None and current.verdict is None
    assert current.void == ["the working tree changed after the judge's verdict"]
    assert decision.reason.startswith(
        "Judge mode, attempt 1/100: the worker finished (Added the CSV route.); the plugin's "
        "verifiers are green (the last verdict is void: the working tree changed after the "
        "judge's verdict). Next: spawn the judge")
    assert judge(decision.state).outside_changes == [
        "x.py (changed outside a worker, seen at a stop of the orchestrator)"]


def test_judge_passed_but_a_protected_path_changed_after_it() -> None:
    state = attempt(judge_loop(), "w1", "j1", PASS)
    decision = decide_stop(state, view(5, protect_changed=["src/billing/rates.py"]))
    assert decision.action == "continue" and decision.closed
    [ended] = judge(decision.state).attempts
    assert (ended.result, ended.note) == (
        "failed", "protected paths changed after the judge's verdict: src/billing/rates.py")
    assert "Judge mode, attempt 2/100: attempt 1 ended: failed." in decision.reason


@pytest.mark.parametrize("reply", ["<promise>DONE</promise>",
                                   "Everything works.\nRESULT: VERIFIED_COMPLETE"])
def test_the_orchestrators_word_is_answered_with_the_judges_status(reply: str) -> None:
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    state = steps.worker_done(state, dict(WORKER), at(1), [green()], [], []).state
    decision = decide_stop(state, view(2, reply=reply))
    assert decision.action == "continue"
    assert decision.reason.startswith(
        "You said the work is done; in judge mode only the judge's verdict, checked by the "
        "plugin, ends the loop. Judge mode, attempt 1/100: the worker finished")
    assert judge(decision.state).claims == 1


def test_a_background_agent_is_waited_for_once_then_the_stop_goes_ahead() -> None:
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    running = [("w1", "finesse:ralph-worker"), ("x", "general-purpose")]
    told = decide_stop(state, view(1, background=running))
    assert (told.action, told.reason) == (
        "continue", "Judge mode: the worker w1 is still running in the background. Do not "
        "spawn another one and do not do its work: end your turn now; its result reaches you "
        "as a task notification, and the loop goes on from there.")
    waited = decide_stop(told.state, view(2, background=running))
    assert (waited.action, waited.reason, waited.state.idle_iterations) == ("wait", "", 0)
    assert judge(waited.state).waiting_for == "w1"


def test_an_unrelated_background_agent_is_not_waited_for() -> None:
    decision = decide_stop(judge_loop(), view(1, background=[("x", "general-purpose")]))
    assert decision.reason.startswith("Judge mode, attempt 1/100: no worker has started yet.")


def test_a_worker_that_ended_unseen_has_no_result() -> None:
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    decision = decide_stop(state, view(1))
    [ended] = judge(decision.state).attempts
    assert (ended.result, ended.note, decision.closed) == (
        "no-result", "the worker ended without a result the plugin saw", True)
    assert decision.reason.startswith("Judge mode, attempt 2/100: attempt 1 ended: no-result.")


def test_a_judge_that_ended_unseen_is_void() -> None:
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    state = steps.worker_done(state, dict(WORKER), at(1), [green()], [], []).state
    state = steps.judge_start(state, "j1", at(2)).state
    decision = decide_stop(state, view(3))
    current = judge(decision.state).current
    assert current is not None and current.void == [
        "the judge ended without a verdict the plugin saw"]
    assert "Next: spawn the judge" in decision.reason


def test_stops_with_no_worker_or_judge_between_quiesce() -> None:
    first = decide_stop(judge_loop(), view(1))
    second = decide_stop(first.state, view(2))
    assert (second.action, second.outcome, second.message) == (
        "end", "quiesced", "Ralph loop (judge mode) quiesced at attempt 1/100: 2 stops in a "
        "row with no worker or judge.")


@pytest.mark.parametrize(("by", "outcome"), [("/cancel-ralph", "cancelled"),
                                             ("/ralph-abort", "aborted"),
                                             ("the kill switch", "cancelled")])
def test_cancel_and_abort_end_it_and_close_the_open_attempt(by: str, outcome: str) -> None:
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    decision = decide_stop(state, view(1, cancelled_by=by))
    assert (decision.action, decision.outcome, decision.state.ended_by) == ("end", outcome, by)
    assert decision.message == f"Ralph loop (judge mode) {outcome} by {by} at attempt 1/100."
    [ended] = judge(decision.state).attempts
    assert ended.result == outcome


def test_the_cap_ends_it_with_the_final_status() -> None:
    state = attempt(judge_loop(max_iterations=1), "w1", "j1", FAIL, [red()])
    assert stale_verification(state, "tree-0") is False
    decision = decide_stop(state, view(5))
    assert (decision.action, decision.outcome, decision.message) == (
        "end", "limit", "Ralph loop (judge mode) stopped: 1 attempts made without a passing "
        "verdict.")
    status = ("Final status (judge mode, 1 attempt(s)):\n"
              "- Passes: no verifier is green\n"
              "- Fails: `pytest -q` exit 1; text/csv header missing\n"
              "- Smallest next actions: set Content-Type: text/csv\n"
              "- Last judge (attempt 1): pass false, score 40")
    assert (decision.notes, decision.state.blocker) == ([status], status)


def test_a_fresh_verifier_run_feeds_the_final_status() -> None:
    state = attempt(judge_loop(max_iterations=1), "w1", "j1", FAIL, [red()])
    assert stale_verification(state, "tree-7")
    decision = decide_stop(state, view(5, tree="tree-7", verification=[green()]))
    assert decision.state.last_verification == [green()]
    assert "- Passes: `pytest -q`" in decision.state.blocker


def test_the_budget_ends_it_mid_attempt_counting_what_is_not_yet_recorded() -> None:
    state = steps.worker_start(judge_loop(budgets=Budgets(max_tokens=1000)), "w1", at(0)).state
    state = steps.worker_done(state, dict(WORKER), at(1), [green()], [],
                              [ModelUsage("claude-sonnet-4-5", 900, 50)]).state
    decision = decide_stop(state, view(2, usage=[ModelUsage("claude-sonnet-4-5", 40, 20)]))
    assert (decision.action, decision.outcome) == ("end", "budget")
    assert decision.message == ("Ralph loop (judge mode) stopped at attempt 1/100: its budget "
                                "is spent: 1,010 tokens used (input, cache creation and "
                                "output), the --max-tokens budget is 1,000.")
    [record] = decision.state.iterations
    assert (record.result, record.usage) == ("budget",
                                             [ModelUsage("claude-sonnet-4-5", 940, 70)])


def test_the_orchestrators_spend_after_the_last_attempt_joins_its_record_at_the_end() -> None:
    state = attempt(judge_loop(max_iterations=1), "w1", "j1", FAIL)
    decision = decide_stop(state, view(5, usage=[ModelUsage("m", 7, 3)]))
    assert decision.outcome == "limit"
    assert decision.state.iterations[-1].usage == [ModelUsage("m", 7, 3)]
    assert judge(decision.state).main_usage == []


def test_the_deadline_and_the_quota() -> None:
    timed = judge_loop(timeout_minutes=30, deadline_at=T0 + timedelta(minutes=30))
    assert decide_stop(timed, view(31)).outcome == "timeout"
    quota = Quota(at=T0, five_hour=91.0)
    decision = decide_stop(judge_loop(budgets=Budgets(stop_at_quota=90)), view(1, quota=quota))
    assert decision.outcome == "quota"


def test_changes_seen_at_a_stop_while_no_worker_runs_are_outside_changes() -> None:
    state = attempt(judge_loop(), "w1", "j1", FAIL)
    decision = decide_stop(state, view(5, changed=["src/app.py\t9\t9"]))
    assert judge(decision.state).outside_changes == [
        "src/app.py (changed outside a worker, seen at a stop of the orchestrator)"]


def test_changes_while_the_worker_runs_are_the_workers() -> None:
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    running = [("w1", "finesse:ralph-worker")]
    decision = decide_stop(state, view(1, background=running, changed=["a\t1\t1"]))
    assert judge(decision.state).outside_changes == []


def test_the_cursor_and_the_orchestrators_spend_are_kept() -> None:
    from finesse.results import Cursor

    decision = decide_stop(judge_loop(), view(1, usage=[ModelUsage("m", 3, 1)],
                                              cursor=Cursor(120, "1:2", ("msg_1",))))
    assert decision.state.cursor == Cursor(120, "1:2", ("msg_1",))
    assert judge(decision.state).main_usage == [ModelUsage("m", 3, 1)]


def test_the_decision_type() -> None:
    state = replace(judge_loop(), judge=JudgeState(criteria=["x"]))
    assert isinstance(decide_stop(state, view(1)), JudgeDecision)
    assert replace(decide_stop(state, view(1))).action == "continue"


def test_a_background_workers_late_start_does_not_repeat_the_wait() -> None:
    running = [("w1", "finesse:ralph-worker")]
    told = decide_stop(judge_loop(), view(1, background=running))  # before its SubagentStart
    assert told.action == "continue"
    started = steps.worker_start(told.state, "w1", at(2)).state
    assert decide_stop(started, view(3, background=running)).action == "wait"
