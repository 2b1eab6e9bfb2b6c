"""Transcript lines shaped like Claude Code's JSONL: prompts, Stop hook feedback, assistant
messages one line per content block (every line of a message carrying the message's `usage`
and `model`, as Claude Code writes them), tool results, attachments. Pseudo tool output comes
from a pool of code, paths and test logs. The writer keeps a ledger of the assistant messages
it wrote (where each began, its id, usage and tool calls) so that a scenario knows what a
stop should read from any offset on.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from stop_hook.settings import CLAUDE_VERSION, MAX_ITERATIONS, MODEL, PROMISE, SESSION_ID

_WORDS = (
    "def", "return", "self", "value", "None", "import", "from", "tests", "parser", "token",
    "line", "index", "error", "assert", "config", "path", "file", "data", "result", "items",
    "key", "state", "json", "yield", "raise", "class", "async", "await", "with", "for",
    "while", "if", "else", "elif", "try", "except", "finally", "lambda", "print", "len",
    "range", "dict", "list", "str", "int", "the", "a", "to", "of", "and", "is", "in", "that",
    "it", "on", "was", "as", "be", "by", "this", "are", "or",
)
_LOG_LINES = (
    "PASSED", "FAILED", "ok", "E       AssertionError: assert 'caf\\u00e9' == 'café'",
    "warning: unused variable", "    at Object.<anonymous> (src/index.js:12:5)",
    "collected 412 items", "==== 3 failed, 409 passed in 4.21s ====", "✓ compiled",
)


def text_pool(rng: random.Random, size: int = 256 * 1024) -> str:
    """Pseudo tool output: code, paths, test logs, some non-ASCII and quotes."""
    lines: list[str] = []
    total = 0
    while total < size:
        roll = rng.random()
        if roll < 0.45:
            indent = " " * (4 * rng.randint(0, 3))
            line = indent + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 14)))
        elif roll < 0.7:
            parts = [rng.choice(_WORDS) for _ in range(rng.randint(2, 5))]
            line = f"src/{'/'.join(parts)}.py:{rng.randint(1, 900)}: {rng.choice(_LOG_LINES)}"
        elif roll < 0.9:
            line = f'    "{rng.choice(_WORDS)}": "{rng.choice(_WORDS)}\\t{rng.random():.6f}",'
        else:
            line = rng.choice(_LOG_LINES)
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


@dataclass(frozen=True)
class Message:
    """One assistant message as written: the offset of its first line, and what it holds."""

    offset: int
    message_id: str
    model: str
    usage: dict[str, int]
    tool_calls: int


class TranscriptWriter:
    """Writes JSONL lines shaped like Claude Code's: one line per assistant content block."""

    def __init__(self, path: Path, project: Path, rng: random.Random, max_output: int) -> None:
        self.max_output = max_output
        self.handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.project = project
        self.rng = rng
        self.pool = text_pool(rng)
        self.parent: str | None = None
        self.clock = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
        self.messages: list[Message] = []

    def close(self) -> int:
        size = self.handle.tell()
        self.handle.close()
        return size

    @property
    def size(self) -> int:
        return self.handle.tell()

    def chunk(self, length: int) -> str:
        pool = self.pool
        pieces: list[str] = []
        while length > 0:
            start = self.rng.randrange(len(pool))
            piece = pool[start:start + length]
            pieces.append(piece)
            length -= len(piece)
        return "".join(pieces)

    def _id(self, prefix: str = "") -> str:
        value = uuid.UUID(int=self.rng.getrandbits(128), version=4)
        return f"{prefix}{value.hex[:24]}" if prefix else str(value)

    def _base(self, kind: str) -> dict[str, Any]:
        self.clock += timedelta(milliseconds=self.rng.randint(50, 9000))
        entry_id = self._id()
        entry = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(self.project),
            "sessionId": SESSION_ID,
            "version": CLAUDE_VERSION,
            "gitBranch": "main",
            "type": kind,
            "uuid": entry_id,
            "timestamp": self.clock.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.clock:%f}"[:3] + "Z",
        }
        self.parent = entry_id
        return entry

    def write(self, entry: dict[str, Any]) -> None:
        self.handle.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")

    def user_prompt(self, text: str, *, meta: bool = False) -> None:
        entry = self._base("user")
        entry["message"] = {"role": "user", "content": text}
        if meta:
            entry["isMeta"] = True
        self.write(entry)

    def assistant(self, blocks: list[dict[str, Any]], *, tool_call: bool = False) -> None:
        """One message: one line per content block, all sharing message.id and usage; the
        last line's stop_reason says whether the message ended in a tool call."""
        message_id = self._id("msg_01")
        request_id = self._id("req_011")
        usage = {
            "input_tokens": self.rng.randint(3, 12),
            "cache_creation_input_tokens": self.rng.randint(0, 4000),
            "cache_read_input_tokens": self.rng.randint(10_000, 150_000),
            "output_tokens": self.rng.randint(20, 2000),
        }
        calls = sum(1 for block in blocks if block.get("type") == "tool_use")
        self.messages.append(Message(self.size, message_id, MODEL, usage, calls))
        for index, block in enumerate(blocks):
            entry = self._base("assistant")
            entry["requestId"] = request_id
            last = index == len(blocks) - 1
            entry["message"] = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [block],
                "stop_reason": None if not last else "tool_use" if tool_call else "end_turn",
                "stop_sequence": None,
                "usage": {**usage, "service_tier": "standard"},
            }
            self.write(entry)

    def thinking(self) -> dict[str, Any]:
        return {
            "type": "thinking",
            "thinking": self.chunk(self.rng.randint(200, 3000)),
            "signature": self._id("Eq") * 8,
        }

    def text(self, text: str | None = None) -> dict[str, Any]:
        return {"type": "text", "text": text or self.chunk(self.rng.randint(80, 1200))}

    def tool_round(self, max_output: int | None = None, *, always_text: bool = True) -> None:
        """An assistant message ending in a tool call, then the user line with its result."""
        tool_id = self._id("toolu_01")
        name = self.rng.choice(("Bash", "Bash", "Read", "Grep", "Edit"))
        command = f"pytest -q tests/{self.rng.choice(_WORDS)}_test.py"
        blocks = [{
            "type": "tool_use", "id": tool_id, "name": name,
            "input": {"command": command, "description": "Run the failing tests"},
        }]
        if always_text or self.rng.random() < 0.5:
            blocks.insert(0, self.text())
        if self.rng.random() < 0.6:
            blocks.insert(0, self.thinking())
        self.assistant(blocks, tool_call=True)
        output = self.chunk(min(self.output_size(), max_output or self.max_output))
        entry = self._base("user")
        entry["message"] = {"role": "user", "content": [
            {"tool_use_id": tool_id, "type": "tool_result", "content": output, "is_error": False},
        ]}
        if name == "Read":
            entry["toolUseResult"] = {"type": "text", "file": {
                "filePath": str(self.project / "src" / "parser.py"), "content": output,
                "numLines": output.count("\n") + 1, "startLine": 1,
                "totalLines": output.count("\n") + 1,
            }}
        else:
            entry["toolUseResult"] = {
                "stdout": output, "stderr": "", "interrupted": False, "isImage": False,
            }
        self.write(entry)
        if self.rng.random() < 0.25:
            self.attachment()

    def output_size(self) -> int:
        roll = self.rng.random()
        if roll < 0.50:
            return self.rng.randint(200, 2_000)
        if roll < 0.85:
            return self.rng.randint(2_000, 30_000)
        if roll < 0.97:
            return self.rng.randint(30_000, 120_000)
        return self.rng.randint(300_000, 1_500_000)  # a big file read whole, a long log

    def attachment(self) -> None:
        """A todo reminder: an attachment line that is no turn start."""
        entry = self._base("attachment")
        entry["attachment"] = {
            "type": "todo_reminder",
            "content": [{"content": "Fix the writer", "status": "in_progress"}],
            "itemCount": 1,
        }
        self.write(entry)

    def system(self, subtype: str, content: str) -> None:
        entry = self._base("system")
        entry.update(subtype=subtype, content=content, isMeta=False, level="info")
        self.write(entry)

    def stop_feedback(self, number: int) -> None:
        """What Claude Code writes when a Stop hook sends the loop on: a turn start."""
        self.system("stop_hook_summary", "Stop hook: finesse (1 hook, blocked)")
        self.user_prompt(
            f"Stop hook feedback:\nRalph iteration {number + 1}/{MAX_ITERATIONS}: output "
            f"<promise>{PROMISE}</promise> only when it is completely true\n\nMake every "
            "test in tests/ pass.", meta=True,
        )

    def turn(self, number: int, limit: int) -> None:
        """A user prompt (or the Stop hook's feedback), tool rounds, a closing reply; the
        tool rounds stop early once the file reaches `limit` bytes."""
        if number == 0:
            self.user_prompt("/ralph-loop Make every test in tests/ pass --completion-promise "
                             f"'{PROMISE}' --max-iterations {MAX_ITERATIONS}")
        else:
            self.stop_feedback(number)
        for _ in range(self.rng.randint(1, 6)):
            self.tool_round()
            if self.size >= limit:
                break
        self.assistant([self.text()])
