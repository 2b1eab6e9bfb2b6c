"""Which tool calls judge mode refuses: the orchestrator's writes, anything but reading in
the judge, and everything a worker does that is not the open attempt's worker."""

from __future__ import annotations

import pytest

from finesse.judging import steps
from finesse.judging.guard import read_only, tool_denial
from tests.helpers.judging import at, judge, judge_loop

ORCHESTRATOR = ("judge mode: the orchestrator does not do the work: delegate this to the "
                'ralph-worker subagent (the Agent tool, subagent_type "finesse:ralph-worker")')
NOT_CURRENT = ("judge mode: this worker is not the open attempt's worker (a worker is used "
               "once, for one attempt): change nothing and stop")
WORKING = judge(steps.worker_start(judge_loop(), "w1", at(0)).state)
WRITE = {"file_path": "/project/src/x.py", "content": "x"}


@pytest.mark.parametrize("tool", ["Write", "Edit", "NotebookEdit", "MultiEdit"])
@pytest.mark.parametrize("agent_type", ["", "finesse:ralph-orchestrator"])
def test_the_orchestrator_never_writes(tool: str, agent_type: str) -> None:
    # With `claude --agent`, the main thread has an agent_type but no agent_id.
    assert tool_denial(WORKING, tool, WRITE, "", agent_type) == ORCHESTRATOR


@pytest.mark.parametrize("tool", ["Bash", "Read", "Agent", "Grep"])
def test_the_orchestrator_may_look_and_delegate(tool: str) -> None:
    assert tool_denial(WORKING, tool, {"command": "git status"}, "", "") == ""


@pytest.mark.parametrize("tool", ["Write", "Edit", "NotebookEdit", "Agent", "SendMessage"])
def test_the_judge_writes_nothing_and_spawns_nothing(tool: str) -> None:
    assert tool_denial(WORKING, tool, WRITE, "j1", "finesse:ralph-judge") == (
        f"judge mode: the judge is read-only: {tool} is not allowed; read and search, then "
        "give your verdict")


def test_the_judge_runs_only_provably_read_only_commands() -> None:
    denied = tool_denial(WORKING, "Bash", {"command": "pytest -q"}, "j1", "finesse:ralph-judge")
    assert denied.startswith("judge mode: the judge is read-only and this command is not "
                             "provably read-only")
    assert tool_denial(WORKING, "Bash", {"command": "git diff --stat"}, "j1",
                       "finesse:ralph-judge") == ""
    assert tool_denial(WORKING, "Bash", {}, "j1", "finesse:ralph-judge") != ""
    assert tool_denial(WORKING, "Read", {"file_path": "x"}, "j1", "finesse:ralph-judge") == ""


def test_only_the_open_attempts_running_worker_acts() -> None:
    assert tool_denial(WORKING, "Write", WRITE, "w1", "finesse:ralph-worker") == ""
    assert tool_denial(WORKING, "Bash", {"command": "make"}, "w1", "finesse:ralph-worker") == ""
    for tool in ("Write", "Bash", "Agent"):
        assert tool_denial(WORKING, tool, WRITE, "w2", "finesse:ralph-worker") == NOT_CURRENT
    assert tool_denial(WORKING, "Read", WRITE, "w2", "finesse:ralph-worker") == ""


def test_other_subagents_are_left_alone() -> None:
    assert tool_denial(WORKING, "Write", WRITE, "x1", "general-purpose") == ""


@pytest.mark.parametrize("command", [
    "git status", "git diff --stat HEAD", "git log --oneline -5", "git show HEAD:src/x.py",
    "cat src/reports.py", "ls -la src", "grep -rn csv src", "find . -name '*.py'",
    "head -n 20 README.md", "wc -l src/x.py", "git log --format=%h",
])
def test_read_only_commands(command: str) -> None:
    assert read_only(command)


@pytest.mark.parametrize("command", [
    "", "pytest -q", "rm -rf src", "echo x > f", "cat a; rm b", "cat a && touch b",
    "cat $(touch x)", "cat `touch x`", "git -c core.pager=sh log", "git commit -m x",
    "git diff --output=patch.txt", "git diff --outp=patch.txt", "git grep -Ovim x",
    "find . -delete", "find . -exec rm {} +", "tree -o out.txt", "file -C -m magic",
    "cat 'unclosed", "ls | sh", "python -c 'open(\"x\",\"w\")'", "X=1 cat a",
    "cat a\nrm b",
])
def test_not_read_only_commands(command: str) -> None:
    assert not read_only(command)
