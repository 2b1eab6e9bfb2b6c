"""Which tool calls judge mode refuses (PreToolUse), decided from the loop state and the
hook input alone. Pure.

- The main thread (no `agent_id`; with `claude --agent` it has an `agent_type` but still no
  `agent_id`) is the orchestrator: it never writes files (Write, Edit, NotebookEdit).
- The judge (`finesse:ralph-judge`) is read-only: no write tool, no subagent of its own,
  and Bash only for a command proven read-only (`read_only`).
- A worker (`finesse:ralph-worker`) that is not the open attempt's running worker (a
  second one, or an old one resumed with SendMessage) writes nothing and runs nothing.
Other subagents are left alone; what they change outside a worker's run is recorded.
"""

from __future__ import annotations

import shlex
from typing import Any

from finesse.judging.records import JUDGE_TYPE, WORKER_TYPE, JudgeState

WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
SPAWN_TOOLS = frozenset({"Agent", "Task", "SendMessage"})
# A command with any of these is shell syntax (a redirection, a pipe, a substitution, a
# second command, an expansion): never read-only by proof.
_SHELL = set(";&|<>`$(){}\n\r\\!")
# Each reader, with its options that write a file or run a program.
_READERS: dict[str, tuple[str, ...]] = {
    "cat": (), "head": (), "tail": (), "wc": (), "ls": (), "pwd": (), "stat": (),
    "grep": (), "diff": (), "cmp": (), "du": (),
    "file": ("-C", "--compile"), "tree": ("-o",),
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0",
             "-fprintf", "-fls"),
    "git": ("--output", "--ext-diff", "--textconv", "-O", "--open-files-in-pager"),
}
_GIT_READERS = frozenset({"status", "diff", "log", "show", "ls-files", "rev-parse", "blame",
                          "grep", "shortlog", "describe"})


def _names(arg: str, option: str) -> bool:
    """Whether `arg` is `option`: given whole, with a value (`--output=x`, `-Ox`), or as an
    abbreviation a long option parser accepts (`--outp`)."""
    if option.startswith("--"):
        name = arg.split("=", 1)[0]
        return len(name) > 2 and name.startswith("--") and option.startswith(name)
    return arg.startswith(option)


def read_only(command: str) -> bool:
    """Whether `command` is proven to read only: one simple command, no shell syntax, a
    program from a short list of readers, and none of their options that write or run."""
    if not command.strip() or any(char in _SHELL for char in command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not words or words[0] not in _READERS:
        return False
    program, args = words[0], words[1:]
    if any(_names(arg, option) for arg in args for option in _READERS[program]):
        return False
    return program != "git" or (bool(args) and args[0] in _GIT_READERS)


def tool_denial(judge: JudgeState, tool: str, tool_input: dict[str, Any],
                agent_id: str, agent_type: str) -> str:
    """Why this tool call is refused, in one line; "" when it may go ahead."""
    if not agent_id:
        if tool in WRITE_TOOLS:
            return ("judge mode: the orchestrator does not do the work: delegate this to the "
                    'ralph-worker subagent (the Agent tool, subagent_type "finesse:ralph-worker")')
        return ""
    if agent_type == JUDGE_TYPE:
        if tool in WRITE_TOOLS or tool in SPAWN_TOOLS:
            return (f"judge mode: the judge is read-only: {tool} is not allowed; read and "
                    "search, then give your verdict")
        command = tool_input.get("command")
        if tool == "Bash" and not (isinstance(command, str) and read_only(command)):
            return ("judge mode: the judge is read-only and this command is not provably "
                    "read-only (allowed: one plain git status/diff/log/show, ls, cat, head, "
                    "tail, wc, grep or find without -exec/-delete)")
        return ""
    if agent_type == WORKER_TYPE:
        current = judge.current
        if current is not None and current.worker_id == agent_id and current.worker_running:
            return ""
        if tool in WRITE_TOOLS or tool in SPAWN_TOOLS or tool == "Bash":
            return ("judge mode: this worker is not the open attempt's worker (a worker is "
                    "used once, for one attempt): change nothing and stop")
    return ""
