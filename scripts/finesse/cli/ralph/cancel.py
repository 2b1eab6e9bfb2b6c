"""`ralph cancel`: stop a loop now."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from finesse.cli.ralph.common import project_option, store_for
from finesse.errors import FinesseError
from finesse.loop.lifecycle import stop_loop
from finesse.state.paths import is_valid_session_id
from finesse.state.store import utcnow

Command = TypeVar("Command", bound=Callable[..., int])


def which_loops(verb: str) -> Callable[[Command], Command]:
    """`--session ID` and `--all`, the choice of loops `ralph cancel` and `ralph abort` take."""
    def options(function: Command) -> Command:
        function = click.option("--all", "every", is_flag=True,
                                help=f"{verb} every loop of the project.")(function)
        return click.option("--session", "session_id", default=None,
                            help=f"{verb} this session's loop.")(function)
    return options


@click.command("cancel")
@project_option
@which_loops("Cancel")
def command(project: str | None, session_id: str | None, every: bool) -> int:
    """Cancel a loop now: the one active loop, one session's, or --all."""
    return stop(project, session_id, every, by="`ralph cancel`")


def stop(project: str | None, session_id: str | None, every: bool, *, by: str) -> int:
    """Cancel or abort (`by`) the loops asked for; shared by `ralph cancel` and `ralph
    abort`."""
    verb = "abort" if by == "`ralph abort`" else "cancel"

    store = store_for(project)
    if session_id and every:
        raise click.UsageError("give --session ID or --all, not both")
    if session_id:
        targets = [session_id]
    else:
        targets = [loop.session_id for loop in store.active_loops()]
        if len(targets) > 1 and not every:
            raise click.UsageError(
                f"{len(targets)} loops are active: pick one with --session ID "
                f"(see `ralph status`) or {verb} them all with --all"
            )
    if not targets:
        raise click.ClickException(f"no active Ralph loop in {store.paths.root}")
    failed = 0
    for target in targets:
        if not is_valid_session_id(target):
            raise click.UsageError(f"not a session id: {target!r}")
        try:
            stopped = stop_loop(store, target, utcnow(), by)
        except FinesseError as err:
            if len(targets) == 1:
                raise
            # --all: one loop that cannot be stopped (its lock a FIFO) leaves the rest going
            click.echo(f"ralph {verb}: session {target}: {err}", err=True)
            failed += 1
            continue
        if stopped.requested:
            click.echo(f"The loop of session {target} is busy (running its checks): the "
                       f"{verb} is recorded; it ends as soon as that stop decides.")
        elif stopped.given_up is not None:
            click.echo(f"The ended loop {stopped.given_up.loop_id} was aborted: it can no "
                       "longer be resumed.")
        elif stopped.ended is None:
            raise click.ClickException(f"session {target} has no active Ralph loop")
        else:
            click.echo(stopped.ended.end_message + f" (session {target})")
    return 1 if failed else 0
