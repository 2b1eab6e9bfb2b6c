"""decide(), in memory: the ending rules in their fixed order; the Ralph protocol (the
verification gate, terminal lines, re-plan and stuck rules, quiescence, the deadline, the
iteration record); and gate mode (the rules where two hold at once, the counters, the repair
prompt and the revert note, with hand-built gate steps and command results)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from finesse.engine import RESUMABLE, Decision, Observation, decide, excerpt, needs_verification
from finesse.loop.grammar import EFFORT_LEVELS, ResumeRequest
from finesse.loop.resume import latest_resumable, resume_loop
from finesse.models import Gate, IterationRecord, LoopState, ResumeRecord
from finesse.prompts import iteration_header, loop_prompt
from finesse.record import replace
from finesse.results import CommandResult, GateStep
from finesse.schema import from_dict, to_dict
from finesse.signals import digest
from finesse.support import git as gitstate
from tests.helpers.repo import git
from tests.helpers.states import (
    SESSION,
    T0,
    T1,
    changed,
    command_result,
    make_state,
    observed,
    store_for,
)
from tests.helpers.texts import NOTES, REVERTED_NOTE

ROOT = Path("/project")
PROMISE_REPLY = "All green. <promise>DONE</promise>"


def state(**overrides: object) -> LoopState:
    return make_state(ROOT, **overrides)


def seen(reply: str | None, *, tool_calls: int | None = 1, tree: str | None = None,
         verification: list[CommandResult] | None = None, cancelled: bool = False,
         now: datetime = T1) -> Observation:
    return observed(reply=reply, now=now, cancelled=cancelled, verification=verification,
                       tool_calls=tool_calls, tree_fingerprint=tree)


def record(number: int, result: str, reply: str, *, tool_calls: int | None = 1,
           verification: list[CommandResult] | None = None, started: datetime = T0,
           tree_changed: bool | None = None, **fields: str) -> IterationRecord:
    return IterationRecord(number=number, started_at=started, ended_at=T1, result=result,
                           reply_excerpt=reply, verification=verification or [],
                           tool_calls=tool_calls, tree_changed=tree_changed, **fields)


def recorded(before: LoopState, last: IterationRecord, reply: str, **changes: object) -> LoopState:
    """`before` after an iteration that ended at T1 with `reply`."""
    fields: dict[str, object] = {
        "iterations": [*before.iterations, last],
        "updated_at": T1,
        "last_reply_excerpt": reply,
        "last_reply_digest": digest(reply),
    }
    fields.update(changes)
    return replace(before, **fields)


def ended(state_after: LoopState, outcome: str, message: str,
          notes: list[str] | None = None, **changes: object) -> Decision:
    return Decision("end", replace(state_after, outcome=outcome, ended_at=T1,
                                   end_message=message, **changes),
                    message=message, notes=notes or [])


UNVERIFIED = " (unverified: no verification command, so it rests on the agent's word)."


def cap_note(cap: int = 8, evidence: str = "no verified result was reached") -> str:
    """The Review note a cap leaves: seed 001's BLOCKED, with the evidence and the action."""
    return (f"BLOCKED (the iteration cap of {cap} was hit): {evidence}. Required user action: "
            f"review the attempts above, then resume with `/ralph-resume --max-iterations "
            f"{cap * 2}` or give it up with `/ralph-abort`.")


def continued(state_after: LoopState, feedback: str = "",
              notes: list[str] | None = None) -> Decision:
    following = replace(state_after, iteration=state_after.iteration + 1,
                        iteration_started_at=T1)
    return Decision("continue", following, reason=loop_prompt(following, feedback),
                    message=f"Ralph iteration {following.iteration}/{following.max_iterations}",
                    notes=notes or [])


# === the ending rules, in memory ==================================================================


def test_continue_increments_and_repeats_the_prompt() -> None:
    before = state()
    decision = decide(before, seen("Still working."))
    assert decision == Decision(
        "continue",
        replace(before, **{
            "iteration": 2,
            "iteration_started_at": T1,
            "updated_at": T1,
            "last_reply_excerpt": "Still working.",
            "last_reply_digest": digest("Still working."),
            "iterations": [record(1, "continue", "Still working.", tool_calls=1)],
        }),
        reason=(
            "Ralph iteration 2/8: output <promise>DONE</promise> only when it is completely "
            f"true\n\nMake the tests pass\n\n---\n\n{NOTES}"
        ),
        message="Ralph iteration 2/8",
    )
    assert decision.outcome is None


def test_reason_carries_the_prompt_verbatim() -> None:
    prompt = "Line one\n  indented `code` $(x) 'q' \"dq\"\n\nLast"
    decision = decide(state(prompt=prompt, promise="ALL TESTS PASS", max_iterations=3),
                      seen(""))
    assert decision.reason == (
        "Ralph iteration 2/3: output <promise>ALL TESTS PASS</promise> only when it is "
        f"completely true\n\n{prompt}\n\n---\n\n{NOTES}"
    )


def test_promise_ends_with_success() -> None:
    before = state(iteration=3)
    decision = decide(before, observed(reply=PROMISE_REPLY, now=T1))
    message = "Ralph loop done: <promise>DONE</promise> at iteration 3/8" + UNVERIFIED
    assert decision == Decision(
        "end",
        replace(before, **{
            "iterations": [record(3, "success", PROMISE_REPLY, tool_calls=None)],
            "updated_at": T1,
            "last_reply_excerpt": PROMISE_REPLY,
            "last_reply_digest": digest(PROMISE_REPLY),
            "outcome": "success",
            "ended_at": T1,
            "end_message": message,
            "verified": False,
        }),
        message=message,
    )
    assert decision.outcome == "success"


def test_promise_in_code_does_not_end() -> None:
    decision = decide(state(), seen("Say `<promise>DONE</promise>` later"))
    assert (decision.action, decision.outcome, decision.state.iteration) == ("continue", None, 2)


def test_cancelled_beats_promise() -> None:
    before = state(iteration=2)
    decision = decide(before, observed(reply=PROMISE_REPLY, now=T1, cancelled=True))
    message = "Ralph loop cancelled by the kill switch at iteration 2/8."
    assert decision == Decision(
        "end",
        replace(before, **{
            "iterations": [record(2, "cancelled", PROMISE_REPLY, tool_calls=None)],
            "updated_at": T1,
            "last_reply_excerpt": PROMISE_REPLY,
            "last_reply_digest": digest(PROMISE_REPLY),
            "outcome": "cancelled",
            "ended_at": T1,
            "end_message": message,
            "ended_by": "the kill switch",
        }),
        message=message,
    )


def test_cancelled_beats_cap() -> None:
    decision = decide(state(iteration=8), observed(reply="x", now=T1, cancelled=True))
    assert (decision.action, decision.outcome) == ("end", "cancelled")


def test_promise_beats_cap() -> None:
    decision = decide(state(iteration=8), observed(reply=PROMISE_REPLY, now=T1))
    assert (decision.action, decision.outcome, decision.message) == (
        "end", "success", "Ralph loop done: <promise>DONE</promise> at iteration 8/8" + UNVERIFIED
    )


