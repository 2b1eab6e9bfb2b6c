"""Git's own record of what a gate loop committed: its commits carry the loop's `Ralph-Loop`
trailer, so the commit a revert goes back to, and whether an iteration was committed, can
be read back from git when the loop's state lags behind it (a kill between a commit and the
state's save: docs/design.md, "Crash safety")."""

from __future__ import annotations

import os
from pathlib import Path

from finesse.loop.gate.commits import git_in


def loop_commits(root: Path, loop_id: str, since: str) -> list[tuple[str, str]]:
    """(sha, subject) of the commits after `since` on HEAD's first-parent line that carry
    this loop's `Ralph-Loop` trailer, newest first: git's own record of what the loop
    committed, read back when its state may lag behind (a kill between a commit and the
    state's save)."""
    git = git_in(root)
    done = git.run("log", "--first-parent", "--format=%H%x00%s", "--fixed-strings",
                   f"--grep=Ralph-Loop: {loop_id}", f"{since}..HEAD")
    if done.code != 0:
        return []
    found = []
    for line in os.fsdecode(done.out).splitlines():
        sha, _, subject = line.partition("\0")
        if sha:
            found.append((sha, subject))
    return found


def iteration_commit(root: Path, loop_id: str, iteration: int, since: str) -> str | None:
    """The commit of this loop's iteration `iteration` after `since`, if git has one."""
    prefix = f"ralph: iteration {iteration}: "
    return next((sha for sha, subject in loop_commits(root, loop_id, since)
                 if subject.startswith(prefix)), None)
