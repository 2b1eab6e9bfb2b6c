"""The one place hook output is shaped. A hook prints one JSON object or nothing.

Importable by an old `python3` (the hook entry uses it to say that finesse needs 3.11)."""

from __future__ import annotations

import json
from typing import Any, Dict  # noqa: UP035

HookOutput = Dict[str, Any]  # noqa: UP006 (see the module docstring)


def block(reason: str, *, system_message: str | None = None) -> HookOutput:
    output: HookOutput = {"decision": "block", "reason": reason}
    if system_message:
        output["systemMessage"] = system_message
    return output


def tell_user(message: str) -> HookOutput:
    return {"systemMessage": message}


def add_context(event: str, context: str, *, system_message: str | None = None) -> HookOutput:
    output: HookOutput = {
        "hookSpecificOutput": {"hookEventName": event, "additionalContext": context}
    }
    if system_message:
        output["systemMessage"] = system_message
    return output


def render(output: HookOutput | None) -> str:
    # ASCII with escapes: a lone surrogate or an undecodable name never breaks the output.
    return "" if output is None else json.dumps(output, ensure_ascii=True)
