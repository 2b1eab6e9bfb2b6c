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
from finesse.support.layout import OWN_DIR


def store_for(project: str | None) -> LoopStore:
    return LoopStore(StatePaths(project_folder(project)))


def project_folder(project: str | None) -> Path:
    """The project root, which must be a directory already: a --project or
    CLAUDE_PROJECT_DIR naming none (a typo, a stale export, a deleted checkout) would
    otherwise have a `.claude/ralph/` created there, outside any project."""
    configured = os.environ.get("CLAUDE_PROJECT_DIR")
    if project:
        given = Path(project)
        root = (given if given.is_absolute() else Path(current_directory(), given)).resolve()
        origin, remedy = f"--project {project}", "give the project's folder"
    else:
        root = configured_root() if configured else nearest_project(current_directory())
        origin, remedy = f"CLAUDE_PROJECT_DIR={configured}", "unset it or give --project DIRECTORY"
    if not root.is_dir():
        raise UsageError(f"{origin}: no such directory; {remedy}")
    return root


def configured_root() -> Path:
    return find_project_root(os.environ, "")


def nearest_project(cwd: str) -> Path:
    """Without CLAUDE_PROJECT_DIR: the nearest folder from `cwd` up to its git top level that
    holds loops (`.claude/ralph/`), else that top level. Claude Code started in a monorepo's
    `pkg/` keeps its loops in `pkg/`; a terminal there must find them, not the top's none."""
    top = find_project_root({}, cwd)
    here = Path(cwd)
    for folder in (here, *here.parents):
        if folder == top or not folder.is_relative_to(top):
            break
        if (folder / OWN_DIR).is_dir():
            return folder
    return top


def current_directory() -> str:
    """The working directory; a one-line UsageError when it was removed since the terminal
    went there (a cleaned-up worktree, a deleted checkout), where os.getcwd() raises."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        raise UsageError("the current directory no longer exists: cd to the project, or give "
                         "--project DIRECTORY") from None


project_option = click.option(
    "--project", type=click.Path(file_okay=False), default=None,
    help="Project root (default: $CLAUDE_PROJECT_DIR, else the nearest folder with loops "
         "(.claude/ralph/) from the cwd up to its git top level, else that top level).",
)

__all__ = ["loop_record", "project_option", "store_for"]  # loop_record: `ralph report --json`
