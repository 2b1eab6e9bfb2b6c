"""`ralph abort`: end a loop now and give it up: it is recorded as aborted and cannot be
resumed. With no loop running, the session's latest ended loop that could be resumed is
given up instead."""

from __future__ import annotations

import click

from finesse.cli.ralph.cancel import stop, which_loops
from finesse.cli.ralph.common import project_option


@click.command("abort")
@project_option
@which_loops("Abort")
def command(project: str | None, session_id: str | None, every: bool) -> int:
    """Abort a loop now (never resumable): the one active loop, one session's, or --all."""
    return stop(project, session_id, every, by="`ralph abort`")
