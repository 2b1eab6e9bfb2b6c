"""What every `ralph` subcommand shares: the --project option, the project's store, and an
ended loop's record as JSON."""

from __future__ import annotations

import os
from pathlib import Path

import click

from finesse.loop.notify.message import loop_record
from finesse.state.paths import StatePaths, find_project_root
from finesse.state.store import LoopStore


def store_for(project: str | None) -> LoopStore:
    root = Path(project).resolve() if project else find_project_root(os.environ, os.getcwd())
    return LoopStore(StatePaths(root))


project_option = click.option(
    "--project", type=click.Path(file_okay=False), default=None,
    help="Project root (default: $CLAUDE_PROJECT_DIR, else the git top level of the cwd).",
)

__all__ = ["loop_record", "project_option", "store_for"]  # loop_record: `ralph report --json`
