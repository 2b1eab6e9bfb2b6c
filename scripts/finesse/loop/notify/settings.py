"""Who is told when a loop ends, as the arguments and the project's config say it.

`--notify` takes `desktop` (the platform's notifier, else the terminal bell) or an http(s)
URL (a JSON POST), repeatable; `--notify-cmd CMD` a command, repeatable, split here with
shlex and later run without a shell. Given on the command line, each option replaces the
config's key of the same kind (`notify`, `notify_cmd`); otherwise the config's apply.
Standard library only: the loop grammar imports it.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from urllib.parse import urlsplit

from finesse.errors import UsageError
from finesse.loop.project_config import CONFIG, read_config, strings
from finesse.loop.words import refuse_nul
from finesse.models import Notify

DESKTOP = "desktop"
MAX_TARGETS = 8
EXAMPLE = "for example --notify desktop or --notify https://hooks.slack.com/services/..."


def check_target(value: str, origin: str = "--notify") -> str:
    """`desktop` or an http(s) URL with a host; a one-line UsageError otherwise."""
    target = value.strip()
    if target == DESKTOP:
        return target
    try:
        parts = urlsplit(target)
        host = parts.hostname
    except ValueError:
        host, parts = None, None
    if parts is None or parts.scheme not in ("http", "https") or not host or any(
            char.isspace() or not char.isprintable() for char in target):
        raise UsageError(f"{origin} needs desktop or an http(s) URL, not {value!r}: {EXAMPLE}")
    return target


def check_command(value: str, origin: str = "--notify-cmd") -> str:
    """A command that splits into words with shlex (it is run from those words, never by a
    shell); a one-line UsageError otherwise."""
    try:
        words = shlex.split(value)
    except ValueError as err:
        raise UsageError(f"{origin} {value!r} cannot be split into words ({err}): check its "
                         "quotes, e.g. --notify-cmd \"notify-me --title 'loop ended'\"") from None
    if not words:
        raise UsageError(f'{origin} needs a command, e.g. --notify-cmd "notify-me --loop"')
    refuse_nul(origin, value)
    if not words[0]:
        raise UsageError(f"{origin} {value!r} names no program: give a command, e.g. "
                         '--notify-cmd "notify-me --loop"')
    return value


def parse_notify(values: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """The `--notify` and `--notify-cmd` values of a loop's arguments, checked."""
    targets = [check_target(value) for value in values.get("--notify", [])]
    commands = [check_command(value) for value in values.get("--notify-cmd", [])]
    if len(targets) + len(commands) > MAX_TARGETS:
        raise UsageError(f"at most {MAX_TARGETS} --notify and --notify-cmd in all: one "
                         "command can tell the rest")
    return list(dict.fromkeys(targets)), list(dict.fromkeys(commands))


def project_notify(targets: list[str], commands: list[str], root: Path) -> Notify | None:
    """The loop's notifications: the arguments', else the config's; None when nobody is to
    be told. A config that names a bad target is refused in one line, as an argument is."""
    if not (targets and commands):
        config = read_config(root)
        if not targets:
            targets = [check_target(value, f'{CONFIG} "notify"')
                       for value in strings(config, "notify")]
        if not commands:
            commands = [check_command(value, f'{CONFIG} "notify_cmd"')
                        for value in strings(config, "notify_cmd")]
    if not targets and not commands:
        return None
    return Notify(targets=list(dict.fromkeys(targets)), commands=list(dict.fromkeys(commands)))
