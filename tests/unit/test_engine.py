"""decide(): the ending rules in their fixed order, in memory."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from finesse.engine import (
    Decision,
    Observation,
    decide,
    excerpt,
    iteration_header,
    loop_prompt,
    protocol_notes,
)
from finesse.models import IterationRecord, LoopState, replace
from finesse.schema import from_dict, to_dict
from finesse.signals import digest
from tests.helpers.states import T0, T1, make_state

ROOT = Path("/project")
PROMISE_REPLY = "All green. <promise>DONE</promise>"
# What follows the task in every prompt of a loop without a plan or verification commands.
NOTES = (
    "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you.\n"
    "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
    "`Next: ...`."
)


def state(**overrides: object) -> LoopState:
    return make_state(ROOT, **overrides)


def record(number: int, result: str, reply: str, started: datetime = T0,
           tool_calls: int | None = None) -> IterationRecord:
    return IterationRecord(number=number, started_at=started, ended_at=T1, result=result,
                           reply_excerpt=reply, tool_calls=tool_calls)


def working(reply: str | None, now: datetime = T1, **fields: object) -> Observation:
    """An observation of an iteration that used a tool: never idle, so never quiescent."""
    return Observation(reply=reply, now=now, tool_calls=1, **fields)  # type: ignore[arg-type]


def test_continue_increments_and_repeats_the_prompt() -> None:
    before = state()
    decision = decide(before, working("Still working."))
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
                      working(""))
    assert decision.reason == (
        "Ralph iteration 2/3: output <promise>ALL TESTS PASS</promise> only when it is "
        f"completely true\n\n{prompt}\n\n---\n\n{NOTES}"
    )


def test_promise_ends_with_success() -> None:
    before = state(iteration=3)
    decision = decide(before, Observation(reply=PROMISE_REPLY, now=T1))
    message = "Ralph loop done: <promise>DONE</promise> seen at iteration 3/8."
    assert decision == Decision(
        "end",
        replace(before, **{
            "iterations": [record(3, "success", PROMISE_REPLY)],
            "updated_at": T1,
            "last_reply_excerpt": PROMISE_REPLY,
            "last_reply_digest": digest(PROMISE_REPLY),
            "outcome": "success",
            "ended_at": T1,
            "end_message": message,
        }),
        message=message,
    )
    assert decision.outcome == "success"


def test_promise_in_code_does_not_end() -> None:
    decision = decide(state(), working("Say `<promise>DONE</promise>` later"))
    assert (decision.action, decision.outcome, decision.state.iteration) == ("continue", None, 2)


def test_cancelled_beats_promise() -> None:
    before = state(iteration=2)
    decision = decide(before, Observation(reply=PROMISE_REPLY, now=T1, cancelled=True))
    message = "Ralph loop cancelled at iteration 2/8."
    assert decision == Decision(
        "end",
        replace(before, **{
            "iterations": [record(2, "cancelled", PROMISE_REPLY)],
            "updated_at": T1,
            "last_reply_excerpt": PROMISE_REPLY,
            "last_reply_digest": digest(PROMISE_REPLY),
            "outcome": "cancelled",
            "ended_at": T1,
            "end_message": message,
        }),
        message=message,
    )


def test_cancelled_beats_cap() -> None:
    decision = decide(state(iteration=8), Observation(reply="x", now=T1, cancelled=True))
    assert (decision.action, decision.outcome) == ("end", "cancelled")


def test_promise_beats_cap() -> None:
    decision = decide(state(iteration=8), Observation(reply=PROMISE_REPLY, now=T1))
    assert (decision.action, decision.outcome, decision.message) == (
        "end", "success", "Ralph loop done: <promise>DONE</promise> seen at iteration 8/8."
    )


def test_cap_ends_with_limit() -> None:
    before = state(iteration=8)
    decision = decide(before, working("not yet"))
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
    )


@pytest.mark.parametrize("cap", [1, 2, 3, 8])
def test_cap_of_n_ends_at_iteration_n(cap: int) -> None:
    current = state(max_iterations=cap)
    now = T0
    decisions: list[Decision] = []
    while True:
        now += timedelta(minutes=1)
        decision = decide(current, working(f"reply {current.iteration}", now))
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
    earlier = record(1, "continue", "first")
    before = state(iteration=2, iterations=[earlier], last_reply_excerpt="first")
    decision = decide(before, working("second"))
    assert decision.state.iterations == [earlier, record(2, "continue", "second", tool_calls=1)]


def test_reply_none_never_ends_by_promise() -> None:
    before = state(promise="DONE", last_reply_excerpt="kept", last_reply_digest="0123abcd")
    decision = decide(before, working(None))
    assert decision.action == "continue"
    assert decision.state.iterations == [record(1, "continue", "", tool_calls=1)]
    # An unread reply is no reply to compare the next one with.
    assert (decision.state.last_reply_excerpt, decision.state.last_reply_digest) == ("kept", "")


def test_reply_none_at_cap_is_limit() -> None:
    decision = decide(state(iteration=8), working(None))
    assert (decision.action, decision.outcome) == ("end", "limit")


def test_decide_does_not_mutate_its_input() -> None:
    before = state()
    snapshot = to_dict(before)
    decide(before, Observation(reply=PROMISE_REPLY, now=T1))
    decide(before, Observation(reply="x", now=T1))
    assert to_dict(before) == snapshot
    # The ends that copy the history and mark its last record: quiescence and the cap.
    earlier = record(1, "continue", "x")
    repeated = state(iteration=2, iterations=[earlier], last_reply_digest=digest("x"))
    snapshot = to_dict(repeated)
    assert decide(repeated, Observation(reply="x", now=T1)).outcome == "quiesced"
    assert decide(replace(repeated, iteration=8), working("y")).outcome == "limit"
    assert to_dict(repeated) == snapshot


def test_excerpt() -> None:
    assert excerpt("  a\n\n b  ") == "a b"
    assert excerpt("x" * 300) == "x" * 300
    assert excerpt("x" * 301) == "x" * 299 + "…"
    assert excerpt("abcdef", 4) == "abc…"


def test_iteration_header_and_loop_prompt() -> None:
    current = state(iteration=4, max_iterations=12, promise="SHIPPED", prompt="Ship it")
    assert iteration_header(current) == (
        "Ralph iteration 4/12: output <promise>SHIPPED</promise> only when it is completely true"
    )
    assert protocol_notes(current) == NOTES
    assert loop_prompt(current) == f"{iteration_header(current)}\n\nShip it\n\n---\n\n{NOTES}"
    assert loop_prompt(current, "Fix `x`.") == (
        f"{iteration_header(current)}\n\nShip it\n\n---\n\n{NOTES}\n\nFix `x`."
    )


def test_protocol_notes_name_the_plan_and_the_verification() -> None:
    current = state(plan_file="tasks/todo.md", verify=["pytest -q", "ruff check ."])
    assert protocol_notes(current) == (
        "The plan is tasks/todo.md: re-read it now; your attempts are recorded under its "
        "`## Attempts`.\n"
        "When you claim completion, the plugin runs `pytest -q`, `ruff check .` itself and "
        "rejects the claim if any fails.\n"
        f"{NOTES}"
    )


@given(st.text(), st.integers(1, 50), st.integers(1, 50), st.booleans(),
       st.none() | st.integers(0, 3))
def test_decide_always_yields_a_valid_state(
    reply: str, iteration: int, cap: int, cancelled: bool, tool_calls: int | None
) -> None:
    before = state(iteration=min(iteration, cap), max_iterations=cap)
    decision = decide(before, Observation(reply=reply, now=T1, cancelled=cancelled,
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
