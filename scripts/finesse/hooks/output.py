"""The one place hook output is shaped. A hook prints one JSON object or nothing.

Importable by an old `python3` (the hook entry uses it to say that finesse needs 3.11)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Dict  # noqa: UP035

HookOutput = Dict[str, Any]  # noqa: UP006 (see the module docstring)


def block(reason: str, *, system_message: str | None = None) -> HookOutput:
    output: HookOutput = {"decision": "block", "reason": reason}
    if system_message:
        output["systemMessage"] = system_message
    return output


def answer(text: str) -> HookOutput:
    """UserPromptSubmit: show `text` to the user as the typed command's answer, without a model
    call and without adding anything to the conversation. Claude Code 2.1.328 has no output
    that does this without a label: a block shows "UserPromptSubmit operation blocked by
    hook:" above the text; `continue: false` shows "Operation stopped by hook: TEXT" and puts
    that line into the model's context for the next prompt; a `systemMessage` reaches the
    user only when the prompt goes on to the model. `suppressOriginalPrompt` drops the
    "Original prompt: ..." echo a block otherwise adds (docs/claude-code-facts.md; proven by
    tests/e2e/test_answers_e2e.py)."""
    return {"decision": "block", "reason": text,
            "hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                   "suppressOriginalPrompt": True}}


def continue_turn(reason: str, *, system_message: str | None = None,
                  env: Mapping[str, str] | None = None) -> HookOutput:
    """Go on with the next iteration. In Claude Code 2.1.328 a Stop hook's
    `additionalContext` continues the turn like a block, counts toward the same cap of 8,
    and reaches the model as a system reminder, without the "Stop hook reported a problem"
    notice a block shows the user on every iteration (proven by the e2e tests). Set
    FINESSE_STOP_CONTINUATION=block for a Claude Code that lacks it."""
    if (env or {}).get("FINESSE_STOP_CONTINUATION") == "block":
        return block(reason, system_message=system_message)
    return add_context("Stop", reason, system_message=system_message)


def tell_user(message: str) -> HookOutput:
    return {"systemMessage": message}


def add_context(event: str, context: str, *, system_message: str | None = None) -> HookOutput:
    output: HookOutput = {
        "hookSpecificOutput": {"hookEventName": event, "additionalContext": context}
    }
    if system_message:
        output["systemMessage"] = system_message
    return output


def deny_tool(reason: str) -> HookOutput:
    """PreToolUse: refuse this tool call; the model sees `PreToolUse:<tool> hook error:
    <reason>` as the tool's result (Claude Code 2.1.328, proven by the e2e tests)."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def render(output: HookOutput | None) -> str:
    # ASCII with escapes: a lone surrogate or an undecodable name never breaks the output.
    return "" if output is None else json.dumps(output, ensure_ascii=True)
