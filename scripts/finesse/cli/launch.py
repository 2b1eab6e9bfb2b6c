"""Entry for the command-line tools run from a checkout or the plugin's `bin/` (which Claude
Code puts on the PATH of its Bash tool): use the plugin's own environment when the
dependencies are not importable here. Standard library only until the CLI is imported.
An interpreter older than 3.11 never gets here: `bin/` hands over first (finesse.cli.relaunch)."""

from __future__ import annotations

import os
import sys

from finesse.support.interpreters import RELAUNCHED_VARIABLE


def fast_statusline(argv: list[str]) -> bool:
    """`ralph statusline` as Claude Code runs it (alone, or with `--chain CMD`), which the
    standard library answers; any other option (--install, --help...) goes to the CLI."""
    return argv[1:2] == ["statusline"] and (
        len(argv) == 2 or (len(argv) == 4 and argv[2] == "--chain"))


def run_cli(name: str) -> int:
    # Set only for the relaunch that started this process (finesse.cli.relaunch): nothing
    # this one starts may take it for its own.
    os.environ.pop(RELAUNCHED_VARIABLE, None)
    if name == "ralph" and fast_statusline(sys.argv):
        # Claude Code runs the status line after every change: no click, no virtualenv.
        from finesse.hooks.statusline import main as statusline

        return statusline()
    import importlib.util

    from finesse.support import runtime
    from finesse.support.health import DEPENDENCIES

    if any(importlib.util.find_spec(module) is None for module in DEPENDENCIES):
        try:
            runtime.activate(os.environ, may_build=True)
        except runtime.RuntimeMissing as err:
            if name == "ralph" and sys.argv[1:2] == ["doctor"]:
                from finesse.support.health import report

                healthy, text = report()
                print(text)
                return 0 if healthy else 1
            print(f"{name}: {err}", file=sys.stderr)
            return 1
    if name == "ralph":
        from finesse.cli.ralph import main
    else:
        from finesse.cli.finesse import main
    return main()
