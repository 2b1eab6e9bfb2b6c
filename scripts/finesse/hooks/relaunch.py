"""A hook started under a `python3` older than 3.11 hands itself over to a suitable interpreter
(`finesse.support.interpreters`), or, when there is none, refuses our slash commands in one
line and lets every other event go ahead. Standard library only, in syntax Python 3.6 still
compiles: `hooks/launch.py` imports this module only on an old interpreter.

The hand-over runs the same launcher with the same event and one more argument, RELAUNCHED
plus the reason the interpreter was chosen. On POSIX the process is replaced (`exec`): the
hook's JSON on stdin is passed through unread, the pid stays the one Claude Code waits for
and times out, and the exit status is the new launcher's, which is always 0. On Windows the
new launcher is started with the inherited streams and waited for, and this one exits 0
whatever it returned. Either way the hook runs exactly once: this process never runs it
itself, and a launcher started with RELAUNCHED never searches again (one that is still too
old says so, naming the candidate, and stops): no iteration is ever counted twice, and no
two launchers ever start each other in a loop.
"""

import io
import json
import os
import sys

from finesse.support import interpreters
from finesse.support.slash import command_name

MYPY = False  # the type checker takes MYPY as true: typing costs 16 ms to import on 3.9
if MYPY:
    from collections.abc import Mapping

RELAUNCHED = "--finesse-relaunched="
PROMPT_EVENT = "prompt"


def relaunched_by(args: "list[str]") -> "str | None":
    """The reason this launcher was started by another one, or None when Claude Code did."""
    for arg in args:
        if arg.startswith(RELAUNCHED):
            return arg[len(RELAUNCHED):]
    return None


def hand_over(launcher: str, event: str, env: "Mapping[str, str]",
              windows: "bool | None" = None) -> bool:
    """Run the launcher for `event` under the first candidate that starts; False when none
    does. On POSIX a successful start never returns."""
    for candidate in interpreters.candidates(env, windows):
        argv = [*candidate.argv, "-S", launcher, event, RELAUNCHED + candidate.reason]
        try:
            interpreters.run_replacing(argv, windows)
        except OSError:
            continue  # it could not be started: the hook has not run, try the next one
        return True
    return False


def refusal_output(raw: bytes, reason: "str | None",
                   running: "tuple[int, ...]") -> "str | None":
    """The hook output refusing our command typed in the prompt `raw`, else None."""
    try:
        prompt = json.loads(raw.decode("utf-8", "surrogateescape")).get("prompt")
    except (ValueError, AttributeError, RecursionError):  # RecursionError: nested too deeply
        return None
    if not isinstance(prompt, str) or command_name(prompt) is None:
        return None
    block = {"decision": "block", "reason": interpreters.refusal(running, reason)}
    return json.dumps(block, ensure_ascii=True)  # the shape finesse.hooks.output gives


def main(launcher: str, args: "list[str]", stdin: "io.BufferedIOBase | None" = None,
         windows: "bool | None" = None) -> int:
    """The launcher's work on an old interpreter; `args` are its arguments after its path."""
    event = args[0] if args else ""
    reason = relaunched_by(args[1:])
    if reason is None and hand_over(launcher, event, os.environ, windows):
        return 0
    if event != PROMPT_EVENT:
        return 0  # not our prompt: nothing to say, the event goes ahead
    raw = (stdin if stdin is not None else sys.stdin.buffer).read()
    output = refusal_output(raw, reason, tuple(sys.version_info[:3]))
    if output is not None:
        print(output)
    return 0
