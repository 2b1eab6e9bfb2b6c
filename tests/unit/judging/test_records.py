"""Judge mode's records: kept in the loop state as JSON and read back strictly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finesse import schema
from finesse.judging.records import Attempt, JudgeState, merge_usage
from finesse.models import LoopState, judge_of
from finesse.record import replace
from finesse.results import ModelUsage
from tests.helpers.judging import FAIL, PASS, attempt, judge_loop
from tests.helpers.states import T0, make_state


def test_a_judge_state_round_trips_through_the_state_file() -> None:
    state = attempt(judge_loop(), "w1", "j1", FAIL)
    again = LoopState.from_json(state.to_json())
    assert judge_of(again) == judge_of(state)
    assert judge_of(again).attempts[0].verdict == FAIL


def test_the_judge_part_is_checked_strictly() -> None:
    state = judge_loop()
    assert state.judge is not None
    with pytest.raises(schema.SchemaError, match=r"judge\.kriteria: unknown field"):
        LoopState.from_json(state.to_json().replace('"criteria"', '"kriteria"'))
    with pytest.raises(ValueError, match="not a judge-mode loop"):
        judge_of(make_state(Path("/p")))


def test_attempt_properties() -> None:
    opened = Attempt(number=1, started_at=T0, worker_id="w1")
    assert (opened.open, opened.worker_running, opened.judge_running, opened.passed,
            opened.focus) == (True, True, False, False, "")
    judged = Attempt(number=1, started_at=T0, verdict=PASS, judge_id="j", judge_ended_at=T0)
    assert (judged.passed, judged.focus, judged.judge_running) == (True, "None: done.", False)
    assert not Attempt(number=1, started_at=T0, verdict={**PASS, "pass": "true"}).passed


def test_current_last_and_last_verdict() -> None:
    state = attempt(judge_loop(), "w1", "j1", FAIL)
    judge = judge_of(state)
    assert (judge.current, judge.last and judge.last.number) == (None, 1)
    assert judge.last_verdict() is judge.last
    assert JudgeState(criteria=[]).last_verdict() is None


def test_merge_usage_adds_per_model() -> None:
    assert merge_usage([ModelUsage("a", 1, 2, 3, 4)], [ModelUsage("a", 1, 1, 1, 1),
                                                       ModelUsage("b", 5)]) == [
        ModelUsage("a", 2, 3, 4, 5), ModelUsage("b", 5)]


def test_the_judge_part_is_stored_as_json() -> None:
    state = replace(make_state(Path("/p")), judge=JudgeState(criteria=["c"]))
    assert json.loads(state.to_json())["judge"] == schema.to_dict(JudgeState(criteria=["c"]))
