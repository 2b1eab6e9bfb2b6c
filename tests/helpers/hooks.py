"""Hook input as Claude Code sends it, and the hooks run in process as Claude Code runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from finesse.hooks import prompt_submit, stop
from tests.helpers.states import SESSION

TRANSCRIPT = "/nonexistent/transcript.jsonl"


def prompt_input(prompt: str, session_id: str = SESSION, cwd: str = "/somewhere",
                 transcript: str = TRANSCRIPT) -> bytes:
    return json.dumps({
        "session_id": session_id,
        "transcript_path": transcript,
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }).encode()


def stop_input(
    reply: str | None = "Still working on it.",
    session_id: str = SESSION,
    cwd: str = "/somewhere",
    transcript: str = TRANSCRIPT,
    **extra: Any,
) -> bytes:
    data: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": transcript,
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "background_tasks": [],
        "session_crons": [],
        **extra,
    }
    if reply is not None:
        data["last_assistant_message"] = reply
    return json.dumps(data).encode()


def session_start_input(source: str | None, session_id: str = SESSION, cwd: str = "/somewhere",
                        **extra: Any) -> bytes:
    return json.dumps({
        "session_id": session_id, "transcript_path": TRANSCRIPT, "cwd": cwd,
        "hook_event_name": "SessionStart", "source": source, "model": "claude-sonnet-4-5",
        **extra,
    }).encode()


def session_end_input(reason: str | None, session_id: str = SESSION,
                      cwd: str = "/somewhere") -> bytes:
    return json.dumps({
        "session_id": session_id, "transcript_path": TRANSCRIPT, "cwd": cwd,
        "permission_mode": "default", "hook_event_name": "SessionEnd", "reason": reason,
    }).encode()


def env_for(root: Path) -> dict[str, str]:
    """The environment Claude Code gives a hook of the project."""
    return {"CLAUDE_PROJECT_DIR": str(root)}


def submit(root: Path, prompt: str, session_id: str = SESSION) -> dict[str, Any] | None:
    """The UserPromptSubmit hook's output for a prompt typed in the project."""
    return prompt_submit.handle(prompt_input(prompt, session_id, str(root)), env_for(root),
                                str(root))


def stop_hook(root: Path, raw: bytes) -> dict[str, Any] | None:
    """The Stop hook's output for this input, run in the project root."""
    return stop.handle(raw, env_for(root), str(root))


def stop_reply(root: Path, reply: str) -> dict[str, Any] | None:
    """The Stop hook's output after the agent's `reply`, with no transcript to read."""
    return stop_hook(root, stop_input(reply, cwd=str(root)))


class Session:
    """One Claude Code session in a project: typed prompts, stops, and its transcript."""

    def __init__(self, root: Path, transcript: Path) -> None:
        self.root = root
        self.transcript = transcript
        self.lines: list[dict[str, Any]] = []
        self.calls = 0

    def _write(self, *entries: dict[str, Any]) -> None:
        self.lines.extend(entries)
        self.transcript.write_text("".join(json.dumps(e) + "\n" for e in self.lines))

    def submit(self, prompt: str) -> dict[str, Any] | None:
        self._write({"type": "user", "message": {"role": "user", "content": prompt}})
        raw = prompt_input(prompt, SESSION, str(self.root), str(self.transcript))
        return prompt_submit.handle(raw, env_for(self.root), str(self.root))

    def work(self, tools: int) -> None:
        """The model's turn before it stops: `tools` tool calls, each with its result."""
        for _ in range(tools):
            self.calls += 1
            tool_id = f"toolu_{self.calls:03d}"
            self._write(
                {"type": "assistant", "message": {"id": f"msg_{self.calls}", "role": "assistant",
                                                  "content": [{"type": "tool_use", "id": tool_id,
                                                               "name": "Bash", "input": {}}]}},
                {"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}]}},
            )

    def stop(self, reply: str, tools: int = 1) -> dict[str, Any] | None:
        self.work(tools)
        self._write({"type": "assistant", "message": {"id": f"msg_r{len(self.lines)}",
                                                      "role": "assistant",
                                                      "content": [{"type": "text",
                                                                   "text": reply}]}})
        output = stop_hook(self.root, stop_input(reply, SESSION, str(self.root),
                                                 str(self.transcript)))
        if output is not None and output.get("decision") == "block":
            self._write({"type": "user", "isMeta": True, "message": {
                "role": "user", "content": f"Stop hook feedback:\n{output['reason']}"}})
        return output


def continuation(reason: str, message: str) -> dict[str, object]:
    """The Stop hook's output when a loop goes on: the next prompt as additional context
    (it continues the turn without a "Stop hook error" notice), the header for the user."""
    return {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": reason},
            "systemMessage": message}
