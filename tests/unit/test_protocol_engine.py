"""decide() under the Ralph protocol, in memory: the verification gate, terminal lines, re-plan
and stuck rules, quiescence, the deadline, and the iteration record."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from finesse.engine import Decision, Observation, decide, loop_prompt
from finesse.models import CommandResult, IterationRecord, LoopState, replace
from finesse.signals import digest
from tests.helpers.states import T0, T1, command_result, make_state

ROOT = Path("/project")
PROMISE_REPLY = "All green. <promise>DONE</promise>"
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
    "(re-plan {n} of 2; a third identical failure ends the loop as blocked)."
)


def state(**overrides: object) -> LoopState:
    return make_state(ROOT, **overrides)


def verifying(**overrides: object) -> LoopState:
    return state(verify=["pytest -q"], **overrides)


def seen(reply: str | None, *, tool_calls: int | None = 1, tree: str | None = None,
         verification: list[CommandResult] | None = None, cancelled: bool = False,
         now: datetime = T1) -> Observation:
    return Observation(reply=reply, now=now, cancelled=cancelled, verification=verification,
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
          notes: list[str] | None = None) -> Decision:
    return Decision("end", replace(state_after, outcome=outcome, ended_at=T1,
                                   end_message=message),
                    message=message, notes=notes or [])


def continued(state_after: LoopState, feedback: str = "",
              notes: list[str] | None = None) -> Decision:
    following = replace(state_after, iteration=state_after.iteration + 1,
                        iteration_started_at=T1)
    return Decision("continue", following, reason=loop_prompt(following, feedback),
                    message=f"Ralph iteration {following.iteration}/{following.max_iterations}",
                    notes=notes or [])


# --- rule order: two rules hold at once, the earlier one wins ---------------------------------


def test_cancel_beats_a_claim() -> None:
    # The hook runs no verification on a cancelled stop: the claim must not need it.
    before = verifying(iteration=2)
    decision = decide(before, seen(PROMISE_REPLY, cancelled=True))
    assert decision == ended(
        recorded(before, record(2, "cancelled", PROMISE_REPLY), PROMISE_REPLY),
        "cancelled", "Ralph loop cancelled at iteration 2/8.",
    )


def test_a_claim_beats_blocked() -> None:
    reply = "RESULT: BLOCKED\nno key\n\n<promise>DONE</promise>"
    before = state(iteration=2)
    decision = decide(before, seen(reply))
    assert decision == ended(
        recorded(before, record(2, "success", "RESULT: BLOCKED no key <promise>DONE</promise>"),
                 "RESULT: BLOCKED no key <promise>DONE</promise>",
                 last_reply_digest=digest(reply)),
        "success", "Ralph loop done: <promise>DONE</promise> seen at iteration 2/8.",
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
        "success", "Ralph loop done: <promise>DONE</promise> seen at iteration 2/8 and "
                   "verified (2 command(s) green).",
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
        "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you.\n"
        "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
        "`Next: ...`.\n\n"
        "Your completion claim was rejected: the verification failed.\n\n"
        "`pytest -q`: exit code 1. Its output:\n"
        "```\nFAILED test_app.py::test_total - assert 3 == 4\n```\n"
    )


def test_a_claim_without_verification_commands_succeeds_on_its_word() -> None:
    decision = decide(state(), seen(PROMISE_REPLY))
    assert (decision.outcome, decision.message, decision.state.last_verification) == (
        "success", "Ralph loop done: <promise>DONE</promise> seen at iteration 1/8.", []
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
    blocker = "Blocked by the same verification failure (`pytest -q`) 3 times in a row."
    assert decision == ended(
        recorded(before, record(4, "rejected", PROMISE_REPLY, verification=[RED]), PROMISE_REPLY,
                 failure_fingerprint=RED.fingerprint, failure_streak=3,
                 last_verification=[RED], blocker=blocker),
        "blocked", "Ralph loop blocked at iteration 4/8: the same verification failure "
                   "(`pytest -q`) 3 times in a row.",
        [blocker],
    )


def test_a_repeat_after_both_re_plans_blocks() -> None:
    before = verifying(iteration=6, failure_fingerprint=RED.fingerprint, failure_streak=1,
                       replans=2)
    decision = decide(before, seen(PROMISE_REPLY, verification=[RED]))
    blocker = "Blocked by the same verification failure (`pytest -q`) again after 2 re-plans."
    assert decision == ended(
        recorded(before, record(6, "rejected", PROMISE_REPLY, verification=[RED]), PROMISE_REPLY,
                 failure_fingerprint=RED.fingerprint, failure_streak=2,
                 last_verification=[RED], blocker=blocker),
        "blocked", "Ralph loop blocked at iteration 6/8: the same verification failure "
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
        "blocked",
        "Blocked by the same verification failure (`make check`) again after 2 re-plans.",
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
        "success", "Ralph loop done: <promise>DONE</promise> seen at iteration 1/8 and verified "
                   "(1 command(s) green)."
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