def test_cap_ends_with_limit() -> None:
    before = state(iteration=8)
    decision = decide(before, seen("not yet"))
    message = "Ralph loop stopped: 8 iterations made without <promise>DONE</promise>."
    assert decision == Decision(
        "end",
        replace(before, **{
            "iterations": [record(8, "limit", "not yet", tool_calls=1)],
            "updated_at": T1,
            "last_reply_excerpt": "not yet",
            "last_reply_digest": digest("not yet"),
            "outcome": "limit",
            "ended_at": T1,
            "end_message": message,
        }),
        message=message,
        notes=[cap_note()],
    )


@pytest.mark.parametrize("cap", [1, 2, 3, 8])
def test_cap_of_n_ends_at_iteration_n(cap: int) -> None:
    current = state(max_iterations=cap)
    now = T0
    decisions: list[Decision] = []
    while True:
        now += timedelta(minutes=1)
        decision = decide(current, seen(f"reply {current.iteration}", now=now))
        decisions.append(decision)
        if decision.action == "end":
            break
        current = decision.state
    assert [d.action for d in decisions] == ["continue"] * (cap - 1) + ["end"]
    final = decisions[-1].state
    assert (final.outcome, final.iteration, final.ended_at) == ("limit", cap, now)
    assert [r.number for r in final.iterations] == list(range(1, cap + 1))
    assert [r.result for r in final.iterations] == ["continue"] * (cap - 1) + ["limit"]
    assert [r.reply_excerpt for r in final.iterations] == [
        f"reply {n}" for n in range(1, cap + 1)
    ]
    # each record spans from its iteration's start to the stop that ended it
    assert [(r.started_at, r.ended_at) for r in final.iterations] == [
        (T0 if n == 1 else T0 + timedelta(minutes=n - 1), T0 + timedelta(minutes=n))
        for n in range(1, cap + 1)
    ]


def test_history_records_are_appended() -> None:
    earlier = record(1, "continue", "first", tool_calls=None)
    before = state(iteration=2, iterations=[earlier], last_reply_excerpt="first")
    decision = decide(before, seen("second"))
    assert decision.state.iterations == [earlier, record(2, "continue", "second", tool_calls=1)]


def test_reply_none_never_ends_by_promise() -> None:
    before = state(promise="DONE", last_reply_excerpt="kept", last_reply_digest="0123abcd")
    decision = decide(before, seen(None))
    assert decision.action == "continue"
    assert decision.state.iterations == [record(1, "continue", "", tool_calls=1)]
    # An unread reply is no reply to compare the next one with.
    assert (decision.state.last_reply_excerpt, decision.state.last_reply_digest) == ("kept", "")


def test_reply_none_at_cap_is_limit() -> None:
    decision = decide(state(iteration=8), seen(None))
    assert (decision.action, decision.outcome) == ("end", "limit")


def test_decide_does_not_mutate_its_input() -> None:
    before = state()
    snapshot = to_dict(before)
    decide(before, observed(reply=PROMISE_REPLY, now=T1))
    decide(before, observed(reply="x", now=T1))
    assert to_dict(before) == snapshot
    # The ends that copy the history and mark its last record: quiescence and the cap.
    earlier = record(1, "continue", "x", tool_calls=None)
    repeated = state(iteration=2, iterations=[earlier], last_reply_digest=digest("x"))
    snapshot = to_dict(repeated)
    assert decide(repeated, observed(reply="x", now=T1)).outcome == "quiesced"
    assert decide(replace(repeated, iteration=8), seen("y")).outcome == "limit"
    assert to_dict(repeated) == snapshot


def test_excerpt() -> None:
    assert excerpt("  a\n\n b  ") == "a b"
    assert excerpt("x" * 300) == "x" * 300
    assert excerpt("x" * 301) == "x" * 299 + "…"
    assert excerpt("abcdef", 4) == "abc…"


@given(st.text(), st.integers(1, 50), st.integers(1, 50), st.booleans(),
       st.none() | st.integers(0, 3))
def test_decide_always_yields_a_valid_state(
    reply: str, iteration: int, cap: int, cancelled: bool, tool_calls: int | None
) -> None:
    before = state(iteration=min(iteration, cap), max_iterations=cap)
    decision = decide(before, observed(reply=reply, now=T1, cancelled=cancelled,
                                          tool_calls=tool_calls))
    from_dict(LoopState, to_dict(decision.state))  # still a valid file
    assert len(decision.state.iterations) == 1
    if decision.action == "continue":
        assert decision.outcome is None
        assert decision.state.iteration == before.iteration + 1 <= cap
        assert decision.reason == loop_prompt(decision.state)
    else:
        # One idle iteration of two allowed cannot quiesce; no verification, no deadline.
        assert decision.outcome in ("cancelled", "success", "blocked", "limit")
        assert decision.state.iteration == before.iteration
        assert decision.state.ended_at == T1 and decision.reason == ""
        assert decision.state.end_message == decision.message


# === the Ralph protocol ===========================================================================

RED = command_result("pytest -q", 1, "FAILED test_app.py::test_total - assert 3 == 4\n")
OTHER_RED = command_result("pytest -q", 1, "FAILED test_app.py::test_tax - KeyError\n")
GREEN = command_result("pytest -q", 0, "5 passed in 0.1s\n")
LINT_GREEN = command_result("ruff check .", 0, "All checks passed!\n")
REJECTED = "Your completion claim was rejected: the verification failed.\n\n"
RED_EXCERPT = (
    "`pytest -q`: exit code 1. Its output:\n"
    "```\nFAILED test_app.py::test_total - assert 3 == 4\n```\n"
)
REPLAN = (
    "\n\nThe same failure happened twice in a row. Stop: re-read the plan and the failure, "
    "then write a new approach in a line starting `Re-plan:` before you change anything "
    "(re-plan {n} of 2; a third identical failure stops the loop)."
)


def verifying(**overrides: object) -> LoopState:
    return state(verify=["pytest -q"], **overrides)


# --- rule order: two rules hold at once, the earlier one wins ---------------------------------


def test_cancel_beats_a_claim() -> None:
    # The hook runs no verification on a cancelled stop: the claim must not need it.
    before = verifying(iteration=2)
    decision = decide(before, seen(PROMISE_REPLY, cancelled=True))
    assert decision == ended(
        recorded(before, record(2, "cancelled", PROMISE_REPLY), PROMISE_REPLY),
        "cancelled", "Ralph loop cancelled by the kill switch at iteration 2/8.",
        ended_by="the kill switch",
    )


def test_blocked_beats_a_claim() -> None:
    # Seed 001's terminal format: the result line, then the promise. A terminal
    # RESULT: BLOCKED ends the loop as blocked; the promise after it claims nothing and is no
    # part of the blocker. (This test asserted the opposite, a claim beating BLOCKED, until
    # issue 9.)
    reply = "RESULT: BLOCKED\nno key\n\n<promise>DONE</promise>"
    before = verifying(iteration=2)
    decision = decide(before, seen(reply))  # no verification ran, and none is needed
    assert decision == ended(
        recorded(before, record(2, "blocked", "RESULT: BLOCKED no key <promise>DONE</promise>"),
                 "RESULT: BLOCKED no key <promise>DONE</promise>",
                 last_reply_digest=digest(reply), blocker="no key"),
        "blocked", "Ralph loop blocked at iteration 2/8: no key",
        ["Blocked at iteration 2: no key"],
    )


