"""decide() in gate mode, in memory: the ending rules where two hold at once, the counters,
the repair prompt and the revert note, with hand-built gate steps and command results."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from finesse.engine import Decision, Observation, decide, iteration_header
from finesse.loop.grammar import EFFORT_LEVELS, ResumeRequest
from finesse.loop.lifecycle import latest_resumable, resume_loop
from finesse.models import (
    CommandResult,
    GateStep,
    IterationRecord,
    LoopState,
    ResumeRecord,
    replace,
)
from finesse.signals import digest
from finesse.support import git as gitstate
from tests.helpers.repo import git
from tests.helpers.states import SESSION, T0, T1, command_result, make_state, store_for

ROOT = Path("/project")
GATE = "pytest -q"
GREEN = command_result(GATE, 0, "3 passed")
RED = command_result(GATE, 1, "FAILED tests/test_app.py::test_add - assert 3 == 4")
BASE = "a" * 40  # the commit the iteration started from
NEW = "b" * 40  # the commit a green iteration made
REVERT = "c" * 40  # the commit that undid an agent's own commits
REPLY = "Worked on the parser."
PROMISE_REPLY = "All green now. <promise>DONE</promise>"
HEADER = "output <promise>DONE</promise> only when it is completely true"
# What follows the task in every prompt of a gate loop without a plan or verification.
GATE_NOTES = (
    "Gate mode: after every iteration the plugin runs `pytest -q`. Green commits your changes; "
    "red gives you one repair; still red reverts them.\n"
    f"When the whole task is done, write `done` to .ralph-loop-done-{SESSION} to end the "
    "loop.\n"
    "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you.\n"
    "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
    "`Next: ...`."
)
REVERTED_NOTE = ("Your last attempt was reverted: the gate was still red after the repair. "
                 "Start this iteration from the reverted tree.")
RED_STREAK_END = ("Ralph loop failed: a systemic red streak reverted three consecutive "
                  "iterations (at iteration {done}).")
LOOP_DONE_END = "Ralph loop done: the agent wrote done to its loop-done file at iteration {done}."


def gated(**overrides: object) -> LoopState:
    fields: dict[str, object] = {"gate": [GATE], "iteration_base": BASE}
    fields.update(overrides)
    return make_state(ROOT, **fields)


def committed(sha: str = NEW) -> GateStep:
    return GateStep([GREEN], "committed", commit=sha)


def empty() -> GateStep:
    return GateStep([GREEN], "empty")


def repair() -> GateStep:
    return GateStep([RED], "repair")


def reverted(baseline: list[CommandResult] | None = None, commit: str | None = None) -> GateStep:
    return GateStep([RED], "reverted", commit=commit, restored=["src/app.py"],
                    removed=["src/new.py"], baseline=[GREEN] if baseline is None else baseline)


def seen(step: GateStep | None, reply: str = REPLY, now: datetime = T1,
         **fields: object) -> Observation:
    """An iteration that used a tool, so only the gate's counters can make it quiescent."""
    return Observation(reply=reply, now=now, tool_calls=1, gate=step, **fields)  # type: ignore[arg-type]


def entry(number: int, result: str, step: GateStep, reply: str = REPLY,
          ended: datetime = T1) -> IterationRecord:
    return IterationRecord(
        number=number, started_at=T0, ended_at=ended, result=result, reply_excerpt=reply,
        tool_calls=1, gate=step.results, gate_action=step.action, commit=step.commit,
        restored=step.restored, removed=step.removed,
    )


def after(before: LoopState, record: IterationRecord, now: datetime = T1,
          **changes: object) -> LoopState:
    """`before` with this iteration recorded: the bookkeeping every decision does."""
    return replace(before, iterations=[*before.iterations, record], updated_at=now,
                   last_reply_excerpt=record.reply_excerpt,
                   last_reply_digest=digest(record.reply_excerpt), tree_fingerprint=None,
                   **changes)


def ended(before: LoopState, record: IterationRecord, outcome: str, message: str,
          now: datetime = T1, **changes: object) -> Decision:
    state = after(before, record, now, outcome=outcome, ended_at=now, end_message=message,
                  **changes)
    return Decision("end", state, message=message)


def standing(number: int, cap: int = 8, feedback: str = "") -> str:
    """The standing prompt of iteration `number`, with the feedback after the notes."""
    prompt = (f"Ralph iteration {number}/{cap}: {HEADER}\n\nMake the tests pass\n\n---\n\n"
              f"{GATE_NOTES}")
    return f"{prompt}\n\n{feedback}" if feedback else prompt


