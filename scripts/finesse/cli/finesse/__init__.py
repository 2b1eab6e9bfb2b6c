"""`finesse`: the Finesse planning tools from a terminal.

Each subcommand lives in its own module, `finesse/cli/finesse_<name>.py`, as a click
command bound to the module-level name `command`. SUBCOMMANDS maps the command's name to
that module; adding a command is one module plus one line there. A module is imported only
when its command runs or `--help` lists it.

Exit codes: 0 when the command did its job and found nothing wrong, 1 when it ran and found
a problem (a prompt that fails a check), 2 when it could not run (bad arguments, a missing
or unreadable file). Errors become one line on stderr here, and nowhere else.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import IO, Any

import click

from finesse.errors import FinesseError, UsageError

SUBCOMMANDS: dict[str, str] = {
    "budget": "finesse.cli.finesse.budget",
    "cache": "finesse.cli.finesse.cache",
    "new": "finesse.cli.finesse.new",
    "retro": "finesse.cli.finesse.retro",
    "validate": "finesse.cli.finesse.validate",
}


class CommandError(click.ClickException):
    """A command could not do its job; shown as one line: "<command path>: <what to do>"."""

    exit_code = 1

    def __init__(self, where: str, message: str) -> None:
        super().__init__(" ".join(message.split()))
        self.where = where

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"{self.where}: {self.message}", file=file, err=file is None)


class CommandUsageError(CommandError):
    """The command could not run as typed: bad arguments, a missing or unreadable file."""

    exit_code = 2


def one_line(err: click.UsageError, default_where: str) -> CommandUsageError:
    where = err.ctx.command_path if err.ctx is not None else default_where
    return CommandUsageError(where, f"{err.format_message()} (see '{where} --help')")


class FinesseGroup(click.Group):
    """Loads subcommands from SUBCOMMANDS lazily; turns their errors into one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *SUBCOMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        command = getattr(importlib.import_module(target), "command", None)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} must define a click command named `command`")
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CommandError:
            raise
        except click.UsageError as err:
            raise one_line(err, ctx.command_path) from None
        except FinesseError as err:
            where = f"{ctx.command_path} {ctx.invoked_subcommand or ''}".strip()
            error = CommandUsageError if isinstance(err, UsageError) else CommandError
            raise error(where, str(err)) from None


@click.group(cls=FinesseGroup, context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Finesse planning tools: check a Ralph loop prompt before you start the loop."""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        result = cli.main(args=list(argv) if argv is not None else None, prog_name="finesse",
                          standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as err:
        err.show()
        return err.exit_code
    except click.UsageError as err:  # the group's own arguments, parsed before invoke
        shown = one_line(err, "finesse")
        shown.show()
        return shown.exit_code
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except click.Abort:
        click.echo("Aborted.", err=True)
        return 1
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    raise SystemExit(main())