def test_blocked_beats_quiescence() -> None:
    reply = "RESULT: BLOCKED\nThe database is down."
    # Idle (no tool call) for the second time, and the same reply as last time.
    before = state(iteration=3, idle_iterations=1, last_reply_digest=digest(reply))
    decision = decide(before, seen(reply, tool_calls=0))
    excerpt = "RESULT: BLOCKED The database is down."
    assert decision == ended(
        recorded(before, record(3, "blocked", excerpt, tool_calls=0), excerpt,
                 last_reply_digest=digest(reply), blocker="The database is down."),
        "blocked", "Ralph loop blocked at iteration 3/8: The database is down.",
        ["Blocked at iteration 3: The database is down."],
    )


def test_quiescence_beats_the_cap() -> None:
    before = state(iteration=8, idle_iterations=1)
    decision = decide(before, seen("Thinking.", tool_calls=0))
    assert decision == ended(
        recorded(before, record(8, "quiesced", "Thinking.", tool_calls=0), "Thinking.",
                 idle_iterations=2),
        "quiesced", "Ralph loop quiesced at iteration 8/8: 2 iterations in a row with no tool "
                    "call and no change to the project.",
    )


def test_the_cap_beats_the_deadline() -> None:
    before = state(iteration=8, timeout_minutes=5, deadline_at=T0 + timedelta(minutes=5))
    decision = decide(before, seen("Edited a file."))
    assert decision == ended(
        recorded(before, record(8, "limit", "Edited a file."), "Edited a file."),
        "limit", "Ralph loop stopped: 8 iterations made without <promise>DONE</promise>.",
        [cap_note()],
    )


def test_a_verified_claim_beats_the_cap_and_the_deadline() -> None:
    before = verifying(iteration=8, deadline_at=T0)
    decision = decide(before, seen(PROMISE_REPLY, verification=[GREEN]))
    assert (decision.action, decision.outcome) == ("end", "success")


def test_a_rejected_claim_at_the_cap_ends_with_limit() -> None:
    before = verifying(iteration=8)
    decision = decide(before, seen(PROMISE_REPLY, verification=[RED]))
    assert decision == ended(
        recorded(before, record(8, "rejected", PROMISE_REPLY, verification=[RED]), PROMISE_REPLY,
                 failure_fingerprint=RED.fingerprint, failure_streak=1,
                 last_verification=[RED]),
        "limit", "Ralph loop stopped: 8 iterations made without <promise>DONE</promise>.",
        [cap_note(evidence="the verification was still red (`pytest -q` exit 1)")],
    )


def test_a_rejected_claim_past_the_deadline_ends_with_timeout() -> None:
    before = verifying(iteration=3, timeout_minutes=5, deadline_at=T1)
    decision = decide(before, seen(PROMISE_REPLY, verification=[RED]))
    assert (decision.outcome, decision.message, decision.state.iterations[-1].result) == (
        "timeout", "Ralph loop timed out after 5 minutes, at iteration 3/8.", "rejected"
    )


# --- the verification gate --------------------------------------------------------------------


def test_a_claim_with_green_verification_succeeds_with_the_evidence() -> None:
    before = state(iteration=2, verify=["pytest -q", "ruff check ."])
    decision = decide(before, seen(PROMISE_REPLY, verification=[GREEN, LINT_GREEN]))
    assert decision == ended(
        recorded(before, record(2, "success", PROMISE_REPLY, verification=[GREEN, LINT_GREEN]),
                 PROMISE_REPLY, last_verification=[GREEN, LINT_GREEN]),
        "success", "Ralph loop done: <promise>DONE</promise> at iteration 2/8 and verified: "
                   "`pytest -q` exit 0, `ruff check .` exit 0.",
        verified=True,
    )


def test_a_claim_with_red_verification_continues_with_the_failure() -> None:
    before = state(iteration=2, verify=["pytest -q", "ruff check ."])
    decision = decide(before, seen(PROMISE_REPLY, verification=[RED, LINT_GREEN]))
    assert decision == continued(
        recorded(before, record(2, "rejected", PROMISE_REPLY, verification=[RED, LINT_GREEN]),
                 PROMISE_REPLY, failure_fingerprint=RED.fingerprint, failure_streak=1,
                 last_verification=[RED, LINT_GREEN]),
        REJECTED + RED_EXCERPT,
    )
    assert decision.reason == (
        "Ralph iteration 3/8: output <promise>DONE</promise> only when it is completely true"
        "\n\nMake the tests pass\n\n---\n\n"
        "When you claim completion, the plugin runs `pytest -q`, `ruff check .` itself and "
        "rejects the claim if any fails.\n"
        "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you "
        "and what the user must do; that ends the loop as blocked, whatever else the reply "
        "says.\n"
        "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
        "`Next: ...`.\n\n"
        "Your completion claim was rejected: the verification failed.\n\n"
        "`pytest -q`: exit code 1. Its output:\n"
        "```\nFAILED test_app.py::test_total - assert 3 == 4\n```\n"
    )


def test_a_claim_without_verification_commands_succeeds_on_its_word() -> None:
    decision = decide(state(), seen(PROMISE_REPLY))
    assert (decision.outcome, decision.message, decision.state.last_verification,
            decision.state.verified) == (
        "success", "Ralph loop done: <promise>DONE</promise> at iteration 1/8" + UNVERIFIED, [],
        False,
    )



def test_a_claim_with_verify_configured_but_no_results_raises() -> None:
    with pytest.raises(ValueError, match="a completion claim needs the verification results"):
        decide(verifying(), seen(PROMISE_REPLY, verification=None))


def test_stored_output_is_cut_to_its_end_but_the_prompt_gets_the_excerpt() -> None:
    output = "".join(f"line {n:04d}\n" for n in range(400))  # 4000 characters
    long_red = command_result("pytest -q", 1, output)
    decision = decide(verifying(), seen(PROMISE_REPLY, verification=[long_red]))
    stored = replace(long_red, output_tail=output[-1500:])
    assert decision.state.last_verification == [stored]
    assert decision.state.iterations[-1].verification == [stored]
    # The fingerprint is the one of the whole run, not of the cut output.
    assert decision.state.failure_fingerprint == long_red.fingerprint
    assert decision.reason.endswith("line 0399\n```\n")
    assert "line 0100" in decision.reason and "line 0000" not in decision.reason


# --- re-plan and stuck rules ------------------------------------------------------------------


def test_the_same_failure_twice_asks_for_a_re_plan() -> None:
    before = verifying(iteration=3, failure_fingerprint=RED.fingerprint, failure_streak=1,
                       last_verification=[RED])
    decision = decide(before, seen(PROMISE_REPLY, verification=[RED]))
    assert decision == continued(
        recorded(before, record(3, "rejected", PROMISE_REPLY, verification=[RED]), PROMISE_REPLY,
                 failure_fingerprint=RED.fingerprint, failure_streak=2, replans=1,
                 last_verification=[RED]),
        REJECTED + RED_EXCERPT + REPLAN.format(n=1),
        ["Re-plan 1 asked at iteration 3: `pytest -q` failed the same way twice."],
    )


