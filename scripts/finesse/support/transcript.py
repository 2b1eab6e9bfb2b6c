"""The last assistant reply, read from the end of a transcript in bounded memory.

Transcripts of long sessions reach tens of megabytes; only their tail matters. The file is
read backwards in fixed-size blocks, one line at a time. Claude Code writes an assistant
message one line per content block, the lines sharing `message.id`, so the reply's last text
block is the last `text` block among the lines of the last assistant message.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from finesse.support import json_text

BLOCK_SIZE = 64 * 1024
# A line longer than this (a huge tool result, say) is skipped whole rather than held.
MAX_LINE_BYTES = 8 * 1024 * 1024
# How far back to look: the reply is always near the end of the file.
MAX_SCAN_BYTES = 32 * 1024 * 1024


def iter_lines_reversed(
    path: Path,
    *,
    block_size: int = BLOCK_SIZE,
    max_line: int = MAX_LINE_BYTES,
    max_scan: int = MAX_SCAN_BYTES,
) -> Iterator[bytes]:
    """The file's lines from last to first, without their newlines.

    Memory stays near `block_size + max_line`: a line longer than `max_line` is dropped, and
    nothing before the last `max_scan` bytes is read (a line cut by that floor is dropped).
    """
    with open(path, "rb") as handle:
        position = handle.seek(0, os.SEEK_END)
        floor = max(0, position - max_scan)
        carry: list[bytes] = []  # pieces of the line being assembled, latest first
        carry_size = 0
        too_long = False
        while position > floor:
            step = min(block_size, position - floor)
            position -= step
            handle.seek(position)
            parts = handle.read(step).split(b"\n")
            for index in range(len(parts) - 1, -1, -1):
                if not too_long:
                    carry.append(parts[index])
                    carry_size += len(parts[index])
                    if carry_size > max_line:
                        too_long, carry = True, []
                if index > 0:  # a newline precedes this part: the carried line is whole
                    if not too_long:
                        yield b"".join(reversed(carry))
                    carry, carry_size, too_long = [], 0, False
        if floor == 0 and not too_long:
            yield b"".join(reversed(carry))


def _entries_reversed(
    path: Path, limits: dict[str, int], needles: tuple[bytes, ...] = ()
) -> Iterator[dict[str, Any]]:
    """The main conversation's JSON lines, last first: sidechains and garbage skipped, and,
    when `needles` are given, lines holding none of them skipped unparsed."""
    for raw in iter_lines_reversed(path, **limits):
        if not raw.strip() or (needles and not any(needle in raw for needle in needles)):
            continue
        try:
            entry = json_text.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict) and not entry.get("isSidechain"):
            yield entry


def _text_blocks(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]


def last_assistant_text(path: Path, **limits: int) -> str | None:
    """The last text block of the final assistant message; "" if it had none; None if the
    transcript holds no assistant message in its readable tail (or cannot be read)."""
    message_id: object = None
    seen_message = False
    try:
        for entry in _entries_reversed(path, limits):
            message = entry.get("message")
            kind = entry.get("type")
            if kind == "user" and seen_message and not entry.get("isMeta"):
                break
            if kind != "assistant" or not isinstance(message, dict):
                continue
            if seen_message and message.get("id") != message_id:
                break
            seen_message, message_id = True, message.get("id")
            texts = _text_blocks(message)
            if texts:
                return texts[-1]
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return None
    return "" if seen_message else None


def _is_turn_start(entry: dict[str, Any]) -> bool:
    """A line that starts the model's work: a typed prompt, a Stop hook's feedback (a user
    line), or a Stop hook's additional context (an attachment line). Tool results are user
    lines too, but they sit inside a turn."""
    attachment = entry.get("attachment")
    if entry.get("type") == "attachment":
        return isinstance(attachment, dict) and attachment.get("type") == "hook_additional_context"
    if entry.get("type") != "user":
        return False
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return True
    if not isinstance(content, list):
        return False
    kinds = {block.get("type") for block in content if isinstance(block, dict)}
    return "tool_result" not in kinds


def tool_calls_since_turn_start(path: Path, at_most: int | None = None,
                                **limits: int) -> int | None:
    """How many tool calls the model made since the last prompt or Stop hook feedback,
    counting no further than `at_most` (the Stop hook asks only whether there was one, and
    stops at the first it finds from the end: flat however long the turn); None when the
    transcript cannot be read."""
    calls = 0
    try:
        needles = (b'"user"', b'"tool_use"', b'"hook_additional_context"')
        for entry in _entries_reversed(path, limits, needles):
            if _is_turn_start(entry):
                return calls
            message = entry.get("message")
            if entry.get("type") == "assistant" and isinstance(message, dict):
                content = message.get("content")
                if isinstance(content, list):
                    calls += sum(
                        1 for block in content
                        if isinstance(block, dict) and block.get("type") == "tool_use"
                    )
                if at_most is not None and calls >= at_most:
                    return calls
    except (OSError, ValueError):
        return None
    return calls


def active_goal(path: Path, **limits: int) -> str | None:
    """The condition of the session's active `/goal`, or None when there is none.

    Claude Code 2.1.328 writes an `attachment` line of type `goal_status` when a goal is set
    (`met: false, sentinel: true`), at each verdict, and when it is cleared (`met: true`);
    an impossible goal ends with `failed: true`. The last such line says whether a goal is
    active: not met and not failed.
    """
    try:
        for entry in _entries_reversed(path, limits, (b'"goal_status"',)):
            attachment = entry.get("attachment")
            if entry.get("type") != "attachment" or not isinstance(attachment, dict):
                continue
            if attachment.get("type") != "goal_status":
                continue
            if attachment.get("met") is False and not attachment.get("failed"):
                condition = attachment.get("condition")
                return condition if isinstance(condition, str) and condition else "(a goal)"
            return None
    except (OSError, ValueError):
        return None
    return None
