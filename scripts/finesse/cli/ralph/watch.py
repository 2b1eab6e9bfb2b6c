"""`ralph watch`: the project's loops, live, from any terminal (`finesse.loop.watch` reads
them; this draws them with rich's live display).

It changes nothing: it reads the loop files, re-reading them only when a `stat` says one
changed (every POLL_SECONDS), and redraws every second for the clocks. `q` or Ctrl-C quits.
Not on a terminal, or with `--once`, it prints the same as plain lines: once with `--once`;
on a pipe, again whenever something changed, until no loop is active.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime
from typing import TYPE_CHECKING

import click

from finesse.cli.ralph.common import project_option, store_for
from finesse.loop.watch import Watch, clock, plain_lines, read_watch, signature, spend_words
from finesse.state.paths import StatePaths
from finesse.state.store import utcnow
from finesse.support.terminal import keys

if TYPE_CHECKING:
    from rich.console import Group

POLL_SECONDS = 0.5
REDRAW_SECONDS = 1.0


def screen(watch: Watch, now: datetime) -> Group:
    """The live view: a table of active loops, one of recently ended ones."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    head = Text.assemble(("ralph watch", "bold"), f"  {watch.root}  ",
                         (f"{now:%H:%M:%S} UTC", "dim"), ("  q quits", "dim"))
    active = Table(title="Active loops", title_justify="left", expand=True)
    for name in ("loop", "mode", "iteration", "elapsed", "last check", "spend"):
        active.add_column(name, overflow="fold")
    for view in watch.active:
        details = [f"task: {view.task}"]
        if view.judge:
            details.append(f"judge: {view.judge}")
        if view.learning:
            details.append(f"last learning: {view.learning}")
        red = "red" in view.checks
        active.add_row(Text(view.loop_id), Text(view.mode),
                       Text(f"{view.iteration}/{view.max_iterations}", style="bold"),
                       Text(clock(view.elapsed)),
                       Text(view.checks, style="red" if red else "green"),
                       Text(spend_words(view)))
        active.add_row(Text(""), Text("\n".join(details), style="dim"), end_section=True)
    if not watch.active:
        active.add_row(Text("No active Ralph loop.", style="dim"))
    parts: list[Table | Text] = [head, active]
    parts += [Text(f"Unreadable loop file (left as it is): {name}", style="yellow")
              for name in watch.unreadable]
    if watch.ended:
        ended = Table(title="Recently ended", title_justify="left", expand=True)
        for name in ("loop", "outcome", "iterations", "took", "spend", "task"):
            ended.add_column(name, overflow="fold")
        for view in watch.ended:
            good = view.outcome.startswith("success")
            ended.add_row(Text(view.loop_id), Text(view.outcome, style="green" if good
                                                   else "yellow"),
                          Text(f"{view.iteration}/{view.max_iterations}"),
                          Text(clock(view.elapsed)), Text(spend_words(view)), Text(view.task))
        parts.append(ended)
    return Group(*parts)


def live(paths: StatePaths) -> None:
    from rich.console import Console
    from rich.live import Live

    seen = signature(paths)
    watch = read_watch(paths, utcnow())
    console = Console()
    with keys() as typed, Live(screen(watch, utcnow()), console=console,
                                    auto_refresh=False, screen=False) as shown:
        drawn = time.monotonic()
        while not typed.typed(POLL_SECONDS).lower().startswith("q"):
            now = signature(paths)
            if now != seen:
                seen, watch = now, read_watch(paths, utcnow())
            elif time.monotonic() - drawn < REDRAW_SECONDS:
                continue
            shown.update(screen(watch, utcnow()), refresh=True)
            drawn = time.monotonic()


def lines(paths: StatePaths, *, once: bool) -> None:
    seen: tuple[object, ...] | None = None
    while True:
        now = signature(paths)
        if now != seen:
            seen = now
            watch = read_watch(paths, utcnow())
            click.echo("\n".join(plain_lines(watch, utcnow())))
            if once or not watch.active:
                return
            click.echo("")
        time.sleep(POLL_SECONDS)


@click.command("watch")
@project_option
@click.option("--once", is_flag=True, help="Print the loops once, as plain lines, and exit.")
def command(project: str | None, once: bool) -> None:
    """The project's loops, live: iteration, time, checks, spend; q or Ctrl-C quits."""
    paths = store_for(project).paths
    try:
        if once or not sys.stdout.isatty():
            lines(paths, once=once)
        else:
            live(paths)
    except KeyboardInterrupt:
        pass
