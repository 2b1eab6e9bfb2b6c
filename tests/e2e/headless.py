"""Helpers for the `ralph run` e2e tests: running `ralph` itself (its children are the real
claude binary against the scripted model), scripted replies that tell parallel sessions
apart, and small decomposed plans written with `finesse new`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.fakeapi import Reply, bash, message_text, text
from tests.e2e.harness import MODEL_NAME, REPO_ROOT, claude_env

RALPH = REPO_ROOT / "scripts" / "ralph.py"


@dataclass
class RalphRun:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return (f"args={self.args!r}\nreturncode={self.returncode}\n--- stdout ---\n"
                f"{self.stdout[-6000:]}\n--- stderr ---\n{self.stderr[-6000:]}")


def ralph_args(claude_bin: Path, *words: str, model: str = MODEL_NAME) -> list[str]:
    return [sys.executable, str(RALPH), *words, "--claude-bin", str(claude_bin),
            "--model", model, "--claude-args", "--allowedTools Bash"]


def ralph_env(home: Path, base_url: str, extra: Mapping[str, str] | None = None
              ) -> dict[str, str]:
    """The environment `ralph` runs in: the e2e tests' throw-away HOME and fake API, which its
    `claude -p` children inherit."""
    return claude_env(home=home, base_url=base_url, extra=extra)


def run_ralph(args: Sequence[str], *, cwd: Path, env: Mapping[str, str],
              timeout: float = 180) -> RalphRun:
    done = subprocess.run(list(args), cwd=cwd, env=dict(env), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout, check=False)
    return RalphRun(list(args), done.returncode, done.stdout, done.stderr)


def conversation(body: dict[str, Any]) -> str:
    return "\n".join(piece for message in body.get("messages", [])
                     for piece in message_text(message.get("content")))


def after_tool(body: dict[str, Any]) -> bool:
    """Whether the request answers a tool call: the conversation's last message is a tool
    result."""
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content)


def by_task(replies: Mapping[str, tuple[Reply, Reply]]) -> Callable[[dict[str, Any]], Reply]:
    """A script entry answering each session by the task its prompt names: the first reply
    of the pair to its prompt, the second after the tool call. Parallel sessions are told
    apart this way, whatever order their requests come in."""

    def answer(body: dict[str, Any]) -> Reply:
        said = conversation(body)
        for marker, (first, then) in replies.items():
            if marker in said:
                return then if after_tool(body) else first
        return [text(f"(no scripted reply for: {said[:200]!r})")]

    return answer


def history(project: Path) -> list[dict[str, Any]]:
    folder = project / ".claude" / "ralph" / "history"
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]


def bash_then_promise(command: str, promise: str) -> tuple[Reply, Reply]:
    return [text("Working on it."), bash(command)], [text(f"Done.\n<promise>{promise}</promise>")]
