"""Which tool calls judge mode refuses (PreToolUse), decided from the loop state and the
hook input alone. Pure.

- The main thread (no `agent_id`; with `claude --agent` it has an `agent_type` but still no
  `agent_id`) is the orchestrator: it never writes files (Write, Edit, NotebookEdit).
- The judge (`finesse:ralph-judge`) is read-only: no write tool, no subagent of its own,
  and Bash only for a command proven read-only (`read_only`, below).
- A worker (`finesse:ralph-worker`) that is not the open attempt's running worker (a
  second one, or an old one resumed with SendMessage) writes nothing and runs nothing.
Other subagents are left alone; what they change outside a worker's run is recorded.

What the judge's Bash may run, and why each rule is there (docs/judge-guard.md says the same
to users). The guard sees the command text, the shell runs the words it expands to, so the
text must leave the shell nothing to decide:

1. One simple command: none of ``; & | < > ` $ ( ) { } \\ !`` nor a line break (a second
   command, a redirection, a substitution, a brace or history expansion).
2. No unquoted glob character (`*`, `?`, `[`): the shell would replace it by file names,
   and a file named `--output=x` or `-fprint` becomes an option the guard never saw.
   Quoted, it reaches the program as written (`find . -name '*.py'` is allowed).
3. The program is a reader: cat, head, tail, wc, ls, pwd, stat, grep, diff, cmp, du, file,
   tree, find, or git with a reading subcommand (status, diff, log, show, ls-files,
   rev-parse, blame, grep, shortlog, describe) as its first argument (so no `git -c`).
4. None of the reader's options that write a file or run a program, in any spelling:
   whole, with a value (`--output=x`, `-Ox`), abbreviated (`--outp`), or as any letter of a
   group of short options (`-iOrm`: the `O` is there, whatever follows it):
   - git: `-O`/`--open-files-in-pager` (grep runs its value as the pager on the matches),
     `--output` (writes the diff), `--ext-diff` and `--textconv` (run external programs);
   - file: `-C`/`--compile` (writes a `.mgc`), `-z`/`-Z`/`--uncompress[-noreport]` (runs
     decompressors);
   - tree: `-o`/`--output` (writes the listing), `-R` (writes `00Tree.html` in each folder);
   - find: `-exec`, `-execdir`, `-ok`, `-okdir`, `-delete`, `-fprint`, `-fprint0`,
     `-fprintf`, `-fls` (find's words are whole: no letter groups).
   A group holding one of these letters as part of another option's value (`git log -SfOo`)
   is refused too: the guard does not parse each program's arguments, it errs towards no.
"""

from __future__ import annotations

import shlex
from typing import Any, NamedTuple

from finesse.judging.records import JUDGE_TYPE, WORKER_TYPE, JudgeState

WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
SPAWN_TOOLS = frozenset({"Agent", "Task", "SendMessage"})
_SHELL = set(";&|<>`$(){}\n\r\\!")
_GLOB = set("*?[")


class _Dangers(NamedTuple):
    """A reader's options that write or run: short letters (refused anywhere in a group of
    short options), long options (refused whole, with `=`, or abbreviated) and words (find's
    primaries, refused as written or with more letters after them)."""

    letters: str = ""
    long: tuple[str, ...] = ()
    words: tuple[str, ...] = ()


_READERS: dict[str, _Dangers] = {
    "cat": _Dangers(), "head": _Dangers(), "tail": _Dangers(), "wc": _Dangers(),
    "ls": _Dangers(), "pwd": _Dangers(), "stat": _Dangers(), "grep": _Dangers(),
    "diff": _Dangers(), "cmp": _Dangers(), "du": _Dangers(),
    "file": _Dangers("CzZ", ("--compile", "--uncompress", "--uncompress-noreport")),
    "tree": _Dangers("oR", ("--output",)),
    "find": _Dangers(words=("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint",
                            "-fprint0", "-fprintf", "-fls")),
    "git": _Dangers("O", ("--output", "--ext-diff", "--textconv", "--open-files-in-pager")),
}
_GIT_READERS = frozenset({"status", "diff", "log", "show", "ls-files", "rev-parse", "blame",
                          "grep", "shortlog", "describe"})


def _has_unquoted_glob(command: str) -> bool:
    """Whether a glob character stands outside quotes (backslashes are refused before)."""
    quote = ""
    for char in command:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in _GLOB:
            return True
    return False


def _dangerous(arg: str, dangers: _Dangers) -> bool:
    if arg.startswith("--"):
        name = arg.split("=", 1)[0]
        return len(name) > 2 and any(option.startswith(name) for option in dangers.long)
    if any(arg.startswith(word) for word in dangers.words):
        return True
    return arg.startswith("-") and any(letter in arg[1:] for letter in dangers.letters)


def read_only(command: str) -> bool:
    """Whether `command` is proven to read only, by the rules of the module docstring."""
    if not command.strip() or any(char in _SHELL for char in command):
        return False
    if _has_unquoted_glob(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not words or words[0] not in _READERS:
        return False
    program, args = words[0], words[1:]
    if any(_dangerous(arg, _READERS[program]) for arg in args):
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
                    "tail, wc, grep or find without -exec/-delete, and no unquoted * ? [)")
        return ""
    if agent_type == WORKER_TYPE:
        current = judge.current
        if current is not None and current.worker_id == agent_id and current.worker_running:
            return ""
        if tool in WRITE_TOOLS or tool in SPAWN_TOOLS or tool == "Bash":
            return ("judge mode: this worker is not the open attempt's worker (a worker is "
                    "used once, for one attempt): change nothing and stop")
    return ""
