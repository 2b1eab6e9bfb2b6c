"""`ralph report`: the report of an ended loop."""

from __future__ import annotations

import json
from pathlib import Path

import click

from finesse.cli.ralph.common import loop_record, project_option, store_for


@click.command("report")
@project_option
@click.option("--json", "as_json", is_flag=True,
              help="Print the ended loop's record as JSON, with its spend under `spend`.")
@click.argument("loop", required=False)
def command(project: str | None, as_json: bool, loop: str | None) -> None:
    """The report of the latest ended loop, or of LOOP (a loop id or its start)."""
    store = store_for(project)
    ended = store.history()
    if loop:
        ended = [state for state in ended if state.loop_id.startswith(loop)]
        if len(ended) > 1:
            raise click.UsageError(
                f"{len(ended)} loops start with {loop!r}: give more of the id"
            )
    if not ended:
        raise click.ClickException(
            f"no ended Ralph loop{' ' + repr(loop) if loop else ''} in {store.paths.root}"
        )
    latest = max(ended, key=lambda state: state.ended_at or state.updated_at)
    if as_json:
        click.echo(json.dumps(loop_record(latest), indent=2, ensure_ascii=True))
        return
    path = Path(latest.report_path) if latest.report_path else None
    if path is None or not path.is_file():
        raise click.ClickException(f"the report of {latest.loop_id} is missing; try --json")
    click.echo(path.read_text(encoding="utf-8"), nl=False)