def test_a_third_identical_failure_blocks() -> None:
    before = verifying(iteration=4, failure_fingerprint=RED.fingerprint, failure_streak=2,
                       replans=1)
    decision = decide(before, seen(PROMISE_REPLY, verification=[RED]))
    # Seed 001: the re-plan cap makes the result BLOCKED; the loop stops as a (resumable)
    # limit, and the Review records the evidence and what the user must do.
    blocker = ("BLOCKED (the re-plan limit was hit): the same verification failure "
               "(`pytest -q`) 3 times in a row. Required user action: look at the failure "
               "below, fix what the loop could not, then `/ralph-resume`.")
    assert decision == ended(
        recorded(before, record(4, "rejected", PROMISE_REPLY, verification=[RED]), PROMISE_REPLY,
                 failure_fingerprint=RED.fingerprint, failure_streak=3,
                 last_verification=[RED], blocker=blocker),
        "limit", "Ralph loop stopped at iteration 4/8: the same verification failure "
                 "(`pytest -q`) 3 times in a row.",
        [blocker],
    )


def test_a_repeat_after_both_re_plans_blocks() -> None:
    before = verifying(iteration=6, failure_fingerprint=RED.fingerprint, failure_streak=1,
                       replans=2)
    decision = decide(before, seen(PROMISE_REPLY, verification=[RED]))
    blocker = ("BLOCKED (the re-plan limit was hit): the same verification failure "
               "(`pytest -q`) again after 2 re-plans. Required user action: look at the "
               "failure below, fix what the loop could not, then `/ralph-resume`.")
    assert decision == ended(
        recorded(before, record(6, "rejected", PROMISE_REPLY, verification=[RED]), PROMISE_REPLY,
                 failure_fingerprint=RED.fingerprint, failure_streak=2,
                 last_verification=[RED], blocker=blocker),
        "limit", "Ralph loop stopped at iteration 6/8: the same verification failure "
                 "(`pytest -q`) again after 2 re-plans.",
        [blocker],
    )


def test_a_different_failure_resets_the_streak() -> None:
    before = verifying(iteration=4, failure_fingerprint=RED.fingerprint, failure_streak=2,
                       replans=1)
    decision = decide(before, seen(PROMISE_REPLY, verification=[OTHER_RED]))
    assert decision == continued(
        recorded(before, record(4, "rejected", PROMISE_REPLY, verification=[OTHER_RED]),
                 PROMISE_REPLY, failure_fingerprint=OTHER_RED.fingerprint, failure_streak=1,
                 last_verification=[OTHER_RED]),
        REJECTED + "`pytest -q`: exit code 1. Its output:\n"
                   "```\nFAILED test_app.py::test_tax - KeyError\n```\n",
    )


def test_noise_in_the_output_is_the_same_failure() -> None:
    first = command_result("pytest -q", 1, "FAILED in 0.31s (pid 4242)\n")
    again = command_result("pytest -q", 1, "FAILED in 0.57s (pid 977)\n")
    before = verifying(failure_fingerprint=first.fingerprint, failure_streak=1)
    decision = decide(before, seen(PROMISE_REPLY, verification=[again]))
    assert (decision.state.failure_streak, decision.state.replans) == (2, 1)


def test_a_whole_run_of_failures_uses_both_re_plans_then_blocks() -> None:
    a, b, c = (command_result("make check", 2, f"error {name}\n") for name in ("a", "b", "c"))
    current = state(verify=["make check"], max_iterations=20)
    decisions: list[Decision] = []
    for number, result in enumerate([a, a, b, b, c, c], start=1):
        decision = decide(current, seen(PROMISE_REPLY, verification=[result],
                                        now=T0 + timedelta(minutes=number)))
        decisions.append(decision)
        current = decision.state
    assert [(d.action, d.state.failure_streak, d.state.replans) for d in decisions] == [
        ("continue", 1, 0), ("continue", 2, 1), ("continue", 1, 1), ("continue", 2, 2),
        ("continue", 1, 2), ("end", 2, 2),
    ]
    assert [d.notes for d in decisions[:4]] == [
        [], ["Re-plan 1 asked at iteration 2: `make check` failed the same way twice."],
        [], ["Re-plan 2 asked at iteration 4: `make check` failed the same way twice."],
    ]
    assert (current.outcome, current.blocker) == (
        "limit",
        "BLOCKED (the re-plan limit was hit): the same verification failure (`make check`) "
        "again after 2 re-plans. Required user action: look at the failure below, fix what "
        "the loop could not, then `/ralph-resume`.",
    )
    assert [r.result for r in current.iterations] == ["rejected"] * 6


def test_several_red_commands_make_one_failure() -> None:
    lint_red = command_result("ruff check .", 1, "E501 line too long\n")
    before = state(verify=["pytest -q", "ruff check ."])
    decision = decide(before, seen(PROMISE_REPLY, verification=[RED, lint_red]))
    assert decision.state.failure_fingerprint == f"{RED.fingerprint}+{lint_red.fingerprint}"
    again = decide(decision.state, seen(PROMISE_REPLY, verification=[RED, lint_red]))
    assert again.notes == [
        "Re-plan 1 asked at iteration 2: `pytest -q`, `ruff check .` failed the same way twice."
    ]


# --- terminal lines ---------------------------------------------------------------------------


def test_result_verified_complete_is_a_claim() -> None:
    reply = "Tests pass now.\nRESULT: VERIFIED_COMPLETE"
    green = decide(verifying(), seen(reply, verification=[GREEN]))
    assert (green.outcome, green.message) == (
        "success", "Ralph loop done: RESULT: VERIFIED_COMPLETE at iteration 1/8 and verified: "
                   "`pytest -q` exit 0."
    )

    red = decide(verifying(), seen(reply, verification=[RED]))
    assert (red.action, red.state.iterations[-1].result) == ("continue", "rejected")
    with pytest.raises(ValueError):
        decide(verifying(), seen(reply))


@pytest.mark.parametrize(
    "reply",
    [
        "The last line must be:\n```\nRESULT: VERIFIED_COMPLETE\n```\nI am not there yet.",
        "I will print `RESULT: VERIFIED_COMPLETE` when the tests pass.",
        "Not yet. RESULT: VERIFIED_COMPLETE comes later.",
    ],
)
def test_result_verified_complete_quoted_or_inside_a_line_is_no_claim(reply: str) -> None:
    # No verification results: were this a claim, decide would raise.
    decision = decide(verifying(), seen(reply))
    assert (decision.action, decision.state.iterations[-1].result) == ("continue", "continue")


def test_result_blocked_ends_with_the_blocker_text() -> None:
    reply = (
        "I tried the staging API.\n\n"
        "**RESULT: BLOCKED**\n"
        "the staging API needs a key\n"
        "Nobody gave me STAGING_KEY.\n"
        "Ask ops for it."
    )
    before = state(iteration=2)
    decision = decide(before, seen(reply))
    blocker = "the staging API needs a key\nNobody gave me STAGING_KEY.\nAsk ops for it."
    excerpt = ("I tried the staging API. **RESULT: BLOCKED** the staging API needs a key "
               "Nobody gave me STAGING_KEY. Ask ops for it.")
    assert decision == ended(
        recorded(before, record(2, "blocked", excerpt), excerpt, last_reply_digest=digest(reply),
                 blocker=blocker),
        "blocked", "Ralph loop blocked at iteration 2/8: the staging API needs a key Nobody "
                   "gave me STAGING_KEY. Ask ops for it.",
        [f"Blocked at iteration 2: {blocker}"],
    )


