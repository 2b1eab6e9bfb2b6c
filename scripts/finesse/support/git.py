"""What git says about the project, cheaply, for the Stop hook: the commit the loop started
from, whether the working tree changed since the last stop, and which files a loop changed.

The `git` command itself, not GitPython: these run on the Stop path, where every import
counts. Everything under `.claude/ralph/` (the loop's own files) is left out.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

OWN_FILES = ":(exclude).claude/ralph"
GIT_TIMEOUT_SECONDS = 30


def _git(root: Path, *args: str) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, timeout=GIT_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def head(root: Path) -> str | None:
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.decode().strip() if out else None


def tree_fingerprint(root: Path) -> str | None:
    """Changes when the agent commits, edits, creates or deletes a file; None outside git.

    HEAD, the porcelain status, and the size and modification time of each changed path
    (so a second edit to an already modified file counts too).
    """
    status = _git(root, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all",
                  "--", ".", OWN_FILES)
    if status is None:
        return None
    digest = hashlib.sha256(status)
    for entry in status.split(b"\0"):
        if not entry or entry.startswith(b"#"):
            continue
        fields_before_path = {b"1": 8, b"2": 9, b"u": 10}.get(entry[:1])
        if fields_before_path is None:
            name = entry[2:]  # "? path": untracked (a rename's original path lands here too)
        else:
            name = entry.split(b" ", fields_before_path)[-1]
        try:
            info = os.stat(root / os.fsdecode(name))
        except OSError:
            continue
        digest.update(f"{info.st_size}:{info.st_mtime_ns}".encode())
    return digest.hexdigest()[:24]


def changed_files(root: Path, since: str | None) -> list[str]:
    """Files changed since the commit `since`: committed, staged, unstaged and untracked."""
    names: set[str] = set()
    if since:
        out = _git(root, "diff", "--name-only", "-z", since, "--", ".", OWN_FILES)
        if out:
            names.update(os.fsdecode(name) for name in out.split(b"\0") if name)
    out = _git(root, "ls-files", "--others", "--exclude-standard", "-z", "--", ".", OWN_FILES)
    if out:
        names.update(os.fsdecode(name) for name in out.split(b"\0") if name)
    return sorted(names)


def _stat_key(root: Path, name: str) -> str:
    try:
        info = os.stat(root / name)
    except OSError:
        return f"{name}\tgone"
    return f"{name}\t{info.st_size}\t{info.st_mtime_ns}"


def dirty_snapshot(root: Path, baseline: str | None) -> list[str]:
    """The files already changed when a loop starts, each with its size and mtime."""
    return [_stat_key(root, name) for name in changed_files(root, baseline)]


def changed_by_loop(root: Path, baseline: str | None, snapshot: list[str]) -> list[str]:
    """Files changed since the loop started: those changed since the baseline commit, less
    the ones that were already changed then and have not been touched since."""
    untouched = set(snapshot)
    return [name for name in changed_files(root, baseline)
            if _stat_key(root, name) not in untouched]
