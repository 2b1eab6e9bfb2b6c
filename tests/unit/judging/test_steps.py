"""Judge mode at the subagents' edges, in memory: starts open attempts or are not counted,
stops are read against the contracts (retried at most twice), verdicts are void on a
changed tree, and a pass the plugin's own checks disagree with ends the attempt."""

from __future__ import annotations

from typing import Any

import pytest

from finesse.judging import steps
from finesse.judging.records import Attempt, JudgeState
from finesse.models import IterationRecord, LoopState
from finesse.record import replace
from finesse.results import CommandResult, ModelUsage
from finesse.spend import cost
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
)
from tests.helpers.states import T0


def started(worker: str = "w1", minute: int = 0) -> steps.Step:
    return steps.worker_start(judge_loop(), worker, at(minute))


def worked(verification: list[CommandResult] | None = None) -> LoopState:
    state = started().state
    return steps.worker_done(state, dict(WORKER), at(1, "tree-1"), verification or [green()],
                             [], [ModelUsage("claude-sonnet-4-5", 100, 10)]).state


def test_a_worker_start_opens_attempt_one_with_the_plugins_prompt() -> None:
    step = started()
    [opened] = judge(step.state).attempts
    assert opened == Attempt(number=1, started_at=T0, worker_id="w1", worker_started_at=T0)
    assert judge(step.state).used_agents == ["w1"]
    assert step.context.startswith("You are the worker of attempt 1/100 of a Ralph loop in "
                                   "judge mode")
    assert (step.retry, step.closed) == ("", None)


def test_a_second_worker_for_the_open_attempt_is_not_counted() -> None:
    state = started().state
    step = steps.worker_start(state, "w2", at(1))
    assert step.state is state
    assert step.context == ("You are not counted by this judge-mode loop: attempt 1 already "
                            "has its worker. Do not change anything (your writes are denied); "
                            "reply with one line saying so and stop.")


def test_a_worker_id_used_before_is_not_counted_again() -> None:
    state = attempt(judge_loop(), "w1", "j1", FAIL)
    step = steps.worker_start(state, "w1", at(9))
    assert step.state is state
    assert "already worked for an earlier attempt" in step.context


def test_a_new_worker_without_a_stop_between_opens_the_next_attempt() -> None:
    state = attempt(judge_loop(), "w1", "j1", FAIL)
    assert state.iteration == 1
    step = steps.worker_start(state, "w2", at(9))
    current = judge(step.state).current
    assert (step.state.iteration, current and current.number) == (2, 2)
    assert "## Next attempt focus\nSet the Content-Type header of the CSV route." in (
        step.context)


def test_no_worker_past_the_cap() -> None:
    state = attempt(judge_loop(max_iterations=1), "w1", "j1", FAIL)
    step = steps.worker_start(state, "w2", at(9))
    assert step.state is state
    assert "the loop's 1 attempts are used up" in step.context


def test_a_judge_with_nothing_to_judge_is_not_counted() -> None:
    state = started().state
    step = steps.judge_start(state, "j1", at(1))
    assert step.state is state
    assert "there is no worker result to judge yet" in step.context


def test_a_judge_start_registers_it_with_the_tree() -> None:
    state = worked()
    step = steps.judge_start(state, "j1", at(2, "tree-1"))
    current = judge(step.state).current
    assert current is not None
    assert (current.judge_id, current.judge_tree, current.judge_started_at) == (
        "j1", "tree-1", at(2).now)
    assert step.context.startswith("You are the judge of attempt 1/100")
    assert not steps.needs_verification(state, "tree-1")
    second = steps.judge_start(step.state, "j2", at(3, "tree-1"))
    assert second.state is step.state and "already has its judge" in second.context


def test_a_judge_on_a_changed_tree_gets_a_fresh_verifier_run() -> None:
    state = worked([green()])
    assert steps.needs_verification(state, "tree-2")
    step = steps.judge_start(state, "j1", at(2, "tree-2"), [red()], ["src/billing/x.py"])
    current = judge(step.state).current
    assert current is not None
    assert (current.verification, current.verified_tree, current.protect_changed) == (
        [red()], "tree-2", ["src/billing/x.py"])
    assert step.state.last_verification == [red()]
    assert "`pytest -q`: red (exit 1)" in step.context


def test_a_worker_result_is_recorded_with_the_hooks_run() -> None:
    state = worked([red()])
    current = judge(state).current
    assert current is not None
    assert (current.worker, current.verification, current.verified_tree, current.worker_ended_at,
            current.worker_usage) == (WORKER, [red()], "tree-1", at(1).now,
                                      [ModelUsage("claude-sonnet-4-5", 100, 10)])
    assert state.last_verification == [red()]
    assert judge(state).snapshot == []


@pytest.mark.parametrize("kind", ["worker", "judge"])
def test_an_invalid_message_is_asked_again_twice_then_the_attempt_fails(kind: str) -> None:
    state = started().state if kind == "worker" else steps.judge_start(
        worked(), "j1", at(2, "tree-1")).state
    first = steps.invalid(state, kind, "summary: Field required", at(3).now, [])
    assert first.retry == (
        f"Your final message does not hold the {kind} JSON the loop needs: summary: Field "
        f"required. Reply again with only the {kind} JSON object, exactly the fields your "
        "instructions give (try 1 of 2; then this attempt is recorded as a contract failure).")
    second = steps.invalid(first.state, kind, "no JSON found", at(4).now, [])
    assert "try 2 of 2" in second.retry
    third = steps.invalid(second.state, kind, "the message is empty", at(5).now, [])
    assert third.retry == ""
    [ended] = judge(third.state).attempts
    assert (ended.result, ended.note) == (
        "contract-failure", f"the {kind}'s final message broke the contract 3 times; the last "
        "problem: the message is empty")
    assert third.closed is not None and third.closed.result == "contract-failure"
    assert [entry.number for entry in third.state.iterations] == [1]


