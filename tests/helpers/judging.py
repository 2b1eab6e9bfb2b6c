"""Judge-mode states, contract objects and whole attempts, for the pure tests (steps,
decide, prompts, report) and the hook tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from finesse.hooks import pre_tool_use, prompt_submit, stop, subagent
from finesse.judging import steps
from finesse.judging.decide import StopView
from finesse.judging.records import JUDGE_TYPE, WORKER_TYPE, JudgeState
from finesse.models import LoopState, judge_of
from finesse.record import replace
from finesse.results import CommandResult
from finesse.signals import read_reply
from finesse.state.paths import StatePaths
from finesse.state.store import LoopStore
from tests.helpers.states import SESSION, T0, command_result, make_state

VERIFY = "pytest -q"
CRITERIA = ["GET /reports/1.csv returns 200 and text/csv", "existing tests still pass"]
WORKER: dict[str, Any] = {
    "summary": "Added the CSV route.",
    "changes": ["src/reports.py: GET /reports/<id>.csv"],
    "verifier_runs": [{"cmd": VERIFY, "status": "pass", "output_excerpt": "3 passed"}],
    "remaining_known_failures": [],
    "next_suggestions": [],
}
FAIL: dict[str, Any] = {
    "pass": False, "score": 40, "blocking_issues": ["text/csv header missing"],
    "non_blocking_issues": [], "required_actions": ["set Content-Type: text/csv"],
    "evidence": ["pytest -q: 1 failed"],
    "next_iteration_focus": "Set the Content-Type header of the CSV route.",
}
PASS: dict[str, Any] = {
    "pass": True, "score": 95, "blocking_issues": [], "non_blocking_issues": [],
    "required_actions": [], "evidence": ["pytest -q: 4 passed", "curl: text/csv"],
    "next_iteration_focus": "None: done.",
}


def green(command: str = VERIFY) -> CommandResult:
    return command_result(command, 0, "4 passed")


def red(command: str = VERIFY) -> CommandResult:
    return command_result(command, 1, "FAILED tests/test_csv.py::test_header")


def judge_loop(root: Path | str = "/project", **overrides: Any) -> LoopState:
    """A judge-mode loop as it starts: cap 100, one verifier, two criteria."""
    judge = overrides.pop("judge_state", JudgeState(criteria=list(CRITERIA)))
    fields: dict[str, Any] = {"max_iterations": 100, "verify": [VERIFY]}
    fields.update(overrides)
    return replace(make_state(Path(root), **fields), judge=judge)


def at(minutes: int, tree: str | None = "tree-0", changed: list[str] | None = None
       ) -> steps.Seen:
    return steps.Seen(T0 + timedelta(minutes=minutes), tree, changed or [])


def view(minutes: int, tree: str | None = "tree-0", **fields: Any) -> StopView:
    """A stop of the main thread, `minutes` after T0; its reply (if any) read once, as
    `finesse.loop.observe.gather` reads it."""
    reply = fields.get("reply")
    if reply is not None:
        fields.setdefault("reading", read_reply(reply, "DONE"))
    return StopView(now=T0 + timedelta(minutes=minutes), tree=tree, **fields)


def attempt(state: LoopState, worker: str, judge: str, verdict: dict[str, Any],
            verification: list[CommandResult] | None = None, minute: int = 0,
            tree: str = "tree-0") -> LoopState:
    """One whole attempt through the steps: worker start and result, the hook's verifiers,
    judge start and verdict, on an unchanged tree `tree`."""
    state = steps.worker_start(state, worker, at(minute, tree)).state
    state = steps.worker_done(state, dict(WORKER), at(minute + 1, tree),
                              verification or [green()], [], []).state
    state = steps.judge_start(state, judge, at(minute + 2, tree)).state
    return steps.judge_done(state, dict(verdict), at(minute + 3, tree), []).state


def judge(state: LoopState) -> JudgeState:
    return judge_of(state)


class JudgeSession:
    """A Claude Code session in a project driving the judge-mode hooks in process, as
    Claude Code calls them: the prompt, the subagents' starts and stops, the main thread's
    stops and its tool calls."""

    def __init__(self, root: Path, session_id: str = SESSION) -> None:
        self.root = root
        self.session_id = session_id
        self.env = {"CLAUDE_PROJECT_DIR": str(root)}

    def _raw(self, event: str, **fields: Any) -> bytes:
        return json.dumps({"session_id": self.session_id, "cwd": str(self.root),
                           "transcript_path": "/nonexistent/transcript.jsonl",
                           "hook_event_name": event, **fields}).encode()

    def start(self, args: str) -> dict[str, Any] | None:
        return prompt_submit.handle(self._raw("UserPromptSubmit", prompt=f"/ralph-loop {args}"),
                                    self.env, str(self.root))

    def subagent_start(self, agent_id: str, agent_type: str) -> dict[str, Any] | None:
        return subagent.handle_start(self._raw("SubagentStart", agent_id=agent_id,
                                               agent_type=agent_type), self.env, str(self.root))

    def subagent_stop(self, agent_id: str, agent_type: str, message: str,
                      transcript: str | None = None) -> dict[str, Any] | None:
        fields: dict[str, Any] = {"agent_id": agent_id, "agent_type": agent_type,
                                  "last_assistant_message": message,
                                  "stop_hook_active": False}
        if transcript is not None:
            fields["agent_transcript_path"] = transcript
        return subagent.handle_stop(self._raw("SubagentStop", **fields), self.env,
                                    str(self.root))

    def worker(self, agent_id: str, result: dict[str, Any] | str,
               work: Callable[[], None] = lambda: None) -> dict[str, Any] | None:
        """A worker's whole run: its start, its work, its final message."""
        self.subagent_start(agent_id, WORKER_TYPE)
        work()
        text = result if isinstance(result, str) else json.dumps(result)
        return self.subagent_stop(agent_id, WORKER_TYPE, text)

    def judge(self, agent_id: str, verdict: dict[str, Any] | str) -> dict[str, Any] | None:
        self.subagent_start(agent_id, JUDGE_TYPE)
        text = verdict if isinstance(verdict, str) else "```json\n" + json.dumps(verdict) + "\n```"
        return self.subagent_stop(agent_id, JUDGE_TYPE, text)

    def stop(self, reply: str = "Next step.", **fields: Any) -> dict[str, Any] | None:
        fields.setdefault("background_tasks", [])
        return stop.handle(self._raw("Stop", last_assistant_message=reply,
                                     stop_hook_active=False, **fields),
                           self.env, str(self.root))

    def tool(self, tool_name: str, tool_input: dict[str, Any], **fields: Any
             ) -> dict[str, Any] | None:
        return pre_tool_use.handle(self._raw("PreToolUse", tool_name=tool_name,
                                             tool_input=tool_input, **fields),
                                   self.env, str(self.root))

    def state(self) -> LoopState:
        found = LoopStore(StatePaths(self.root)).load(self.session_id)
        assert found is not None
        return found


def context(output: dict[str, Any] | None) -> str:
    """The additionalContext of a hook's output."""
    assert output is not None
    text = output["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text
