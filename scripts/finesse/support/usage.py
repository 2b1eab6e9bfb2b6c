"""What one iteration added to the transcript: its tool calls and its token usage, read from
the bytes written since the previous stop. Standard library only (the Stop path).

Claude Code writes an assistant message one line per content block, every line carrying the
message's `usage` (input, output, cache creation, cache read tokens) and `model`, as the API
sent them. Usage is therefore counted once per `message.id`. The reader remembers where it
stopped (`Cursor`: byte offset, the file's identity, the last message it counted), so each
stop reads only the new bytes: the cost is flat in the transcript's size. A line not yet
ended by a newline is left for the next stop (the transcript may lag behind the reply). A
transcript that became shorter or was replaced is read again from a safe point: the last
`WINDOW` bytes, with the messages already counted skipped by id.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from finesse.record import Record, field
from finesse.results import Cursor, ModelUsage
from finesse.support.files import open_regular
from finesse.support.numbers import token_count

# At most this much is read at one stop; an iteration that wrote more (huge tool output) is
# read from its last WINDOW bytes, and the usage is marked partial.
WINDOW = 32 * 1024 * 1024
RECENT_IDS = 64


class Tokens(Record, frozen=False):
    """Token counts for one model."""

    input: int = 0
    output: int = 0
    cache_creation: int = 0
    cache_read: int = 0

    def add(self, usage: dict[str, Any]) -> list[str]:
        """Adds the message's counts; returns the names of those refused (see
        `finesse.support.numbers`), which count as 0."""
        refused: list[str] = []

        def count(name: str) -> int:
            value = token_count(usage.get(name))
            if value is None:
                refused.append(name)
            return value or 0

        self.input += count("input_tokens")
        self.output += count("output_tokens")
        self.cache_creation += count("cache_creation_input_tokens")
        self.cache_read += count("cache_read_input_tokens")
        return refused


class Increment(Record, frozen=False):
    """What the transcript gained since the cursor."""

    cursor: Cursor | None
    tool_calls: int = 0
    by_model: dict[str, Tokens] = field(default_factory=dict)
    partial: bool = False  # more was written than read (see WINDOW)
    last_text: str | None = None  # the last text block of the assistant lines read
    refused: list[str] = field(default_factory=list)  # usage fields that were no counts

    def model_usage(self) -> list[ModelUsage]:
        """The tokens per model, as a loop's records hold them."""
        return [ModelUsage(model, tokens.input, tokens.output, tokens.cache_creation,
                           tokens.cache_read) for model, tokens in self.by_model.items()]


def _identity(info: os.stat_result) -> str:
    return f"{info.st_dev}:{info.st_ino}"


def start_cursor(path: Path) -> Cursor | None:
    """Where a loop starting now begins to count: the end of the transcript."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return Cursor(info.st_size, _identity(info))


def read_increment(path: Path, cursor: Cursor | None, *,
                   sidechains: bool = False) -> Increment | None:
    """The tool calls and usage written since `cursor` (None: since a safe point near the
    end); None when the transcript cannot be read. A subagent's own transcript marks every
    line `isSidechain`: read it with `sidechains=True`."""
    handle = open_regular(path)
    if handle is None:
        return None
    with handle:
        info = os.fstat(handle.fileno())
        size, identity = info.st_size, _identity(info)
        same = cursor is not None and cursor.identity in ("", identity)
        start = cursor.offset if cursor is not None and same else -1
        seen = list(cursor.recent_ids) if cursor is not None else []
        known = set(seen)
        partial = False
        if start < 0 or start > size:  # replaced or shortened: read the end again
            start, partial = max(0, size - WINDOW), cursor is not None
        if size - start > WINDOW:
            start, partial = size - WINDOW, True
        handle.seek(start)
        try:
            data = handle.read(size - start)
        except OSError:
            return None
    end = data.rfind(b"\n") + 1  # an unfinished last line waits for the next stop
    increment = Increment(Cursor(start + end, identity), partial=partial)
    lines = data[:end].split(b"\n")
    if start > 0 and (cursor is None or start != cursor.offset):
        lines = lines[1:]  # started mid-file at a safe point: the first line may be cut
    for raw in lines:
        if b'"assistant"' in raw:
            _take(raw, increment, seen, known, sidechains)
    assert increment.cursor is not None
    increment.cursor = Cursor(increment.cursor.offset, identity, tuple(seen[-RECENT_IDS:]))
    return increment


def _take(raw: bytes, increment: Increment, seen: list[str], known: set[str],
          sidechains: bool = False) -> None:
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return
    if not isinstance(entry, dict) or (entry.get("isSidechain") and not sidechains):
        return
    message = entry.get("message")
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if entry.get("type") != "assistant":
        return
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                increment.tool_calls += 1
            elif (isinstance(block, dict) and block.get("type") == "text"
                  and isinstance(block.get("text"), str)):
                increment.last_text = block["text"]
    message_id = message.get("id")
    usage = message.get("usage")
    if not isinstance(message_id, str) or not isinstance(usage, dict) or message_id in known:
        return
    seen.append(message_id)
    known.add(message_id)
    model = message.get("model")
    key = model if isinstance(model, str) and model else "unknown"
    increment.refused += increment.by_model.setdefault(key, Tokens()).add(usage)
