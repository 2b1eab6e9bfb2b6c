"""Hook input as Claude Code sends it, and the hooks run in process as Claude Code runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from finesse.hooks import prompt_submit, stop
from tests.helpers.states import SESSION

TRANSCRIPT = "/nonexistent/transcript.jsonl"


def prompt_input(prompt: str, session_id: str = SESSION, cwd: str = "/somewhere") -> bytes:
    return json.dumps({
        "session_id": session_id,
        "transcript_path": TRANSCRIPT,
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
