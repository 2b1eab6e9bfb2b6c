"""PreToolUse in a judge-mode session: the one-line refusals, as Claude Code receives them."""

from __future__ import annotations

import json
from pathlib import Path

from finesse.judging.guard import SPAWN_TOOLS, WRITE_TOOLS
from finesse.judging.records import JUDGE_TYPE, WORKER_TYPE
from tests.helpers.judging import JudgeSession

START = '"Do it" --judge --criteria "it is done" --verify "true"'


def deny(reason: str) -> dict[str, object]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def test_the_orchestrator_is_refused_edits(judge_session: JudgeSession) -> None:
    judge_session.start(START)
    assert judge_session.tool("Edit", {"file_path": "a", "old_string": "x",
                                       "new_string": "y"}) == deny(
        "judge mode: the orchestrator does not do the work: delegate this to the ralph-worker "
        'subagent (the Agent tool, subagent_type "finesse:ralph-worker")')
    # claude --agent finesse:ralph-orchestrator: agent_type, but no agent_id.
    assert judge_session.tool("Write", {"file_path": "a"},
                              agent_type="finesse:ralph-orchestrator") == deny(
        "judge mode: the orchestrator does not do the work: delegate this to the ralph-worker "
        'subagent (the Agent tool, subagent_type "finesse:ralph-worker")')
    assert judge_session.tool("Bash", {"command": "git status"}) is None


def test_the_judge_is_refused_writes_and_unproven_commands(judge_session: JudgeSession) -> None:
    judge_session.start(START)
    as_judge = {"agent_id": "j1", "agent_type": JUDGE_TYPE}
    assert judge_session.tool("Write", {"file_path": "a"}, **as_judge) == deny(
        "judge mode: the judge is read-only: Write is not allowed; read and search, then give "
        "your verdict")
    assert judge_session.tool("Bash", {"command": "touch a"}, **as_judge) == deny(
        "judge mode: the judge is read-only and this command is not provably read-only "
        "(allowed: one plain git status/diff/log/show, ls, cat, head, tail, wc, grep or find "
        "without -exec/-delete, and no unquoted * ? [)")
    assert judge_session.tool("Bash", {"command": "git diff"}, **as_judge) is None
    assert judge_session.tool("Read", {"file_path": "a"}, **as_judge) is None


def test_the_running_worker_may_write(judge_session: JudgeSession) -> None:
    judge_session.start(START)
    judge_session.subagent_start("w1", WORKER_TYPE)
    assert judge_session.tool("Write", {"file_path": "a"}, agent_id="w1",
                              agent_type=WORKER_TYPE) is None
    assert judge_session.tool("Write", {"file_path": "a"}, agent_id="w2",
                              agent_type=WORKER_TYPE) == deny(
        "judge mode: this worker is not the open attempt's worker (a worker is used once, for "
        "one attempt): change nothing and stop")


def test_garbage_and_foreign_sessions_pass(judge_session: JudgeSession) -> None:
    from finesse.hooks.pre_tool_use import handle

    judge_session.start(START)
    for raw in (b"", b"[]", b"{", b'{"session_id": "../x"}',
                b'{"session_id": "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d", "tool_name": "Write"}'):
        assert handle(raw, judge_session.env, str(judge_session.root)) is None


def test_the_hook_runs_only_for_the_tools_the_guard_can_refuse() -> None:
    # Every other tool call (Read, Grep, Glob...) of every session would start python3 for
    # nothing: the matcher names exactly the guard's tools.
    hooks = json.loads((Path(__file__).resolve().parents[3] / "hooks" / "hooks.json")
                       .read_text())["hooks"]["PreToolUse"]
    assert [entry["matcher"] for entry in hooks] == [
        "|".join(sorted(WRITE_TOOLS | SPAWN_TOOLS | {"Bash"}))]
