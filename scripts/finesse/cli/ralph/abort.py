"""`ralph abort`: end a loop now and give it up: it is recorded as aborted and cannot be
resumed. With no loop running, the session's latest ended loop that could be resumed is
given up instead."""

from __future__ import annotations

import click

from finesse.cli.ralph.cancel import stop
from finesse.cli.ralph.common import project_option


@click.command("abort")
@project_option
@click.option("--session", "session_id", default=None, help="Abort this session's loop.")
@click.option("--all", "abort_all", is_flag=True, help="Abort every loop of the project.")
def command(project: str | None, session_id: str | None, abort_all: bool) -> None:
    """Abort a loop now (never resumable): the one active loop, one session's, or --all."""
    stop(project, session_id, abort_all, by="`ralph abort`")