def test_result_blocked_in_code_does_not_end() -> None:
    decision = decide(state(), seen("When stuck I write:\n```\nRESULT: BLOCKED\nwhy\n```"))
    assert (decision.action, decision.state.blocker) == ("continue", "")


def test_a_long_blocker_is_cut_in_the_message_only() -> None:
    reason = "word " * 100
    decision = decide(state(), seen(f"RESULT: BLOCKED\n{reason}"))
    assert decision.state.blocker == reason.strip()
    assert decision.message == (
        "Ralph loop blocked at iteration 1/8: " + ("word " * 40)[:199] + "…"
    )


# --- quiescence -------------------------------------------------------------------------------


@pytest.mark.parametrize("again", ["Same plan as before.", "  Same plan\nas   before.  "])
def test_the_same_reply_twice_quiesces(again: str) -> None:
    before = state(iteration=3, last_reply_digest=digest("Same plan as before."))
    # It quiesces even with tool calls: the agent is circling.
    decision = decide(before, seen(again, tool_calls=4))
    shown = "Same plan as before."  # the excerpt collapses whitespace, as the digest does
    assert decision == ended(
        recorded(before, record(3, "quiesced", shown, tool_calls=4), shown,
                 last_reply_digest=digest(again)),
        "quiesced", "Ralph loop quiesced at iteration 3/8: the same reply twice in a row.",
    )


def test_a_different_reply_is_not_a_repeat() -> None:
    before = state(iteration=3, last_reply_digest=digest("Same plan as before."))
    assert decide(before, seen("A new plan.")).action == "continue"


def test_idle_iterations_reaching_quiesce_after_quiesce() -> None:
    before = state(iteration=5, quiesce_after=3, idle_iterations=2, tree_fingerprint="tree-1")
    decision = decide(before, seen("Let me think.", tool_calls=0, tree="tree-1"))
    assert decision == ended(
        recorded(before, record(5, "quiesced", "Let me think.", tool_calls=0,
                                tree_changed=False), "Let me think.", idle_iterations=3),
        "quiesced", "Ralph loop quiesced at iteration 5/8: 3 iterations in a row with no tool "
                    "call and no change to the project.",
    )


def test_an_idle_iteration_below_quiesce_after_counts_and_goes_on() -> None:
    before = state(iteration=5, quiesce_after=3, idle_iterations=1, tree_fingerprint="tree-1")
    decision = decide(before, seen("Let me think.", tool_calls=0, tree="tree-1"))
    assert decision == continued(recorded(
        before, record(5, "continue", "Let me think.", tool_calls=0, tree_changed=False),
        "Let me think.", idle_iterations=2,
    ))


def test_a_tool_call_resets_the_idle_count() -> None:
    before = state(iteration=5, quiesce_after=3, idle_iterations=2, tree_fingerprint="tree-1")
    decision = decide(before, seen("Ran the tests.", tool_calls=1, tree="tree-1"))
    assert decision == continued(recorded(
        before, record(5, "continue", "Ran the tests.", tool_calls=1, tree_changed=False),
        "Ran the tests.", idle_iterations=0, tree_fingerprint="tree-1",
    ))


def test_a_changed_tree_resets_the_idle_count() -> None:
    # No tool call seen (say the agent's edit came through a hook), yet the tree moved.
    before = state(iteration=5, quiesce_after=3, idle_iterations=2, tree_fingerprint="tree-1")
    decision = decide(before, seen("Edited app.py.", tool_calls=0, tree="tree-2"))
    assert decision == continued(recorded(
        before, record(5, "continue", "Edited app.py.", tool_calls=0, tree_changed=True),
        "Edited app.py.", idle_iterations=0, tree_fingerprint="tree-2",
    ))


@pytest.mark.parametrize(
    ("tool_calls", "tree", "idle"),
    [
        (None, "tree-1", 2),  # the transcript could not tell: the tree decides
        (0, None, 2),  # outside git: the tool calls decide
        (None, None, 2),  # nothing can tell: counted idle, so a loop always ends
        (2, None, 0),
        (None, "tree-2", 0),
    ],
)
def test_what_counts_as_idle(tool_calls: int | None, tree: str | None, idle: int) -> None:
    before = state(iteration=2, quiesce_after=5, idle_iterations=1, tree_fingerprint="tree-1")
    decision = decide(before, seen("x", tool_calls=tool_calls, tree=tree))
    assert (decision.action, decision.state.idle_iterations) == ("continue", idle)


def test_a_talk_only_loop_quiesces_at_quiesce_after_well_before_the_cap() -> None:
    # Claude Code ends a turn itself after 8 blocks without a tool call: quiesce first.
    current = state(tree_fingerprint="tree-1")
    actions = []
    for number in range(1, 9):
        decision = decide(current, seen(f"Thought {number}.", tool_calls=0, tree="tree-1",
                                        now=T0 + timedelta(minutes=number)))
        actions.append(decision.action)
        current = decision.state
        if decision.action == "end":
            break
    assert actions == ["continue", "end"]
    assert (current.outcome, current.iteration, current.idle_iterations) == ("quiesced", 2, 2)


# --- the deadline -----------------------------------------------------------------------------


def test_the_deadline_ends_with_timeout() -> None:
    before = state(iteration=4, timeout_minutes=30, deadline_at=T1)
    decision = decide(before, seen("Edited app.py."))
    assert decision == ended(
        recorded(before, record(4, "timeout", "Edited app.py."), "Edited app.py."),
        "timeout", "Ralph loop timed out after 30 minutes, at iteration 4/8.",
    )


def test_before_the_deadline_the_loop_goes_on() -> None:
    before = state(timeout_minutes=30, deadline_at=T1 + timedelta(seconds=1))
    assert decide(before, seen("Edited app.py.")).action == "continue"


# --- the iteration record ---------------------------------------------------------------------


def test_record_fields_land_in_the_iteration_and_learnings_accumulate() -> None:
    first_reply = (
        "Fixed the rounding.\n\n"
        "Approach: round half up in total()\n"
        "Evidence: test_total passes locally\n"
        "Learning: prices are Decimal, not float\n"
        "Next: fix test_tax"
    )
    before = state()
    first = decide(before, seen(first_reply, tool_calls=3))
    first_excerpt = (
        "Fixed the rounding. Approach: round half up in total() Evidence: test_total passes "
        "locally Learning: prices are Decimal, not float Next: fix test_tax"
    )
    assert first == continued(recorded(
        before,
        record(1, "continue", first_excerpt, tool_calls=3, approach="round half up in total()",
               evidence="test_total passes locally",
               learning="prices are Decimal, not float", next_action="fix test_tax"),
        first_excerpt, last_reply_digest=digest(first_reply),
        learnings=["prices are Decimal, not float"],
    ))
    second_reply = (
        "- **Approach:** add the tax table\n"
        "- **Learning:** prices are Decimal, not float\n"
        "- **Next action:** run the full suite\n"
    )
    second = decide(first.state, seen(second_reply, tool_calls=2,
                                      now=T1 + timedelta(minutes=1)))
    assert second.state.iterations[-1] == IterationRecord(
        number=2, started_at=T1, ended_at=T1 + timedelta(minutes=1), result="continue",
        reply_excerpt=" ".join(second_reply.split()), approach="add the tax table",
        learning="prices are Decimal, not float", next_action="run the full suite",
        tool_calls=2,
    )
    # A learning already recorded is not repeated.
    assert second.state.learnings == ["prices are Decimal, not float"]
    third = decide(second.state, seen("Learnings: the tax table is per state", tool_calls=1,
                                      now=T1 + timedelta(minutes=2)))
    assert third.state.learnings == [
        "prices are Decimal, not float", "the tax table is per state"
    ]