def continued(before: LoopState, record: IterationRecord, reason: str,
              **changes: object) -> Decision:
    number = before.iteration + 1
    state = after(before, record, iteration=number, iteration_started_at=T1, **changes)
    return Decision("continue", state, reason=reason,
                    message=f"Ralph iteration {number}/{before.max_iterations}")


# --- the ending rules, two at once ----------------------------------------------------------


def test_cancel_beats_a_red_streak_of_three() -> None:
    before = gated(iteration=6, red_streak=2, repairing=True)
    step = reverted()
    decision = decide(before, seen(step, cancelled=True))
    # Cancelled first: the counters are not even moved.
    assert decision == ended(before, entry(6, "cancelled", step), "cancelled",
                             "Ralph loop cancelled at iteration 6/8.")


def test_a_red_streak_of_three_beats_loop_done() -> None:
    before = gated(iteration=6, red_streak=2, repairing=True)
    step = reverted()
    decision = decide(before, seen(step, loop_done=True))
    assert decision == ended(before, entry(6, "failure", step), "failure",
                             RED_STREAK_END.format(done="6/8"), red_streak=3, repairing=False)


def test_a_red_streak_of_three_beats_the_cap() -> None:
    before = gated(iteration=8, red_streak=2, repairing=True)
    step = reverted()
    decision = decide(before, seen(step))
    assert decision == ended(before, entry(8, "failure", step), "failure",
                             RED_STREAK_END.format(done="8/8"), red_streak=3, repairing=False)


def test_loop_done_beats_the_promise() -> None:
    before = gated(iteration=3)
    step = committed()
    decision = decide(before, seen(step, PROMISE_REPLY, loop_done=True))
    assert decision == ended(before, entry(3, "success", step, PROMISE_REPLY), "success",
                             LOOP_DONE_END.format(done="3/8"), iteration_base=NEW)


def test_loop_done_beats_empty_iterations_quiescence() -> None:
    before = gated(iteration=4, empty_iterations=1)
    step = empty()
    decision = decide(before, seen(step, loop_done=True))
    assert decision == ended(before, entry(4, "success", step), "success",
                             LOOP_DONE_END.format(done="4/8"), empty_iterations=2)


def test_empty_iterations_quiescence_beats_the_cap() -> None:
    before = gated(iteration=8, empty_iterations=1)
    step = empty()
    decision = decide(before, seen(step))
    assert decision == ended(
        before, entry(8, "quiesced", step), "quiesced",
        "Ralph loop quiesced at iteration 8/8: 2 green iterations in a row with nothing to "
        "commit.",
        empty_iterations=2,
    )


def test_the_cap_beats_the_timeout() -> None:
    late = T0 + timedelta(hours=1)
    before = gated(iteration=8, timeout_minutes=30, deadline_at=T0 + timedelta(minutes=30))
    step = committed()
    decision = decide(before, seen(step, now=late))
    assert decision == ended(
        before, entry(8, "limit", step, ended=late), "limit",
        "Ralph loop stopped: 8 iterations made without <promise>DONE</promise>.", now=late,
        iteration_base=NEW,
    )


def test_the_timeout_ends_a_gate_loop_below_the_cap() -> None:
    late = T0 + timedelta(hours=1)
    before = gated(iteration=3, timeout_minutes=30, deadline_at=T0 + timedelta(minutes=30))
    step = committed()
    decision = decide(before, seen(step, now=late))
    assert decision == ended(
        before, entry(3, "timeout", step, ended=late), "timeout",
        "Ralph loop timed out after 30 minutes, at iteration 3/8.", now=late,
        iteration_base=NEW,
    )


def test_empty_iterations_below_quiesce_after_go_on() -> None:
    before = gated(iteration=2, quiesce_after=3, empty_iterations=1)
    step = empty()
    assert decide(before, seen(step)) == continued(before, entry(2, "continue", step),
                                                   standing(3), empty_iterations=2)


# --- the counters ---------------------------------------------------------------------------


def test_a_commit_resets_both_counters_and_moves_the_base() -> None:
    before = gated(iteration=3, red_streak=2, empty_iterations=1, repairing=True)
    step = committed()
    assert decide(before, seen(step)) == continued(
        before, entry(3, "continue", step), standing(4),
        red_streak=0, empty_iterations=0, repairing=False, iteration_base=NEW,
    )


