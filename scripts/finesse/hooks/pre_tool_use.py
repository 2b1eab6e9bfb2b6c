"""PreToolUse in a session with a judge-mode loop: refuse the tool calls the roles may not
make (`finesse.judging.guard`), with a one-line reason the model sees.

`finesse.hooks.entry` has already found this session's judge marker. Standard library only:
it runs before every tool call of the session. The state is read without the session's
lock (a write is an atomic replace, so a reader sees the old file or the new one).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import BinaryIO, TextIO

from finesse.hooks.boundary import run_hook
from finesse.hooks.output import HookOutput, deny_tool
from finesse.judging.guard import tool_denial
from finesse.models import judge_of
from finesse.state.paths import StatePaths, find_project_root, is_valid_session_id
from finesse.state.store import LoopStore


def _text(fields: dict[str, object], name: str) -> str:
    value = fields.get(name)
    return value if isinstance(value, str) else ""


def handle(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    try:
        fields = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(fields, dict) or not is_valid_session_id(fields.get("session_id")):
        return None
    tool_input = fields.get("tool_input")
    root = find_project_root(env, _text(fields, "cwd") or cwd)
    state = LoopStore(StatePaths(root)).peek(_text(fields, "session_id"))
    if state is None or state.judge is None:
        return None
    reason = tool_denial(judge_of(state), _text(fields, "tool_name"),
                         tool_input if isinstance(tool_input, dict) else {},
                         _text(fields, "agent_id"), _text(fields, "agent_type"))
    return deny_tool(reason) if reason else None


def main(stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    return run_hook("PreToolUse", handle, stdin, stdout)
