"""The hooks' single error boundary: nothing escapes into Claude Code.

Whatever goes wrong, the hook prints valid JSON or nothing and exits 0, so Claude may stop:
a bug must never trap a user in a loop. The error is logged under `.claude/ralph/`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import BinaryIO, TextIO

from finesse.hooks.output import HookOutput, render
from finesse.state.paths import StatePaths, find_project_root
from finesse.state.store import LoopStore

Handler = Callable[[bytes, Mapping[str, str], str], "HookOutput | None"]


def log_error(env: Mapping[str, str], cwd: str, event: str) -> None:
    try:
        import traceback  # only on the error path: it is slow to import

        store = LoopStore(StatePaths(find_project_root(env, cwd)))
        summary = traceback.format_exc(limit=3).strip().splitlines()
        store.log(f"{event} hook error, the stop went ahead: {' | '.join(summary[-3:])}")
    except Exception:  # the boundary itself must not fail
        pass


def run_hook(
    event: str,
    handler: Handler,
    stdin: BinaryIO | None = None,
    stdout: TextIO | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> int:
    env = os.environ if env is None else env
    cwd = os.getcwd() if cwd is None else cwd
    stdout = sys.stdout if stdout is None else stdout
    try:
        raw = (sys.stdin.buffer if stdin is None else stdin).read()
        text = render(handler(raw, env, cwd))
    except Exception:
        log_error(env, cwd, event)
        text = ""
    if text:
        stdout.write(text + "\n")
        stdout.flush()
    return 0


