"""What judge mode measures: the protected paths, the tree, the subagents' spend, and the
marker the hot hooks look for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finesse.errors import UsageError
from finesse.judging.records import judge_of
from finesse.loop import judge_watch
from finesse.models import ModelUsage
from finesse.state.paths import StatePaths
from tests.helpers.repo import write
from tests.helpers.states import SESSION, make_state


def test_protect_changes_are_measured_from_the_start(git_repo: Path) -> None:
    write(git_repo, "src/billing/rates.py", "RATE = 1\n")
    judge = judge_watch.new_judge(git_repo, ["c"], ["src/billing"], None)
    assert judge_watch.protect_changes(git_repo, judge) == []
    write(git_repo, "src/billing/rates.py", "RATE = 2\n")
    assert judge_watch.protect_changes(git_repo, judge) == ["src/billing/rates.py"]


def test_start_marks_the_session_and_refuses_outside_git(git_repo: Path,
                                                         tmp_path: Path) -> None:
    paths = StatePaths(git_repo)
    state = judge_watch.start(paths, make_state(git_repo), ["c"], [])
    assert judge_of(state).criteria == ["c"]
    assert paths.judge_marker(SESSION).is_file()
    judge_watch.unmark(paths, SESSION)
    judge_watch.unmark(paths, SESSION)  # twice is fine
    assert not paths.judge_marker(SESSION).exists()
    bare = tmp_path / "bare"
    bare.mkdir()
    with pytest.raises(UsageError, match="judge mode watches the working tree with git"):
        judge_watch.start(StatePaths(bare), make_state(bare), ["c"], [])


def test_the_tree_names_changed_files(git_repo: Path) -> None:
    before = judge_watch.tree(git_repo, None)
    write(git_repo, "new.txt", "x\n")
    after = judge_watch.tree(git_repo, None)
    assert before.fingerprint != after.fingerprint
    assert [key.split("\t")[0] for key in after.changed] == ["new.txt"]


def test_a_subagents_spend_is_read_from_its_own_transcript(tmp_path: Path) -> None:
    lines = [
        {"type": "assistant", "isSidechain": True, "message": {
            "id": "m1", "model": "claude-haiku-4-5", "content": [{"type": "text", "text": "a"}],
            "usage": {"input_tokens": 100, "output_tokens": 10}}},
        {"type": "assistant", "isSidechain": True, "message": {
            "id": "m1", "model": "claude-haiku-4-5", "content": [{"type": "tool_use"}],
            "usage": {"input_tokens": 100, "output_tokens": 10}}},
        {"type": "assistant", "isSidechain": True, "message": {
            "id": "m2", "model": "claude-haiku-4-5", "content": [],
            "usage": {"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": 7}}},
    ]
    transcript = tmp_path / "agent-a1.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert judge_watch.agent_usage(str(transcript)) == [
        ModelUsage("claude-haiku-4-5", 105, 11, 0, 7)]
    assert judge_watch.agent_usage(str(tmp_path / "missing.jsonl")) == []
    assert judge_watch.agent_usage(None) == []