def test_record_lines_in_code_are_not_recorded() -> None:
    decision = decide(state(), seen("```\nApproach: quoted\nLearning: quoted\n```"))
    assert decision.state.iterations[-1] == record(
        1, "continue", "``` Approach: quoted Learning: quoted ```"
    )
    assert decision.state.learnings == []


def test_the_record_survives_the_end_of_the_loop() -> None:
    reply = "Approach: final check\nEvidence: all green\n<promise>DONE</promise>"
    decision = decide(verifying(), seen(reply, verification=[GREEN]))
    assert decision.state.iterations[-1] == record(
        1, "success", " ".join(reply.split()), verification=[GREEN], approach="final check",
        evidence="all green",
    )


# === gate mode ====================================================================================

GATE = "pytest -q"
GATE_GREEN = command_result(GATE, 0, "3 passed")
GATE_RED = command_result(GATE, 1, "FAILED tests/test_app.py::test_add - assert 3 == 4")
BASE = "a" * 40  # the commit the iteration started from
NEW = "b" * 40  # the commit a green iteration made
REVERT = "c" * 40  # the commit that undid an agent's own commits
REPLY = "Worked on the parser."
GATE_PROMISE_REPLY = "All green now. <promise>DONE</promise>"
HEADER = "output <promise>DONE</promise> only when it is completely true"
# What follows the task in every prompt of a gate loop without a plan or verification.
GATE_NOTES = (
    "Gate mode: after every iteration the plugin runs `pytest -q`. Green commits your changes; "
    "red gives you one repair; still red reverts them.\n"
    f"When the whole task is done, write `done` to .ralph-loop-done-{SESSION} to end the "
    "loop.\n"
    "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you "
    "and what the user must do; that ends the loop as blocked, whatever else the reply "
    "says.\n"
    "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
    "`Next: ...`."
)
RED_STREAK_END = ("Ralph loop failed: a systemic red streak reverted three consecutive "
                  "iterations (at iteration {done}).")
# A claim in gate mode with no verification command: checked by the green gate.
LOOP_DONE_END = "Ralph loop done: {how} at iteration {done} with the gate green (1 command(s))."


def gated(**overrides: Any) -> LoopState:
    """A gate-mode loop on GATE, its counters and other fields as given."""
    commands = overrides.pop("gate", [GATE])
    return changed(make_state(ROOT, gate=Gate(commands, iteration_base=BASE)), **overrides)


def committed(sha: str = NEW) -> GateStep:
    return GateStep([GATE_GREEN], "committed", commit=sha)


def empty() -> GateStep:
    return GateStep([GATE_GREEN], "empty")


def repair() -> GateStep:
    return GateStep([GATE_RED], "repair")


def reverted(baseline: list[CommandResult] | None = None, commit: str | None = None) -> GateStep:
    return GateStep([GATE_RED], "reverted", commit=commit, restored=["src/app.py"],
                    removed=["src/new.py"], baseline=[GATE_GREEN] if baseline is None else baseline)


def gate_seen(step: GateStep | None, reply: str = REPLY, now: datetime = T1,
         **fields: object) -> Observation:
    """An iteration that used a tool, so only the gate's counters can make it quiescent."""
    return observed(reply=reply, now=now, tool_calls=1, gate=step, **fields)  # type: ignore[arg-type]


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
    return changed(before, iterations=[*before.iterations, record], updated_at=now,
                   last_reply_excerpt=record.reply_excerpt,
                   last_reply_digest=digest(record.reply_excerpt), tree_fingerprint=None,
                   **changes)


def gate_ended(before: LoopState, record: IterationRecord, outcome: str, message: str,
               now: datetime = T1, notes: list[str] | None = None,
               **changes: object) -> Decision:
    state = after(before, record, now, outcome=outcome, ended_at=now, end_message=message,
                  **changes)
    return Decision("end", state, message=message, notes=notes or [])



def standing(number: int, cap: int = 8, feedback: str = "") -> str:
    """The standing prompt of iteration `number`, with the feedback after the notes."""
    prompt = (f"Ralph iteration {number}/{cap}: {HEADER}\n\nMake the tests pass\n\n---\n\n"
              f"{GATE_NOTES}")
    return f"{prompt}\n\n{feedback}" if feedback else prompt


def gate_continued(before: LoopState, record: IterationRecord, reason: str,
              **changes: object) -> Decision:
    number = before.iteration + 1
    state = after(before, record, iteration=number, iteration_started_at=T1, **changes)
    return Decision("continue", state, reason=reason,
                    message=f"Ralph iteration {number}/{before.max_iterations}")


# --- the ending rules, two at once ----------------------------------------------------------


def test_cancel_beats_a_red_streak_of_three() -> None:
    before = gated(iteration=6, red_streak=2, repairing=True)
    step = reverted()
    decision = decide(before, gate_seen(step, cancelled=True))
    # Cancelled first: the counters are not even moved.
    assert decision == gate_ended(before, entry(6, "cancelled", step), "cancelled",
                                  "Ralph loop cancelled by the kill switch at iteration 6/8.",
                                  ended_by="the kill switch")


def test_a_red_streak_of_three_beats_loop_done() -> None:
    before = gated(iteration=6, red_streak=2, repairing=True)
    step = reverted()
    decision = decide(before, gate_seen(step, loop_done=True))
    assert decision == gate_ended(before, entry(6, "failure", step), "failure",
                             RED_STREAK_END.format(done="6/8"), red_streak=3, repairing=False)


def test_a_red_streak_of_three_beats_the_cap() -> None:
    before = gated(iteration=8, red_streak=2, repairing=True)
    step = reverted()
    decision = decide(before, gate_seen(step))
    assert decision == gate_ended(before, entry(8, "failure", step), "failure",
                             RED_STREAK_END.format(done="8/8"), red_streak=3, repairing=False)


def test_loop_done_beats_the_promise() -> None:
    before = gated(iteration=3)
    step = committed()
    decision = decide(before, gate_seen(step, GATE_PROMISE_REPLY, loop_done=True))
    assert decision == gate_ended(before, entry(3, "success", step, GATE_PROMISE_REPLY), "success",
                                  LOOP_DONE_END.format(how="<promise>DONE</promise>", done="3/8"),
                                  iteration_base=NEW, verified=True)


def test_loop_done_beats_empty_iterations_quiescence() -> None:
    before = gated(iteration=4, empty_iterations=1)
    step = empty()
    decision = decide(before, gate_seen(step, loop_done=True))
    assert decision == gate_ended(before, entry(4, "success", step), "success",
                                  LOOP_DONE_END.format(how="the loop-done file", done="4/8"),
                                  empty_iterations=2, verified=True)


def test_empty_iterations_quiescence_beats_the_cap() -> None:
    before = gated(iteration=8, empty_iterations=1)
    step = empty()
    decision = decide(before, gate_seen(step))
    assert decision == gate_ended(
        before, entry(8, "quiesced", step), "quiesced",
        "Ralph loop quiesced at iteration 8/8: 2 green iterations in a row with nothing to "
        "commit.",
        empty_iterations=2,
    )


