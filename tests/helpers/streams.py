"""`claude -p --output-format stream-json --verbose` events, shaped as CLI 2.1.328 writes
them (docs/claude-code-facts.md, "Print mode"), and a fake `claude` that prints them.

The fake is a Python script run as the CLI by the runner tests: each time it starts it takes
the next entry of a JSON script (a counter file next to it keeps its place), records the
arguments, the prompt it read on stdin and its environment, and then prints the entry's
events, sleeps, writes files or exits as the entry says. The real binary is driven by the
e2e tests; this one lets the runner's every road be walked in a second.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Event = dict[str, Any]


def init(session_id: str = "5e55", model: str = "claude-sonnet-4-5") -> Event:
    return {"type": "system", "subtype": "init", "session_id": session_id, "model": model,
            "cwd": "/tmp", "tools": ["Bash"], "claude_code_version": "2.1.328"}


def usage(input: int = 100, output: int = 1, cache_creation: int = 0,
          cache_read: int = 0) -> dict[str, int]:
    return {"input_tokens": input, "output_tokens": output,
            "cache_creation_input_tokens": cache_creation, "cache_read_input_tokens": cache_read}


def assistant(message_id: str, *blocks: dict[str, Any], model: str = "claude-sonnet-4-5",
              usage_figures: dict[str, int] | None = None,
              parent: str | None = None) -> list[Event]:
    """One event per content block, sharing the message id and its usage (output tokens as
    the message started), as the CLI streams them."""
    return [{"type": "assistant", "parent_tool_use_id": parent, "session_id": "5e55",
             "message": {"id": message_id, "model": model, "role": "assistant",
                         "content": [block], "stop_reason": None,
                         "usage": usage_figures or usage()}} for block in blocks]


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def tool(tool_id: str, command: str = "ls") -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}


def tool_result(tool_id: str, output: str = "ok") -> Event:
    return {"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": tool_id, "type": "tool_result", "content": output, "is_error": False}]}}


def result(reply: str, *, model_usage: dict[str, dict[str, int]] | None = None,
           is_error: bool = False, status: int | None = None) -> Event:
    return {"type": "result", "subtype": "success", "is_error": is_error, "num_turns": 1,
            "result": reply, "stop_reason": "end_turn", "session_id": "5e55",
            "api_error_status": status, "terminal_reason": "api_error" if is_error else
            "completed", "usage": {}, "modelUsage": model_usage or {}}


def model_usage(input: int, output: int, cache_creation: int = 0, cache_read: int = 0,
                model: str = "claude-sonnet-4-5") -> dict[str, dict[str, int]]:
    return {model: {"inputTokens": input, "outputTokens": output,
                    "cacheCreationInputTokens": cache_creation,
                    "cacheReadInputTokens": cache_read, "costUSD": 0}}


def rate_limit(status: str = "allowed", resets_at: int = 1796161271,
               five_hour: float = 0.42, limit_type: str = "five_hour") -> Event:
    info: dict[str, Any] = {"status": status, "resetsAt": resets_at, "isUsingOverage": False,
                            "unifiedWindows": {
                                "five_hour": {"utilization": five_hour, "resetsAt": resets_at},
                                "seven_day": {"utilization": 0.5,
                                              "resetsAt": resets_at + 86400}}}
    if status == "rejected":
        info["rateLimitType"] = limit_type
    return {"type": "rate_limit_event", "rate_limit_info": info, "session_id": "5e55"}


def reply_events(reply: str, *, tools: int = 0, tokens: tuple[int, int] = (100, 20)
                 ) -> list[Event]:
    """A whole successful session: `tools` Bash calls, then the final reply."""
    events = [init()]
    for number in range(tools):
        events += assistant(f"msg_t{number}", tool(f"toolu_{number}"))
        events.append(tool_result(f"toolu_{number}"))
    events += assistant("msg_end", text(reply))
    events.append(result(reply, model_usage=model_usage(*tokens)))
    return events


FAKE_CLAUDE = r'''#!PYTHON
"""A fake `claude -p` for the runner tests (tests/helpers/streams.py)."""
import fcntl, json, os, signal, sys, time
here = os.path.dirname(os.path.abspath(__file__))
# One agent at a time: each instance holds this lock for as long as it lives, so one that
# cannot take it at once knows another is still running, and says so in its call record.
agent = open(os.path.join(here, "agent.lock"), "w")
try:
    fcntl.flock(agent, fcntl.LOCK_EX | fcntl.LOCK_NB)
    overlap = False
except OSError:
    overlap = True
script = json.load(open(os.path.join(here, "script.json")))
counter = os.path.join(here, "count")
index = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(index + 1))
prompt = sys.stdin.read()
with open(os.path.join(here, "calls.jsonl"), "a") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "prompt": prompt, "cwd": os.getcwd(),
                          "pid": os.getpid(), "overlap": overlap,
                          "env": {k: v for k, v in os.environ.items()
                                  if k.startswith(("FINESSE_", "CLAUDE_"))}}) + "\n")
entry = script[index] if index < len(script) else {"events": []}
if entry.get("ignore_term"):  # a stubborn agent: only SIGKILL ends it
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
for name, content in entry.get("write", {}).items():
    name = name.replace("{cwd_name}", os.path.basename(os.getcwd()))  # a graph's task
    os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
    open(name, "w").write(content)
for event in entry.get("events", []):
    print(json.dumps(event) if isinstance(event, dict) else event, flush=True)
if entry.get("raw"):
    sys.stdout.write(entry["raw"]); sys.stdout.flush()
if entry.get("stderr"):
    sys.stderr.write(entry["stderr"]); sys.stderr.flush()
if entry.get("touch"):
    open(entry["touch"], "w").write("started")
time.sleep(entry.get("sleep", 0))
sys.exit(entry.get("exit", 0))
'''


class FakeClaude:
    """A fake CLI in `folder`: `FakeClaude(folder, [entry, ...]).path` is its executable."""

    def __init__(self, folder: Path, script: Sequence[dict[str, Any]]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.path = folder / "claude"
        self.path.write_text(FAKE_CLAUDE.replace("PYTHON", sys.executable))
        os.chmod(self.path, 0o755)
        (folder / "script.json").write_text(json.dumps(list(script)))

    @property
    def calls(self) -> list[dict[str, Any]]:
        log = self.folder / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]