def test_a_failing_verdict_ends_the_attempt_with_its_record() -> None:
    state = attempt(judge_loop(), "w1", "j1", FAIL)
    [ended] = judge(state).attempts
    assert (ended.result, ended.note, ended.verdict) == (
        "failed", "Set the Content-Type header of the CSV route.", FAIL)
    assert state.iterations == [IterationRecord(
        number=1, started_at=T0, ended_at=at(3).now, result="failed",
        reply_excerpt="Set the Content-Type header of the CSV route.",
        approach="Added the CSV route.", evidence="pytest -q: 1 failed",
        learning="Set the Content-Type header of the CSV route.",
        next_action="set Content-Type: text/csv", verification=[green()])]
    assert state.learnings == ["Set the Content-Type header of the CSV route."]


def test_a_passing_verdict_leaves_the_attempt_open_for_the_next_stop() -> None:
    state = attempt(judge_loop(), "w1", "j1", PASS)
    current = judge(state).current
    assert current is not None and current.passed and current.judge_ended_at == at(3).now
    assert state.iterations == []


@pytest.mark.parametrize(("verification", "protect", "verdict", "why"), [
    ([red()], [], PASS, "the judge passed it, but the plugin's verifiers are red: `pytest -q`"),
    ([green()], ["src/billing/rates.py"], PASS,
     "the judge passed it, but protected paths changed: src/billing/rates.py"),
    ([green()], [], {**PASS, "blocking_issues": ["no header"]},
     "the judge said pass while listing blocking issues: no header"),
])
def test_a_pass_the_plugins_checks_disagree_with_fails(
        verification: list[CommandResult], protect: list[str], verdict: dict[str, Any],
        why: str) -> None:
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    state = steps.worker_done(state, dict(WORKER), at(1), verification, protect, []).state
    state = steps.judge_start(state, "j1", at(2)).state
    state = steps.judge_done(state, verdict, at(3), []).state
    [ended] = judge(state).attempts
    assert (ended.result, ended.note) == ("failed", why)


def test_a_void_verdict_clears_the_judge_and_keeps_its_spend() -> None:
    state = steps.judge_start(worked(), "j1", at(2, "tree-1")).state
    usage = [ModelUsage("claude-haiku-4-5", 50, 5)]
    step = steps.judge_void(state, at(3, "tree-2", ["notes.txt\t3\t9"]), usage,
                            "the working tree changed while the judge ran")
    current = judge(step.state).current
    assert current is not None
    assert (current.judge_id, current.verdict, current.void, current.void_usage) == (
        "", None, ["the working tree changed while the judge ran"], usage)
    assert current.outside_changes == ["notes.txt (changed outside a worker, while a judge ran)"]
    assert "j1" in judge(step.state).used_agents
    assert steps.needs_verification(step.state, "tree-2")


def test_a_closed_attempt_carries_every_part_of_its_spend() -> None:
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    state = replace(state, judge=replace(judge(state), main_usage=[ModelUsage("m", 1, 1)]))
    state = steps.worker_done(state, dict(WORKER), at(1), [green()], [],
                              [ModelUsage("m", 10, 2)]).state
    state = steps.judge_start(state, "j1", at(2)).state
    state = steps.judge_done(state, dict(FAIL), at(3), [ModelUsage("m", 5, 1)]).state
    [record] = state.iterations
    assert record.usage == [ModelUsage("m", 16, 4)]
    assert record.cost == round(cost(record.usage, state.prices), 6)
    assert judge(state).main_usage == []


def test_changes_between_checkpoints_are_named() -> None:
    state = judge_loop(judge_state=JudgeState(criteria=["x"], snapshot=["a.py\t1\t1"]))
    moved = steps.note_outside(judge(state), ["a.py\t2\t2", "b.py\t1\t1"], "seen at a stop")
    assert moved.outside_changes == ["a.py (seen at a stop)", "b.py (seen at a stop)"]
    assert moved.snapshot == ["a.py\t2\t2", "b.py\t1\t1"]
    assert steps.note_outside(moved, moved.snapshot, "again") == replace(moved)


def test_role_is_only_the_open_attempts_agents() -> None:
    state = steps.judge_start(worked(), "j1", at(2, "tree-1")).state
    assert steps.role(state, "w1", "finesse:ralph-worker") == "worker"
    assert steps.role(state, "j1", "finesse:ralph-judge") == "judge"
    assert steps.role(state, "j1", "finesse:ralph-worker") == ""
    assert steps.role(state, "other", "finesse:ralph-judge") == ""
    assert steps.role(attempt(judge_loop(), "w1", "j1", FAIL), "w1", "finesse:ralph-worker") == ""


def test_what_a_fresh_verifier_run_writes_is_not_an_outside_change() -> None:
    state = worked([green()])
    before = at(2, "tree-2", ["notes.txt\t1\t1"])
    after = at(2, "tree-3", ["notes.txt\t1\t1", ".cache/x\t1\t1"])
    step = steps.judge_start(state, "j1", before, [green()], [], after)
    current = judge(step.state).current
    assert current is not None
    assert current.outside_changes == [
        "notes.txt (changed outside a worker, before the judge of attempt 1)"]
    assert (current.judge_tree, current.verified_tree, judge(step.state).snapshot) == (
        "tree-3", "tree-3", after.changed)
