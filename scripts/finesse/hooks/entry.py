"""Every hook event of the plugin starts here (from `hooks/launch.py EVENT`).

Each event first asks, with the standard library alone and before any JSON is parsed,
whether it concerns finesse at all; most do not, and then nothing else is imported:

- `stop`: this session has a loop only if a file `<session_id>.json` is in the project's
  loops folder and the session id appears in the input (one directory listing and a byte
  search). It runs on every stop of every session that has the plugin.
- `prompt`: only our slash commands; they may need the plugin's virtualenv (built on first
  use). Any other prompt only in a session with a loop here and an intent record (a kill
  left a step half done: `finesse.hooks.stop.handle_interrupted`), or a `/goal`.
- `session-start`, `session-end`: only when the project has a `.claude/ralph/` folder.
- `pre-tool-use`, `subagent-start`, `subagent-stop` (judge mode): only when a judge-mode
  marker of this session is in the project's judge folder (one listing, a byte search).
  PreToolUse fires on every tool call of every session that has the plugin.

An interpreter older than 3.11 never gets here: `hooks/launch.py` hands the hook over to a
suitable one first (`finesse.hooks.relaunch`), or refuses our commands in one line.
"""

from __future__ import annotations

import io
import os
import sys

from finesse.support.layout import HEADLESS_CHILD

# `/goal CONDITION` (not `/goal` alone nor `/goal clear`, which only report or clear it).
# Compiled where it is used: `re` alone costs a third of a bare start-up, and the Stop path
# for a session without a loop, which runs on every stop, needs no pattern.
GOAL = r"\A\s*/goal[ \t]+(?!clear\s*\Z)\S"


def may_have_loop(raw: bytes, root: str) -> bool:
    """False when no loop of this project can be this input's session's. Loop files are
    named `<session_id>.json` and ids are plain ASCII, so a session whose id appears
    nowhere in the input as a quoted string has no loop here. Other names (a stray file
    whose name is not ASCII, or not even UTF-8) are no session's loop and are passed over."""
    from finesse.support.layout import loop_file_names

    return any(b'"%s"' % name[:-5].encode("ascii") in raw
               for name in loop_file_names(root) if name.endswith(".json") and name.isascii())


def may_have_judge_loop(raw: bytes, root: str) -> bool:
    """False when no judge-mode loop of this project can be this input's session's (its
    marker is named by the session id, which subagents' hook inputs carry too)."""
    from finesse.support.layout import judge_marker_names

    return any(b'"%s"' % name.encode() in raw for name in judge_marker_names(root)
               if name.isascii())


def interrupted_here(fields: dict[str, object], root: str) -> bool:
    """Whether this prompt's session has a loop here and an intent record: a kill may have
    left its loop half-way through a step, to finish before the agent works again."""
    from finesse.support.layout import has_intent, loop_file_names

    session = fields.get("session_id")
    return (isinstance(session, str) and session.isascii()
            and f"{session}.json" in loop_file_names(root) and has_intent(root, session))


def _judge_event(event: str, raw: bytes) -> int:
    if event == "pre-tool-use":
        from finesse.hooks.pre_tool_use import main as pre_tool_use

        return pre_tool_use(stdin=io.BytesIO(raw))
    if event == "subagent-start":
        from finesse.hooks.subagent import main_start

        return main_start(stdin=io.BytesIO(raw))
    import contextlib

    from finesse.support.runtime import RuntimeMissing, activate

    # The contracts are pydantic models; the environment was built at the loop's start.
    # Without it the hook records the attempt as unchecked (finesse.hooks.subagent).
    with contextlib.suppress(RuntimeMissing):
        activate(os.environ, may_build=False)
    from finesse.hooks.subagent import main_stop

    return main_stop(stdin=io.BytesIO(raw))


def _root() -> str:
    from finesse.support.layout import project_root

    return project_root(os.environ, os.getcwd())


def _prompt(raw: bytes) -> int:
    import re

    from finesse.loop.grammar import match_command
    from finesse.support import json_text

    try:
        fields = json_text.loads(raw)
    except ValueError:  # not JSON, or nested too deeply: no prompt of ours
        return 0
    prompt = fields.get("prompt") if isinstance(fields, dict) else None
    if not isinstance(prompt, str):
        return 0
    if match_command(prompt) is None:
        if re.match(GOAL, prompt) and may_have_loop(raw, _root()):
            from finesse.hooks.boundary import run_hook
            from finesse.hooks.prompt_submit import goal_typed

            return run_hook("UserPromptSubmit", goal_typed, io.BytesIO(raw))
        if interrupted_here(fields, _root()):
            from finesse.hooks.boundary import run_hook
            from finesse.hooks.stop import handle_interrupted

            return run_hook("UserPromptSubmit", handle_interrupted, io.BytesIO(raw))
        return 0
    from finesse.support.runtime import RuntimeMissing, activate

    try:
        activate(os.environ, may_build=True)
    except RuntimeMissing as err:
        from finesse.hooks.output import block, render

        print(render(block(f"finesse: {err}")))
        return 0
    from finesse.hooks.prompt_submit import main

    return main(stdin=io.BytesIO(raw))


def run(event: str, stdin: io.BufferedIOBase | None = None) -> int:
    raw = (stdin if stdin is not None else sys.stdin.buffer).read()
    if os.environ.get(HEADLESS_CHILD):
        return 0  # an iteration of `ralph run`: its loop is driven from outside
    if event == "stop":
        if not may_have_loop(raw, _root()):
            return 0
        from finesse.hooks.stop import main as stop

        return stop(stdin=io.BytesIO(raw))
    if event == "prompt":
        return _prompt(raw)
    if event in ("session-start", "session-end"):
        if not os.path.isdir(os.path.join(_root(), ".claude", "ralph")):
            return 0
        from finesse.hooks.session import main_end, main_start

        handler = main_end if event == "session-end" else main_start
        return handler(stdin=io.BytesIO(raw))
    if event in ("pre-tool-use", "subagent-start", "subagent-stop"):
        if not may_have_judge_loop(raw, _root()):
            return 0
        return _judge_event(event, raw)
    return 0