def test_the_cap_beats_the_timeout() -> None:
    late = T0 + timedelta(hours=1)
    before = gated(iteration=8, timeout_minutes=30, deadline_at=T0 + timedelta(minutes=30))
    step = committed()
    decision = decide(before, gate_seen(step, now=late))
    assert decision == gate_ended(
        before, entry(8, "limit", step, ended=late), "limit",
        "Ralph loop stopped: 8 iterations made without <promise>DONE</promise>.", now=late,
        notes=[cap_note()], iteration_base=NEW,
    )


def test_the_timeout_ends_a_gate_loop_below_the_cap() -> None:
    late = T0 + timedelta(hours=1)
    before = gated(iteration=3, timeout_minutes=30, deadline_at=T0 + timedelta(minutes=30))
    step = committed()
    decision = decide(before, gate_seen(step, now=late))
    assert decision == gate_ended(
        before, entry(3, "timeout", step, ended=late), "timeout",
        "Ralph loop timed out after 30 minutes, at iteration 3/8.", now=late,
        iteration_base=NEW,
    )


def test_empty_iterations_below_quiesce_after_go_on() -> None:
    before = gated(iteration=2, quiesce_after=3, empty_iterations=1)
    step = empty()
    assert decide(before, gate_seen(step)) == gate_continued(before, entry(2, "continue", step),
                                                   standing(3), empty_iterations=2)


# --- the counters ---------------------------------------------------------------------------


def test_a_commit_resets_both_counters_and_moves_the_base() -> None:
    before = gated(iteration=3, red_streak=2, empty_iterations=1, repairing=True)
    step = committed()
    assert decide(before, gate_seen(step)) == gate_continued(
        before, entry(3, "continue", step), standing(4),
        red_streak=0, empty_iterations=0, repairing=False, iteration_base=NEW,
    )


def test_an_empty_iteration_counts_and_resets_the_red_streak() -> None:
    before = gated(iteration=3, red_streak=2)
    step = empty()
    assert decide(before, gate_seen(step)) == gate_continued(
        before, entry(3, "continue", step), standing(4), red_streak=0, empty_iterations=1,
    )


def test_a_red_gate_asks_for_a_repair_and_breaks_a_run_of_empty_iterations() -> None:
    before = gated(iteration=3, red_streak=1, empty_iterations=1)
    step = repair()
    decision = decide(before, gate_seen(step))
    assert decision.state == after(before, entry(3, "continue", step), iteration=4,
                                   iteration_started_at=T1, repairing=True, empty_iterations=0)
    assert (decision.action, decision.message) == ("continue", "Ralph iteration 4/8")


def test_the_repair_prompt_replaces_the_standing_prompt() -> None:
    before = gated(iteration=3)
    decision = decide(before, gate_seen(repair()))
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
    assert decide(before, gate_seen(step)) == gate_continued(
        before, entry(4, "continue", step), standing(5, feedback=REVERTED_NOTE),
        red_streak=2, repairing=False, empty_iterations=0,
    )


def test_a_revert_commit_becomes_the_base() -> None:
    before = gated(iteration=4, repairing=True)
    step = reverted(commit=REVERT)
    assert decide(before, gate_seen(step)) == gate_continued(
        before, entry(4, "continue", step), standing(5, feedback=REVERTED_NOTE),
        red_streak=1, repairing=False, iteration_base=REVERT,
    )


def test_three_reverts_in_a_row_end_the_loop_as_failure() -> None:
    state = gated(max_iterations=20)
    actions = []
    for number in range(1, 7):
        step = repair() if number % 2 else reverted()
        decision = decide(state, gate_seen(step, reply=f"Attempt {number}."))
        actions.append((decision.action, decision.state.gate.red_streak))
        state = decision.state
    assert actions == [("continue", 0), ("continue", 1), ("continue", 1), ("continue", 2),
                       ("continue", 2), ("end", 3)]
    assert (state.outcome, state.end_message) == ("failure", RED_STREAK_END.format(done="6/20"))


def test_a_green_iteration_between_reverts_resets_the_streak() -> None:
    state = gated(max_iterations=20)
    for number, step in enumerate([repair(), reverted(), repair(), reverted(), committed(),
                                   repair(), reverted()], start=1):
        decision = decide(state, gate_seen(step, reply=f"Attempt {number}."))
        state = decision.state
    assert (decision.action, state.gate.red_streak, state.iteration) == ("continue", 1, 8)


def test_a_git_error_is_a_failure() -> None:
    before = gated(iteration=3, red_streak=1)
    step = GateStep([GATE_GREEN], "error", error="git commit failed in /project: disk full")
    decision = decide(before, gate_seen(step))
    assert decision == gate_ended(
        before, entry(3, "failure", step), "failure",
        "Ralph loop failed at iteration 3/8: git: git commit failed in /project: disk full",
    )


def test_a_red_baseline_is_a_failure_not_counted_in_the_red_streak() -> None:
    before = gated(iteration=6, red_streak=2, repairing=True)
    step = reverted(baseline=[GATE_RED])
    decision = decide(before, gate_seen(step))
    # Not the red streak's end: the streak stays at 2 and the repair flag as it was.
    assert decision == gate_ended(
        before, entry(6, "failure", step), "failure",
        "Ralph loop failed at iteration 6/8: the gate is red on the reverted baseline too, so "
        "the gate or its environment is broken (an infrastructure failure, not counted as an "
        "iteration's result).",
    )


def test_a_claim_in_a_red_gate_iteration_gets_a_repair_not_success() -> None:
    before = gated(iteration=2)
    step = repair()
    decision = decide(before, gate_seen(step, GATE_PROMISE_REPLY))
    assert decision.state == after(before, entry(2, "continue", step, GATE_PROMISE_REPLY),
                                   iteration=3, iteration_started_at=T1, repairing=True)
    assert decision.reason.startswith(f"Ralph iteration 3/8: {HEADER}\n\nRepair: ")


def test_a_claim_in_a_green_gate_iteration_is_a_success() -> None:
    before = gated(iteration=2)
    step = committed()
    decision = decide(before, gate_seen(step, GATE_PROMISE_REPLY))
    assert decision == gate_ended(before, entry(2, "success", step, GATE_PROMISE_REPLY), "success",
                                  LOOP_DONE_END.format(how="<promise>DONE</promise>", done="2/8"),
                                  iteration_base=NEW, verified=True)


def test_loop_done_in_a_red_gate_iteration_gets_a_repair_not_success() -> None:
    before = gated(iteration=2)
    decision = decide(before, gate_seen(repair(), loop_done=True))
    assert (decision.action, decision.state.gate.repairing) == ("continue", True)


# --- prompts, records and resume --------------------------------------------------------------


@pytest.mark.parametrize("level", EFFORT_LEVELS)
def test_effort_is_stated_in_the_header(level: str) -> None:
    before = gated(effort=level)
    assert iteration_header(before) == (
        f"Ralph iteration 1/8: {HEADER} (effort: {level})")
    decision = decide(before, gate_seen(committed()))
    assert decision.reason.startswith(f"Ralph iteration 2/8: {HEADER} (effort: {level})\n\n"
                                      "Make the tests pass\n\n")
    repairing = decide(before, gate_seen(repair()))
    assert repairing.reason.startswith(f"Ralph iteration 2/8: {HEADER} (effort: {level})\n\n"
                                       "Repair: ")


