"""`ralph status`: every active loop of the project."""

from __future__ import annotations

import json

import click

from finesse.cli.ralph.common import project_option, store_for
from finesse.loop.recovery import pending
from finesse.loop.status import describe
from finesse.schema import to_dict
from finesse.state.store import utcnow


@click.command("status")
@project_option
@click.option("--json", "as_json", is_flag=True, help="Print the loops as JSON.")
def command(project: str | None, as_json: bool) -> None:
    """Every active loop of the project."""
    store = store_for(project)
    scan = store.scan()
    loops = scan.loops
    for line in scan.unreadable:  # left for its session's next stop to move aside
        click.echo(f"ralph status: an unreadable loop file, left as it is: {line}", err=True)
    for line in pending(store):  # left for its session's next call, which holds the lock
        click.echo(f"ralph status: {line}", err=True)
    if as_json:
        click.echo(json.dumps(
            {"project": str(store.paths.root),
             "loops": [to_dict(loop) for loop in loops]},
            indent=2, ensure_ascii=True,
        ))
        return
    if not loops:
        click.echo(f"No active Ralph loop in {store.paths.root}.")
        return
    now = utcnow()
    click.echo("\n\n".join(describe(loop, now, history=True) for loop in loops))
