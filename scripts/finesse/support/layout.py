"""Where a project is, and where finesse keeps its state in it. Standard library `os` only,
and syntax an old `python3` can still import: the hook entry decides from this alone, before
anything else is loaded, whether an event concerns the plugin at all.

The project root is CLAUDE_PROJECT_DIR when set (Claude Code sets it for hooks; it stays at
the launch directory when the model runs `cd`), else the nearest directory above the working
directory holding `.git`, else the working directory itself. Never the cwd alone: a hook's
working directory follows the model's `cd`.
"""

from __future__ import annotations

import os

# The plugin's own folder under the project root: state, history, reports. Never committed,
# reverted or counted as a change (finesse.support.git leaves it out of everything).
OWN_DIR = ".claude/ralph"
LOOPS_DIR = OWN_DIR + "/loops"
# Set in the environment of every `claude -p` a headless run (`ralph run`) starts: the plugin's
# hooks do nothing there, so an iteration's session never starts, ends or drives a loop itself
# (its loop is the run's, driven from outside).
HEADLESS_CHILD = "FINESSE_HEADLESS_CHILD"
# One empty file per judge-mode loop, named by its session id: the PreToolUse and subagent
# hooks, which fire on every tool call, look here before anything else.
JUDGE_DIR = OWN_DIR + "/judge"
# What an interrupted multi-step operation of a session was doing (`finesse.state.intents`).
INTENTS_DIR = OWN_DIR + "/intents"


def project_root(env: object, cwd: str) -> str:
    """The project root as a string (see the module docstring). `env` is a mapping."""
    configured = env.get("CLAUDE_PROJECT_DIR") if hasattr(env, "get") else None
    if configured:
        return str(configured)
    start = current = os.path.abspath(cwd)
    while not os.path.exists(os.path.join(current, ".git")):
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent
    return current


def loop_file_names(root: str) -> list[str]:
    """The names in the project's active-loops folder; [] when there is none."""
    try:
        return os.listdir(os.path.join(root, LOOPS_DIR))
    except OSError:
        return []


def judge_marker_names(root: str) -> list[str]:
    """The names in the project's judge-mode marker folder; [] when there is none."""
    try:
        return os.listdir(os.path.join(root, JUDGE_DIR))
    except OSError:
        return []


def has_intent(root: str, session_id: str) -> bool:
    """Whether the session has an intent record: an operation of it was interrupted, or its
    record is yet to be removed. `session_id` is a loop file's name (a plain id)."""
    return os.path.isfile(os.path.join(root, INTENTS_DIR, session_id + ".json"))
