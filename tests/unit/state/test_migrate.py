"""State files written by format 1 (the flat record, before the loop state was composed of
its parts) still load: each file here was written by that version's own store, from a gate
loop with budgets and a transcript cursor, and from a judge-mode loop with an attempt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finesse.models import STATE_VERSION, judge_of
from tests.helpers.states import store_for

DATA = Path(__file__).resolve().parent.parent / "data"
GATE_SESSION = "11111111-1111-4111-8111-111111111111"
JUDGE_SESSION = "22222222-2222-4222-8222-222222222222"


def _install(root: Path, name: str, session_id: str) -> Path:
    """The old file in a project's loop directory, naming that project as its root."""
    data = json.loads((DATA / name).read_text(encoding="utf-8"))
    assert data["version"] == 1
    data["project_root"] = str(root)
    target = root / ".claude" / "ralph" / "loops" / f"{session_id}.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def test_a_format_1_gate_loop_loads_into_its_parts(tmp_path: Path) -> None:
    _install(tmp_path, "state-v1-gate.json", GATE_SESSION)
    state = store_for(tmp_path).peek(GATE_SESSION)
    assert state is not None and state.version == STATE_VERSION
    assert state.cursor is not None
    assert (state.cursor.offset, state.cursor.identity, list(state.cursor.recent_ids)) == (
        4096, "ino:42:size:4096", ["msg_01", "msg_02"])
    assert (state.budgets.max_tokens, state.budgets.max_cost,
            state.budgets.stop_at_quota) == (500000, 2.5, 90)
    assert state.gate is not None
    assert list(state.gate.commands) == ["pytest -q", "ruff check ."]
    assert (state.gate.branch, state.gate.iteration_base, state.gate.red_streak) == (
        "refs/heads/main", "0123456789abcdef0123456789abcdef01234567", 1)
    [first] = state.iterations
    assert (first.gate_action, list(first.restored), list(first.removed)) == (
        "reverted", ["a.py"], ["b.py"])
    assert first.usage[0].cache_read == 9000
    assert state.iteration == 3


def test_a_format_1_judge_loop_loads_its_attempts(tmp_path: Path) -> None:
    _install(tmp_path, "state-v1-judge.json", JUDGE_SESSION)
    state = store_for(tmp_path).peek(JUDGE_SESSION)
    assert state is not None and state.gate is None
    judge = judge_of(state)
    assert list(judge.criteria) == ["all tests pass"]
    [attempt] = judge.attempts
    assert (attempt.result, attempt.worker_id, attempt.judge_id) == (
        "failed", "agent-w1", "agent-j1")
    assert attempt.focus == "the edge case"
    assert (judge.claims, state.budgets.max_cost) == (1, 5.0)


@pytest.mark.parametrize(("name", "session_id"), [("state-v1-gate.json", GATE_SESSION),
                                                  ("state-v1-judge.json", JUDGE_SESSION)])
def test_a_migrated_file_is_saved_in_todays_format_and_reads_back_the_same(
        tmp_path: Path, name: str, session_id: str) -> None:
    target = _install(tmp_path, name, session_id)
    store = store_for(tmp_path)
    old = store.load(session_id)
    assert old is not None
    store.save(old)
    assert json.loads(target.read_text(encoding="utf-8"))["version"] == STATE_VERSION
    assert store.peek(session_id) == old