def test_the_iteration_record_carries_what_the_gate_and_git_did() -> None:
    long_output = "x" * 1000 + "\n" + "y" * 1000
    red = command_result(GATE, 2, long_output)
    lint = command_result("ruff check .", 0, "All checks passed!")
    step = GateStep([red, lint], "reverted", commit=REVERT,
                    restored=["README.md", "src/app.py"], removed=["notes/new.txt"],
                    baseline=[GATE_GREEN, lint])
    reply = ("Tried a new parser.\nApproach: rewrite the parser\nEvidence: pytest red\n"
             "Learning: the grammar is ambiguous\nNext: split the rule")
    decision = decide(gated(gate=[GATE, "ruff check ."], repairing=True), gate_seen(step, reply))
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
        git_repo, gate=Gate([GATE], iteration_base=head, red_streak=2, empty_iterations=1,
                            repairing=True), iteration=8, outcome="limit", ended_at=T1,
        end_message="Ralph loop stopped: 8 iterations made without <promise>DONE</promise>.",
    )
    store.archive(stopped)
    previous = latest_resumable(store, SESSION)
    assert previous == stopped
    resumed_at = T1 + timedelta(minutes=1)
    reopened = resume_loop(store, previous, ResumeRequest(), resumed_at, by="/ralph-resume")
    assert reopened == changed(
        stopped, outcome=None, ended_at=None, end_message="", iteration=9, max_iterations=16,
        iteration_started_at=resumed_at, updated_at=resumed_at,
        tree_fingerprint=gitstate.tree_fingerprint(git_repo), repairing=False,
        branch="refs/heads/main",  # the branch HEAD is on at the resume
        resumes=[ResumeRecord(at=resumed_at, after="limit", by="/ralph-resume")],
    )
    assert store.load(SESSION) == reopened
    # One more revert after the resume is the third in a row.
    decision = decide(reopened, gate_seen(reverted(), now=resumed_at))
    assert (decision.outcome, decision.message) == ("failure", RED_STREAK_END.format(done="9/16"))


# --- issue 9: every combination of terminal lines, every road to success ----------------------


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        ("Done.\n<promise>DONE</promise>", "success"),  # the promise alone
        ("Tests pass.\nRESULT: VERIFIED_COMPLETE", "success"),  # VERIFIED_COMPLETE alone
        ("RESULT: VERIFIED_COMPLETE\n<promise>DONE</promise>", "success"),  # both
        ("RESULT: BLOCKED\nno key\n<promise>DONE</promise>", "blocked"),  # BLOCKED + promise
        ("RESULT: BLOCKED\nno key", "blocked"),
        # BLOCKED, then a later VERIFIED_COMPLETE: the last result line is terminal.
        ("RESULT: BLOCKED\nthe key was missing\nFound it in the vault.\n"
         "RESULT: VERIFIED_COMPLETE\n<promise>DONE</promise>", "success"),
        # VERIFIED_COMPLETE, then BLOCKED: blocked, the promise notwithstanding.
        ("RESULT: VERIFIED_COMPLETE\nWait: CI needs a secret.\nRESULT: BLOCKED\nno secret\n"
         "<promise>DONE</promise>", "blocked"),
        # Either inside code counts for nothing.
        ("```\nRESULT: BLOCKED\n```\n<promise>DONE</promise>", "success"),
        ("    RESULT: BLOCKED\n\n<promise>DONE</promise>", "success"),
        ("`RESULT: VERIFIED_COMPLETE`", None),
        ("```\n<promise>DONE</promise>\nRESULT: VERIFIED_COMPLETE\n```", None),
        ("Not yet: `<promise>DONE</promise>` comes later.\nRESULT: BLOCKED\nno key", "blocked"),
    ],
)
@pytest.mark.parametrize("with_verify", [False, True])
def test_terminal_line_combinations(reply: str, outcome: str | None, with_verify: bool) -> None:
    before = verifying(iteration=2) if with_verify else state(iteration=2)
    observation = seen(reply, verification=[GREEN] if with_verify else None)
    if with_verify and outcome != "success":
        observation = seen(reply)  # the hook runs no command when nothing claims success
    assert needs_verification(before, observation) == (with_verify and outcome == "success")
    decision = decide(before, observation)
    assert decision.state.outcome == outcome
    if outcome == "success":
        assert decision.state.verified is with_verify


@pytest.mark.parametrize(
    ("reply", "loop_done"),
    [(PROMISE_REPLY, False), ("Tests pass.\nRESULT: VERIFIED_COMPLETE", False),
     ("I wrote done to the loop-done file.", True)],
)
def test_every_road_to_success_goes_through_the_verification(reply: str,
                                                             loop_done: bool) -> None:
    before = verifying(iteration=2)
    claim = observed(reply=reply, now=T1, tool_calls=1, loop_done=loop_done)
    assert needs_verification(before, claim)
    red = decide(before, replace(claim, verification=[RED]))
    assert (red.action, red.state.outcome, red.state.iterations[-1].result) == (
        "continue", None, "rejected")
    assert red.reason.startswith("Ralph iteration 3/8")
    assert "Your completion claim was rejected: the verification failed." in red.reason
    green = decide(before, replace(claim, verification=[GREEN]))
    assert (green.state.outcome, green.state.verified) == ("success", True)
    assert [result.command for result in green.state.last_verification] == ["pytest -q"]


def test_no_verification_is_needed_when_nothing_could_succeed() -> None:
    before = verifying(iteration=2)
    assert not needs_verification(before, seen("working"))
    assert not needs_verification(before, seen(PROMISE_REPLY, cancelled=True))
    assert not needs_verification(before, seen("RESULT: BLOCKED\nno\n<promise>DONE</promise>"))
    gate_red = replace(gated(verify=["pytest -q"]), iteration=2)
    assert not needs_verification(gate_red, gate_seen(repair(), GATE_PROMISE_REPLY))
    assert needs_verification(gate_red, gate_seen(committed(), GATE_PROMISE_REPLY))
    assert not needs_verification(state(), seen(PROMISE_REPLY))  # no commands at all


def test_an_unverified_success_is_its_own_outcome() -> None:
    decision = decide(state(iteration=3), seen(PROMISE_REPLY))
    assert (decision.state.outcome, decision.state.verified) == ("success", False)
    assert decision.message == (
        "Ralph loop done: <promise>DONE</promise> at iteration 3/8" + UNVERIFIED)


@pytest.mark.parametrize("by", ["/ralph-abort", "`ralph abort`"])
def test_an_abort_ends_the_loop_as_aborted(by: str) -> None:
    before = verifying(iteration=4)
    decision = decide(before, replace(seen(PROMISE_REPLY, cancelled=True), cancelled_by=by))
    assert (decision.state.outcome, decision.state.ended_by, decision.message) == (
        "aborted", by, f"Ralph loop aborted by {by} at iteration 4/8.")
    assert "aborted" not in RESUMABLE
    for other in ("/cancel-ralph", "/clear", "/goal"):
        cancelled = decide(before, replace(seen("x", cancelled=True), cancelled_by=other))
        assert cancelled.state.outcome == "cancelled"
