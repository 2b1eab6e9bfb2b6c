"""`ralph doctor`: Python, the plugin's environment, Claude Code, the plugin's validity."""

from __future__ import annotations

import click

from finesse.support.health import report


@click.command("doctor")
def command() -> int:
    """Check Python, the plugin's environment, Claude Code, and the plugin's validity.
    Exits 1 when any check fails."""
    healthy, text = report()
    click.echo(text)
    return 0 if healthy else 1
