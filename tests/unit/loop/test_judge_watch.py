"""What judge mode measures: the protected paths, the tree, the subagents' spend, and the
marker the hot hooks look for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finesse.errors import UsageError
from finesse.loop import judge_watch
from finesse.models import judge_of
from finesse.results import ModelUsage
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


def test_a_subagents_final_message_is_awaited_in_its_transcript(tmp_path: Path) -> None:
    import threading
    import time

    transcript = tmp_path / "agent-a2.jsonl"
    transcript.write_text("")
    final = 'Verdict: "done" — ok'
    line = {"type": "assistant", "isSidechain": True, "message": {
        "id": "m9", "model": "m", "content": [{"type": "text", "text": final}],
        "usage": {"input_tokens": 3, "output_tokens": 2}}}

    def late_write() -> None:
        time.sleep(0.3)
        with open(transcript, "a") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")

    writer = threading.Thread(target=late_write)
    writer.start()
    assert judge_watch.agent_usage(str(transcript), final) == [ModelUsage("m", 3, 2)]
    writer.join()
    started = time.monotonic()
    assert judge_watch.agent_usage(str(transcript), "never written", wait=0.2) == [
        ModelUsage("m", 3, 2)]
    assert time.monotonic() - started < 2


def test_a_final_line_not_yet_ended_is_awaited(tmp_path: Path) -> None:
    import threading
    import time

    transcript = tmp_path / "agent-a3.jsonl"
    line = json.dumps({"type": "assistant", "isSidechain": True, "message": {
        "id": "m1", "model": "m", "content": [{"type": "text", "text": "the verdict"}],
        "usage": {"input_tokens": 4, "output_tokens": 1}}})
    transcript.write_text(line)  # the newline comes later

    def end_line() -> None:
        time.sleep(0.3)
        with open(transcript, "a") as handle:
            handle.write("\n")

    writer = threading.Thread(target=end_line)
    writer.start()
    assert judge_watch.agent_usage(str(transcript), "the verdict") == [ModelUsage("m", 4, 1)]
    writer.join()


def test_a_transcript_written_late_or_never_or_a_fifo(tmp_path: Path) -> None:
    import os
    import threading
    import time

    transcript = tmp_path / "agent-a4.jsonl"
    line = json.dumps({"type": "assistant", "isSidechain": True, "message": {
        "id": "m1", "model": "m", "content": [{"type": "text", "text": "late"}],
        "usage": {"input_tokens": 1, "output_tokens": 1}}}) + "\n"
    writer = threading.Thread(target=lambda: (time.sleep(0.3), transcript.write_text(line)))
    writer.start()
    assert judge_watch.agent_usage(str(transcript), "late") == [ModelUsage("m", 1, 1)]
    writer.join()
    assert judge_watch.agent_usage(str(tmp_path / "never.jsonl"), "x", wait=0.1) == []
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    assert judge_watch.agent_usage(str(fifo), "x", wait=0.1) == []
