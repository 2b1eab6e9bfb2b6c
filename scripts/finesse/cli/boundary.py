"""The command-line tools' one error boundary, for `ralph` and `finesse` alike.

Each tool is a `LazyGroup`: its subcommands are modules loaded when run or listed, each
defining a click command named `command`. `run` calls a group and turns every error into
one line on stderr and an exit code, here and nowhere else:

- 0: the command did its job (and found nothing wrong);
- 1: it ran and found a problem or failed (a prompt that fails a check, a doctor check
  that fails, no loop to cancel), or was interrupted;
- 2: it could not run as typed (bad arguments, a missing or unreadable file): the line
  ends with where to look, `(see 'PROG SUB --help')`.
A command may also return an int: that is its exit code (e.g. `ralph run`'s 3).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Mapping, Sequence
from typing import IO, Any

import click

from finesse.errors import FinesseError, UsageError


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


class LazyGroup(click.Group):
    """Loads subcommands from `subcommands` (name -> module) lazily; turns their errors into
    one line."""

    def __init__(self, *args: Any, subcommands: Mapping[str, str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.subcommands = dict(subcommands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.subcommands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.subcommands.get(cmd_name)
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
        except click.ClickException as err:
            if isinstance(err, click.exceptions.NoArgsIsHelpError):
                raise
            where = f"{ctx.command_path} {ctx.invoked_subcommand or ''}".strip()
            raise CommandError(where, err.format_message()) from None


def _escape_what_cannot_print() -> None:
    """Text that cannot be encoded for the terminal (a lone surrogate from a hook's JSON, a
    file name that is not UTF-8, in a prompt or a reply) is printed with backslash escapes,
    never raised as a traceback."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def run(group: click.Group, argv: Sequence[str] | None, prog: str) -> int:
    """Run `group` as the program `prog`; the exit code, every error shown in one line."""
    _escape_what_cannot_print()
    try:
        result = group.main(args=list(argv) if argv is not None else None, prog_name=prog,
                            standalone_mode=False)
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click.exceptions.NoArgsIsHelpError as err:
        err.show()
        return err.exit_code
    except click.UsageError as err:  # the group's own arguments, parsed before invoke
        shown = one_line(err, prog)
        shown.show()
        return shown.exit_code
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except click.Abort:
        click.echo(f"{prog}: interrupted", err=True)
        return 1
    return result if isinstance(result, int) else 0
