"""Why a gate commit failed, in one line that says what to do: git's own last line often
names no cause (a prepare-commit-msg hook, which --no-verify does not skip, exits 1 without a
word; signing fails as "failed to write commit object")."""

from __future__ import annotations

import os
from pathlib import Path

from finesse.support.git import Completed, Git


def commit_problem(git: Git, done: Completed) -> str:
    """The failed `git commit`'s cause: the signing, a hook, or git's last line."""
    return _signing_problem(git, done.err) or _hook_problem(git, done.reason())


def _hook_problem(git: Git, reason: str) -> str:
    """Why `git commit` failed, naming the repository's prepare-commit-msg hook when one
    is installed (it runs even with --no-verify, and git itself names no hook)."""
    hooks = git.text("rev-parse", "--git-path", "hooks")
    if hooks:
        hook = Path(hooks) if Path(hooks).is_absolute() else git.root / hooks
        hook = hook / "prepare-commit-msg"
        if hook.is_file() and os.access(hook, os.X_OK):
            said = "" if reason.startswith("exit status") else f" ({reason})"
            return (f"the repository's prepare-commit-msg hook {hook} rejected the commit"
                    f"{said}: fix the hook, or remove it for this loop; nothing was committed")
    return f"git commit failed in {git.root}: {reason}; nothing was committed"


def _signing_problem(git: Git, err: bytes) -> str:
    """Why a commit failed when git could not sign it (commit.gpgsign on, and no key, no
    agent or a pinentry without a terminal here): git's last line, "failed to write commit
    object", names no cause. "" for any other failure."""
    said = [line.strip() for line in os.fsdecode(err).splitlines()]
    signing = next((line for line in said if "failed to sign" in line), "")
    if not signing or git.text("config", "--bool", "commit.gpgsign") != "true":
        return ""
    return (f"git could not sign the commit (commit.gpgsign is on: {signing}): make signing "
            "work without a prompt, or turn it off for this repository (git config "
            "commit.gpgsign false); nothing was committed")
