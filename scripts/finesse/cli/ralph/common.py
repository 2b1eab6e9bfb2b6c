"""What every `ralph` subcommand shares: the --project option, the project's store, and an
ended loop's record as JSON."""

from __future__ import annotations

import os
from pathlib import Path

import click

from finesse.errors import UsageError
from finesse.loop.notify.message import loop_record
from finesse.state.paths import StatePaths, find_project_root
from finesse.state.store import LoopStore


def store_for(project: str | None) -> LoopStore:
    return LoopStore(StatePaths(project_folder(project)))


def project_folder(project: str | None) -> Path:
    """The project root, which must be a directory already: a --project or
    CLAUDE_PROJECT_DIR naming none (a typo, a stale export, a deleted checkout) would
    otherwise have a `.claude/ralph/` created there, outside any project."""
    if project:
        root, origin = Path(project).resolve(), f"--project {project}"
        remedy = "give the project's folder"
    else:
        root = find_project_root(os.environ, os.getcwd())
        origin = f"CLAUDE_PROJECT_DIR={os.environ.get('CLAUDE_PROJECT_DIR', '')}"
        remedy = "unset it or give --project DIRECTORY"
    if not root.is_dir():
        raise UsageError(f"{origin}: no such directory; {remedy}")
    return root


project_option = click.option(
    "--project", type=click.Path(file_okay=False), default=None,
    help="Project root (default: $CLAUDE_PROJECT_DIR, else the git top level of the cwd).",
)

__all__ = ["loop_record", "project_option", "store_for"]  # loop_record: `ralph report --json`
