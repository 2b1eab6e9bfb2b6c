"""A Ralph loop and Claude Code's own /goal in one session, in the real CLI: both drive the
Stop hook, so they never run together. A loop is refused while a goal is active; a goal
typed while a loop runs ends the loop (a hook cannot stop a goal from being set)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fakeapi import FakeModel, text
from tests.e2e.harness import ClaudeRunner

pytestmark = pytest.mark.e2e

# Claude Code ends a turn after this many Stop continuations in a row: 1 leaves the goal (or
# the loop) active at the end of the first run, as a paused turn does.
ONE_CONTINUATION = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "1"}


def not_met(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The goal judge's verdict (a JSON text block)."""
    return [text(json.dumps({"ok": False, "reason": "the tests were not run"}))]


def _loops(project: Path, folder: str) -> list[dict[str, Any]]:
    found = sorted((project / ".claude" / "ralph" / folder).glob("*.json"))
    return [json.loads(path.read_text()) for path in found]


def test_a_loop_is_refused_while_a_goal_is_active(run_claude: ClaudeRunner,
                                                  project: Path) -> None:
    script = [[text("Working on it.")], [text("Still working.")], [text("unused")]]
    with FakeModel(script, side_answer=not_met) as model:
        first = run_claude("/goal all tests pass", cwd=project, model=model,
                           env=ONE_CONTINUATION)
        assert first.returncode == 0, first.describe()
        calls = model.call_count
        assert model.side_calls, first.describe()  # the goal was judged, and not met
        second = run_claude('/ralph-loop "Fix the tests" --max-iterations 5', cwd=project,
                            model=model, resume=first.session_id, env=ONE_CONTINUATION)
    assert model.call_count == calls, second.describe()  # refused before any model call
    assert "this session has an active /goal ('all tests pass')" in second.stdout
    assert _loops(project, "loops") == [] and _loops(project, "history") == []


def test_a_goal_typed_while_a_loop_runs_ends_the_loop(run_claude: ClaudeRunner,
                                                      project: Path) -> None:
    script = [[text("Step one.")], [text("Step two.")], [text("On the goal now.")]]
    with FakeModel(script, side_answer=not_met) as model:
        first = run_claude('/ralph-loop "Write the docs" --max-iterations 10 --quiesce-after 5',
                           cwd=project, model=model, env=ONE_CONTINUATION)
        assert first.returncode == 0, first.describe()
        running = _loops(project, "loops")  # the turn ended; the loop did not
        # Iteration 3 was asked for when Claude Code's cap ended the turn: it runs next.
        assert [loop["iteration"] for loop in running] == [3], first.describe()
        second = run_claude("/goal all tests pass", cwd=project, model=model,
                            resume=first.session_id, env=ONE_CONTINUATION)
    assert second.returncode == 0, second.describe()
    assert _loops(project, "loops") == []
    [ended] = _loops(project, "history")
    assert (ended["outcome"], ended["ended_by"]) == ("cancelled", "/goal")
    assert ended["end_message"].startswith("Ralph loop cancelled by /goal at iteration 3/10")
    # The goal went ahead, judged by Claude Code; no loop prompt reached the model after it.
    assert model.side_calls
    assert "Ralph iteration 4/10" not in model.all_text(model.call_count - 1)
