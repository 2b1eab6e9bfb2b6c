"""Where a project's loop state lives. Standard library only: the Stop hook's fast path uses it.

Everything is found from the project root, never from the working directory: the model's
`cd` moves a hook's cwd, while CLAUDE_PROJECT_DIR stays at the launch directory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from finesse.support.layout import JUDGE_DIR, LOOPS_DIR, OWN_DIR, project_root

STATE_SUBDIR = tuple(OWN_DIR.split("/"))
KILL_SWITCH_NAME = "STOP"

# Claude Code session ids are UUIDs; anything else must never become part of a path.
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def is_valid_session_id(session_id: object) -> bool:
    return isinstance(session_id, str) and _SESSION_ID.fullmatch(session_id) is not None


def find_project_root(env: Mapping[str, str], cwd: str | os.PathLike[str]) -> Path:
    """CLAUDE_PROJECT_DIR when set, else the nearest directory above cwd holding `.git`,
    else cwd itself, so a loop outside git still has one fixed home for the session
    (`finesse.support.layout.project_root`)."""
    return Path(project_root(env, os.fspath(cwd)))


class StatePaths:
    """The files under `<root>/.claude/ralph/`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = root.joinpath(*STATE_SUBDIR)
        self.loops = root / LOOPS_DIR
        self.history = self.base / "history"
        self.reports = self.base / "reports"
        self.locks = self.base / "locks"
        self.requests = self.base / "requests"
        self.corrupt = self.base / "corrupt"
        self.intents = self.base / "intents"  # what a multi-step operation is about to do
        self.temp = self.base / "tmp"  # temp files of writes into the project tree
        self.log = self.base / "finesse.log"
        self.kill_switch = self.base / KILL_SWITCH_NAME

    def move_aside(self, path: Path, prefix: str = "") -> Path:
        """Move an unreadable file of ours to `corrupt/`, named by the time, so nothing moved
        there before is overwritten; where it went (`path` itself when it cannot be moved:
        a read-only folder)."""
        from datetime import UTC, datetime

        self.corrupt.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = self.corrupt / f"{prefix}{path.stem}.{stamp}{path.suffix}"
        try:
            os.replace(path, target)
        except OSError:
            return path
        return target

    def loop_file(self, session_id: str) -> Path:
        if not is_valid_session_id(session_id):
            raise ValueError(f"not a session id: {session_id!r}")
        return self.loops / f"{session_id}.json"

    def loop_done_file(self, session_id: str) -> Path:
        """The channel an agent writes `done` to, to end its own loop; one per session, so
        one session's agent can never end another session's loop.

        It sits at the project root, not under `.claude/`: Claude Code refuses the agent's
        writes into `.claude/` in its default permission mode (seen in the e2e tests). The
        Stop hook consumes it before anything else looks at the tree, so it is never
        committed, reverted, or counted as a change.
        """
        if not is_valid_session_id(session_id):
            raise ValueError(f"not a session id: {session_id!r}")
        return self.root / f".ralph-loop-done-{session_id}"

    def request_file(self, session_id: str) -> Path:
        """A cancel asked for while the loop's stop held its lock."""
        if not is_valid_session_id(session_id):
            raise ValueError(f"not a session id: {session_id!r}")
        return self.requests / f"{session_id}.cancel"

    def judge_marker(self, session_id: str) -> Path:
        """Says that this session runs a judge-mode loop (see `layout.JUDGE_DIR`)."""
        if not is_valid_session_id(session_id):
            raise ValueError(f"not a session id: {session_id!r}")
        return self.root / JUDGE_DIR / session_id

    def intent_file(self, session_id: str) -> Path:
        """The session's unfinished multi-step operation, if any (`finesse.state.intents`)."""
        if not is_valid_session_id(session_id):
            raise ValueError(f"not a session id: {session_id!r}")
        return self.intents / f"{session_id}.json"

    def lock_file(self, session_id: str) -> Path:
        return self.locks / f"{session_id}.lock"
