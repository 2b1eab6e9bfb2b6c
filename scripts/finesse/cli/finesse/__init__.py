"""`finesse`: the Finesse planning tools from a terminal.

Each subcommand lives in its own module of this package, as a click command bound to the
module-level name `command`; SUBCOMMANDS maps the command's name to that module, and a module
is imported only when its command runs or `--help` lists it. Exit codes and the one-line
errors are `finesse.cli.boundary`'s, shared with `ralph`.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from finesse.cli.boundary import LazyGroup, run

SUBCOMMANDS: dict[str, str] = {
    "budget": "finesse.cli.finesse.budget",
    "cache": "finesse.cli.finesse.cache",
    "new": "finesse.cli.finesse.new",
    "retro": "finesse.cli.finesse.retro",
    "validate": "finesse.cli.finesse.validate",
}


@click.group(cls=LazyGroup, subcommands=SUBCOMMANDS,
             context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Finesse planning tools: check a Ralph loop prompt before you start the loop."""


def main(argv: Sequence[str] | None = None) -> int:
    return run(cli, argv, "finesse")
