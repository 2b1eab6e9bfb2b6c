"""How an iteration's `claude -p` is started: its arguments and its environment.

Every iteration is a new session with an id of its own (`--session-id`), so nothing of the
conversation carries over; `--output-format stream-json` needs `--verbose` in print mode
(2.1.328 refuses it otherwise). `--effort` is passed as given: Claude Code sends it only for
models that take an effort level, and its own `CLAUDE_CODE_EFFORT_LEVEL` would beat the flag,
so it is left out of the child's environment when the loop names an effort. The child's
environment carries HEADLESS_CHILD, which the plugin's hooks honour by doing nothing: an
iteration's session never starts, drives or ends a loop of its own.
"""

from __future__ import annotations

import shlex
import uuid
from collections.abc import Mapping

from finesse.errors import UsageError
from finesse.models import LoopState
from finesse.support.layout import HEADLESS_CHILD

# Flags `ralph run` sets itself, or that would make an iteration something else than one
# fresh, streamed session.
RESERVED = {
    "-p": "", "--print": "", "--output-format": "", "--input-format": "", "--verbose": "",
    "--session-id": "", "-r": "", "--resume": "", "-c": "", "--continue": "",
    "--fork-session": "", "--model": "use ralph run --model", "--effort": "use --effort",
}


def parse_claude_args(text: str | None) -> list[str]:
    """`--claude-args "..."`, split like a shell's words; a UsageError for a flag that
    `ralph run` sets itself."""
    if not text:
        return []
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise UsageError(f"--claude-args: {err}: quote it like a shell command line") from None
    for word in words:
        flag = word.split("=", 1)[0]
        if flag in RESERVED:
            hint = RESERVED[flag] or "ralph run sets it for every iteration"
            raise UsageError(f"--claude-args may not hold {flag}: {hint}")
    return words


def new_session_id() -> str:
    return str(uuid.uuid4())


def child_argv(state: LoopState, session_id: str) -> list[str]:
    run = state.headless
    if run is None:
        raise ValueError("not a headless loop")
    argv = [run.claude, "-p", "--output-format", "stream-json", "--verbose",
            "--session-id", session_id]
    if run.model:
        argv += ["--model", run.model]
    if state.effort:
        argv += ["--effort", state.effort]
    return [*argv, *run.claude_args]


def child_env(env: Mapping[str, str], state: LoopState) -> dict[str, str]:
    out = {key: value for key, value in env.items()
           if not (state.effort and key == "CLAUDE_CODE_EFFORT_LEVEL")}
    out[HEADLESS_CHILD] = state.session_id
    return out

