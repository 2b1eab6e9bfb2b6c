"""`ralph`: the loops of this project from a terminal. Same engine, same state files.

Each subcommand is a module of this package defining a click command named `command`;
exit codes and one-line errors are `finesse.cli.boundary`'s, shared with `finesse`.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from finesse.cli import boundary
from finesse.cli.boundary import LazyGroup

SUBCOMMANDS: dict[str, str] = {
    name: f"finesse.cli.ralph.{name}"
    for name in ("abort", "cancel", "ci", "doctor", "report", "resume", "run", "start", "status",
                 "statusline", "watch")
}


@click.group(cls=LazyGroup, subcommands=SUBCOMMANDS,
             context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Ralph loops of this project: run, ci, status, watch, cancel, abort, start, report, resume,
    doctor."""


def main(argv: Sequence[str] | None = None) -> int:
    # Not `run` imported by name: loading the `run` subcommand puts the module
    # finesse.cli.ralph.run on this package under that very name.
    return boundary.run(cli, argv, "ralph")