def test_an_empty_iteration_counts_and_resets_the_red_streak() -> None:
    before = gated(iteration=3, red_streak=2)
    step = empty()
    assert decide(before, seen(step)) == continued(
        before, entry(3, "continue", step), standing(4), red_streak=0, empty_iterations=1,
    )


def test_a_red_gate_asks_for_a_repair_and_breaks_a_run_of_empty_iterations() -> None:
    before = gated(iteration=3, red_streak=1, empty_iterations=1)
    step = repair()
    decision = decide(before, seen(step))
    assert decision.state == after(before, entry(3, "continue", step), iteration=4,
                                   iteration_started_at=T1, repairing=True, empty_iterations=0)
    assert (decision.action, decision.message) == ("continue", "Ralph iteration 4/8")


def test_the_repair_prompt_replaces_the_standing_prompt() -> None:
    before = gated(iteration=3)
    decision = decide(before, seen(repair()))
    assert decision.reason == (
        f"Ralph iteration 4/8: {HEADER}\n\n"
        "Repair: the gate failed after your last iteration. Fix exactly this failure and "
        "nothing else; the gate runs again when you stop, and if it is still red, the "
        "iteration's changes are reverted.\n\n"
        "`pytest -q`: exit code 1. Its output:\n"
        "```\nFAILED tests/test_app.py::test_add - assert 3 == 4\n```\n"
        f"\n\n---\n\n{GATE_NOTES}"
    )
    assert "Make the tests pass" not in decision.reason


def test_a_revert_raises_the_red_streak_and_ends_the_repair() -> None:
    before = gated(iteration=4, red_streak=1, empty_iterations=1, repairing=True)
    step = reverted()
    assert decide(before, seen(step)) == continued(
        before, entry(4, "continue", step), standing(5, feedback=REVERTED_NOTE),
        red_streak=2, repairing=False, empty_iterations=0,
    )


def test_a_revert_commit_becomes_the_base() -> None:
    before = gated(iteration=4, repairing=True)
    step = reverted(commit=REVERT)
    assert decide(before, seen(step)) == continued(
        before, entry(4, "continue", step), standing(5, feedback=REVERTED_NOTE),
        red_streak=1, repairing=False, iteration_base=REVERT,
    )


def test_three_reverts_in_a_row_end_the_loop_as_failure() -> None:
    state = gated(max_iterations=20)
    actions = []
    for number in range(1, 7):
        step = repair() if number % 2 else reverted()
        decision = decide(state, seen(step, reply=f"Attempt {number}."))
        actions.append((decision.action, decision.state.red_streak))
        state = decision.state
    assert actions == [("continue", 0), ("continue", 1), ("continue", 1), ("continue", 2),
                       ("continue", 2), ("end", 3)]
    assert (state.outcome, state.end_message) == ("failure", RED_STREAK_END.format(done="6/20"))


def test_a_green_iteration_between_reverts_resets_the_streak() -> None:
    state = gated(max_iterations=20)
    for number, step in enumerate([repair(), reverted(), repair(), reverted(), committed(),
                                   repair(), reverted()], start=1):
        decision = decide(state, seen(step, reply=f"Attempt {number}."))
        state = decision.state
    assert (decision.action, state.red_streak, state.iteration) == ("continue", 1, 8)


def test_a_git_error_is_a_failure() -> None:
    before = gated(iteration=3, red_streak=1)
    step = GateStep([GREEN], "error", error="git commit failed in /project: disk full")
    decision = decide(before, seen(step))
    assert decision == ended(
        before, entry(3, "failure", step), "failure",
        "Ralph loop failed at iteration 3/8: git: git commit failed in /project: disk full",
    )


def test_a_red_baseline_is_a_failure_not_counted_in_the_red_streak() -> None:
    before = gated(iteration=6, red_streak=2, repairing=True)
    step = reverted(baseline=[RED])
    decision = decide(before, seen(step))
    # Not the red streak's end: the streak stays at 2 and the repair flag as it was.
    assert decision == ended(
        before, entry(6, "failure", step), "failure",
        "Ralph loop failed at iteration 6/8: the gate is red on the reverted baseline too, so "
        "the gate or its environment is broken (an infrastructure failure, not counted as an "
        "iteration's result).",
    )


