"""`ralph statusline`: the status line command (see `finesse.hooks.statusline`), and
`--install` to point Claude Code's settings at it.

A plugin cannot contribute the main status line in Claude Code 2.1.328 (a plugin's
settings may set only `agent` and `subagentStatusLine`), so `--install` edits the project's
(or with `--user`, the user's) settings after showing the exact change. An existing status
line is never overwritten without `--force`; with it, ours chains to the existing command
and the line shows both.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click

from finesse.cli.ralph.common import project_option, store_for
from finesse.errors import UsageError
from finesse.support import claude_settings
from finesse.support.runtime import SCRIPTS_DIR


def our_command(chain: str | None) -> str:
    ralph = SCRIPTS_DIR.parent / "bin" / "ralph"
    command = f"{shlex.quote(str(ralph))} statusline"
    return f"{command} --chain {shlex.quote(chain)}" if chain else command


@click.command("statusline")
@project_option
@click.option("--install", is_flag=True, help="Set it as Claude Code's status line.")
@click.option("--user", "user_scope", is_flag=True,
              help="With --install: in ~/.claude/settings.json, not the project's.")
@click.option("--force", is_flag=True,
              help="With --install: replace an existing status line, chaining to it.")
@click.option("--chain", default=None, metavar="CMD",
              help="Run CMD first, with the same input, and show its line before ours.")
def command(project: str | None, install: bool, user_scope: bool, force: bool,
            chain: str | None) -> int:
    """Print the status line for the JSON Claude Code gives on stdin, or --install it."""
    if not install:
        from finesse.hooks.statusline import main

        return main(["--chain", chain] if chain else [])
    root = store_for(project).paths.root
    path = (user_home() if user_scope else root) / ".claude" / "settings.json"
    data = claude_settings.load(path)
    existing = claude_settings.status_command(data)
    if claude_settings.ours(existing):
        click.echo(f"{path} already runs `ralph statusline` as the status line.")
        return 0
    if existing is not None and not force:
        raise click.UsageError(
            f"{path} already has a status line (`{existing}`): pass --force to chain to it "
            "(the line then shows both), or remove it"
        )
    new = our_command(existing)
    click.echo(f"In {path}:\n  statusLine.command: {existing or '(none)'}\n"
               f"  becomes:            {new}")
    claude_settings.set_status_line(path, data, new)
    click.echo("Done: Claude Code shows it from its next update.")
    return 0


def user_home() -> Path:
    """The home folder whose `.claude/settings.json` Claude Code reads as the user's. HOME
    empty would make it `/` (Python's expanduser) and HOME relative a folder of the working
    directory: both refused in one line. HOME unset: the password database's entry."""
    home = os.environ.get("HOME")
    if home is not None and not os.path.isabs(home):
        raise UsageError(f"HOME={home!r} is not an absolute path: set HOME to your home "
                         "folder, or install for the project (without --user)")
    return Path.home()
