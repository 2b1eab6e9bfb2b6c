"""`ralph report`: the report of an ended loop, as Markdown, JSON, or the HTML page."""

from __future__ import annotations

import json
from pathlib import Path

import click

from finesse.cli.ralph.common import loop_record, project_option, store_for
from finesse.models import LoopState
from finesse.state.store import LoopStore


def html_report(store: LoopStore, state: LoopState) -> Path:
    """The loop's HTML report: the one its end wrote, else written now beside its Markdown
    report (its files changed then measured as the project is now, and the page says so)."""
    from finesse.loop.html.files import html_path, write_html
    from finesse.loop.html.loop_page import render_html
    from finesse.loop.lifecycle import end_facts

    target = html_path(state.report_path or store.paths.reports / f"{state.loop_id}.md")
    if target.is_file():
        return target
    problem = write_html(target, render_html(state, end_facts(store, state), made_later=True))
    if problem:
        raise click.ClickException(f"cannot write {target}: {problem}")
    return target


@click.command("report")
@project_option
@click.option("--json", "as_json", is_flag=True,
              help="Print the ended loop's record as JSON, with its spend under `spend`.")
@click.option("--html", "as_html", is_flag=True,
              help="Print the path of the loop's HTML report (written now if it is missing).")
@click.argument("loop", required=False)
def command(project: str | None, as_json: bool, as_html: bool, loop: str | None) -> None:
    """The report of the latest ended loop, or of LOOP (a loop id or its start)."""
    if as_json and as_html:
        raise click.UsageError("give --json or --html, not both")
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
    if as_html:
        click.echo(str(html_report(store, latest)))
        return
    path = Path(latest.report_path) if latest.report_path else None
    if path is None or not path.is_file():
        raise click.ClickException(f"the report of {latest.loop_id} is missing; try --json")
    # Byte for byte, as `cat` would: the report keeps the bytes of names that are not UTF-8.
    click.echo(path.read_bytes(), nl=False)
