"""`ralph start`: start a loop for a Claude Code session, with the /ralph-loop grammar."""

from __future__ import annotations

import shlex

import click

from finesse.cli.ralph.common import project_option, store_for
from finesse.loop.lifecycle import start_loop
from finesse.loop.recovery import recover
from finesse.loop.request import start_request
from finesse.state.paths import is_valid_session_id
from finesse.state.store import utcnow


@click.command("start", context_settings={"ignore_unknown_options": True,
                                          "allow_interspersed_args": False})
@project_option
@click.option("--session", "session_id", required=True,
              help="The Claude Code session the loop belongs to.")
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
def command(project: str | None, session_id: str, words: tuple[str, ...]) -> None:
    """Start a loop for a session, with the /ralph-loop grammar after the options."""
    if not is_valid_session_id(session_id):
        raise click.UsageError(f"not a session id: {session_id!r}")
    store = store_for(project)
    request = start_request(shlex.join(words), store.paths.root)
    with store.locked(session_id):
        recovered = recover(store, session_id)  # an interrupted start, rolled back
        if recovered:
            click.echo(f"ralph start: {recovered}", err=True)
        state = start_loop(store, session_id, request, utcnow())
    for warning in request.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"Started Ralph loop {state.loop_id} for session {session_id}: "
               f"up to {state.max_iterations} iterations, promise {state.promise}.")
