"""What every `ralph` subcommand shares: the --project option, the project's store, and an
ended loop's record as JSON."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from finesse.models import LoopState
from finesse.schema import to_dict
from finesse.spend import receipt
from finesse.state.paths import StatePaths, find_project_root
from finesse.state.store import LoopStore


def store_for(project: str | None) -> LoopStore:
    root = Path(project).resolve() if project else find_project_root(os.environ, os.getcwd())
    return LoopStore(StatePaths(root))


project_option = click.option(
    "--project", type=click.Path(file_okay=False), default=None,
    help="Project root (default: $CLAUDE_PROJECT_DIR, else the git top level of the cwd).",
)


def loop_record(state: LoopState) -> dict[str, Any]:
    """An ended loop's record, with its spend under `spend` (`ralph report --json`)."""
    return {**to_dict(state), "spend": receipt(state).as_dict()}