def test_a_claim_in_a_red_gate_iteration_gets_a_repair_not_success() -> None:
    before = gated(iteration=2)
    step = repair()
    decision = decide(before, seen(step, PROMISE_REPLY))
    assert decision.state == after(before, entry(2, "continue", step, PROMISE_REPLY),
                                   iteration=3, iteration_started_at=T1, repairing=True)
    assert decision.reason.startswith(f"Ralph iteration 3/8: {HEADER}\n\nRepair: ")


def test_a_claim_in_a_green_gate_iteration_is_a_success() -> None:
    before = gated(iteration=2)
    step = committed()
    decision = decide(before, seen(step, PROMISE_REPLY))
    assert decision == ended(before, entry(2, "success", step, PROMISE_REPLY), "success",
                             "Ralph loop done: <promise>DONE</promise> seen at iteration 2/8.",
                             iteration_base=NEW)


def test_loop_done_in_a_red_gate_iteration_gets_a_repair_not_success() -> None:
    before = gated(iteration=2)
    decision = decide(before, seen(repair(), loop_done=True))
    assert (decision.action, decision.state.repairing) == ("continue", True)


# --- prompts, records and resume --------------------------------------------------------------


@pytest.mark.parametrize("level", EFFORT_LEVELS)
def test_effort_is_stated_in_the_header(level: str) -> None:
    before = gated(effort=level)
    assert iteration_header(before) == (
        f"Ralph iteration 1/8: {HEADER} (effort: {level})")
    decision = decide(before, seen(committed()))
    assert decision.reason.startswith(f"Ralph iteration 2/8: {HEADER} (effort: {level})\n\n"
                                      "Make the tests pass\n\n")
    repairing = decide(before, seen(repair()))
    assert repairing.reason.startswith(f"Ralph iteration 2/8: {HEADER} (effort: {level})\n\n"
                                       "Repair: ")


def test_the_iteration_record_carries_what_the_gate_and_git_did() -> None:
    long_output = "x" * 1000 + "\n" + "y" * 1000
    red = command_result(GATE, 2, long_output)
    lint = command_result("ruff check .", 0, "All checks passed!")
    step = GateStep([red, lint], "reverted", commit=REVERT,
                    restored=["README.md", "src/app.py"], removed=["notes/new.txt"],
                    baseline=[GREEN, lint])
    reply = ("Tried a new parser.\nApproach: rewrite the parser\nEvidence: pytest red\n"
             "Learning: the grammar is ambiguous\nNext: split the rule")
    decision = decide(gated(gate=[GATE, "ruff check ."], repairing=True), seen(step, reply))
    assert decision.state.iterations == [IterationRecord(
        number=1, started_at=T0, ended_at=T1, result="continue",
        reply_excerpt=("Tried a new parser. Approach: rewrite the parser Evidence: pytest red "
                       "Learning: the grammar is ambiguous Next: split the rule"),
        approach="rewrite the parser", evidence="pytest red",
        learning="the grammar is ambiguous", next_action="split the rule",
        tool_calls=1,
        gate=[replace(red, output_tail=long_output[-1500:]), lint],
        gate_action="reverted", commit=REVERT,
        restored=["README.md", "src/app.py"], removed=["notes/new.txt"],
    )]


def test_the_counters_survive_the_state_file_and_a_resume(git_repo: Path) -> None:
    store = store_for(git_repo)
    head = git(git_repo, "rev-parse", "HEAD")
    stopped = make_state(
        git_repo, gate=[GATE], iteration=8, iteration_base=head, red_streak=2,
        empty_iterations=1, repairing=True, outcome="limit", ended_at=T1,
        end_message="Ralph loop stopped: 8 iterations made without <promise>DONE</promise>.",
    )
    store.archive(stopped)
    previous = latest_resumable(store, SESSION)
    assert previous == stopped
    resumed_at = T1 + timedelta(minutes=1)
    reopened = resume_loop(store, previous, ResumeRequest(), resumed_at, by="/ralph-resume")
    assert reopened == replace(
        stopped, outcome=None, ended_at=None, end_message="", iteration=9, max_iterations=16,
        iteration_started_at=resumed_at, updated_at=resumed_at,
        tree_fingerprint=gitstate.tree_fingerprint(git_repo), repairing=False,
        resumes=[ResumeRecord(at=resumed_at, after="limit", by="/ralph-resume")],
    )
    assert store.load(SESSION) == reopened
    # One more revert after the resume is the third in a row.
    decision = decide(reopened, seen(reverted(), now=resumed_at))
    assert (decision.outcome, decision.message) == ("failure", RED_STREAK_END.format(done="9/16"))
