"""Write docs/reference.md from the code: every `ralph` and `finesse` subcommand's own `--help`
(click's, walked from the two command groups) and every slash command's arguments (from the
table `finesse.loop.grammar` parses with, `finesse.loop.arguments`).

    python3 tools/gen_reference.py           write the page
    python3 tools/gen_reference.py --check   exit 1 if the page differs from what it would write

tests/test_reference.py fails when the committed page is not what this writes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import click  # noqa: E402

from finesse.cli.finesse import cli as finesse_cli  # noqa: E402
from finesse.cli.ralph import cli as ralph_cli  # noqa: E402
from finesse.loop.arguments import (  # noqa: E402
    EXECUTE_ARGUMENTS,
    LOOP_ARGUMENTS,
    RESUME_FLAGS,
    Argument,
)
from finesse.support.slash import COMMANDS  # noqa: E402

PAGE = ROOT / "docs" / "reference.md"
WIDTH = 100  # click wraps help text to this, whatever the terminal


def _description(name: str) -> str:
    text = (ROOT / "commands" / f"{name}.md").read_text(encoding="utf-8")
    found = re.search(r"^description: (.+)$", text, re.MULTILINE)
    return found.group(1).strip() if found else ""


def _row(argument: Argument) -> str:
    shown = " ".join(part for part in argument[:2] if part)
    # A pipe inside a table cell, code or not, must be escaped in GitHub's Markdown.
    shown, meaning = (text.replace("|", "\\|") for text in (shown, argument.meaning))
    return f"| `{shown}` | {meaning} |"


def _slash_section() -> list[str]:
    lines = ["## Slash commands", "",
             "Each also works namespaced, e.g. `/finesse:ralph-loop`. Those marked (hook) are "
             "parsed and answered by the plugin's hook before the model is asked; the others "
             "are instructions the model follows.", ""]
    for path in sorted((ROOT / "commands").glob("*.md")):
        mark = " (hook)" if path.stem in COMMANDS else ""
        lines.append(f"- `/{path.stem}`{mark}: {_description(path.stem)}")
    lines += ["", "### /ralph-loop arguments", "",
              "The same arguments follow `ralph start --session ID` and `ralph run` "
              "(`--judge` only in a session).", "",
              "| argument | meaning |", "| --- | --- |"]
    lines += [_row(argument) for argument in LOOP_ARGUMENTS]
    lines += ["", "### /finesse:finesse-execute arguments", "",
              "The `/ralph-loop` arguments, with `--prompt-file` required, and:", "",
              "| argument | meaning |", "| --- | --- |"]
    lines += [_row(argument) for argument in EXECUTE_ARGUMENTS]
    resume = ", ".join(f"`{flag}`" for flag in RESUME_FLAGS)
    lines += ["", "### /ralph-resume arguments", "",
              f"Only {resume}, as in `/ralph-loop`; without `--max-iterations`, a loop that "
              "used up its cap gets as many iterations again.", ""]
    return lines


def _commands(group: click.Group, parent: click.Context) -> list[tuple[click.Context, str]]:
    """(context, help) for the group and every command under it, depth first, by name."""
    found = [(parent, group.get_help(parent))]
    for name in group.list_commands(parent):
        command = group.get_command(parent, name)
        assert command is not None, name
        context = click.Context(command, info_name=name, parent=parent,
                                terminal_width=WIDTH, max_content_width=WIDTH)
        if isinstance(command, click.Group):
            found += _commands(command, context)
        else:
            found.append((context, command.get_help(context)))
    return found


def _cli_section(group: click.Group, name: str) -> list[str]:
    root = click.Context(group, info_name=name, terminal_width=WIDTH, max_content_width=WIDTH,
                         **group.context_settings)
    lines = [f"## {name}", ""]
    for context, text in _commands(group, root):
        lines += [f"### {context.command_path}", "", "```", text.rstrip(), "```", ""]
    return lines


def render() -> str:
    lines = ["# Reference", "",
             "Written from the code by `python3 tools/gen_reference.py`; do not edit it by hand "
             "(tests/test_reference.py checks that it is what the script writes). What each mode "
             "does, and when to use it: [the README](../README.md).", ""]
    lines += _slash_section()
    lines += _cli_section(ralph_cli, "ralph")
    lines += _cli_section(finesse_cli, "finesse")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    page = render()
    if argv == ["--check"]:
        if PAGE.read_text(encoding="utf-8") != page:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python3 tools/gen_reference.py")
            return 1
        return 0
    if argv:
        print("usage: python3 tools/gen_reference.py [--check]")
        return 2
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
