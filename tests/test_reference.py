"""docs/reference.md is written from the code (tools/gen_reference.py): the committed page must be
what the script writes now, so a new option, subcommand or argument cannot go undocumented."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import click

ROOT = Path(__file__).resolve().parent.parent


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference",
                                                  ROOT / "tools" / "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_page_is_what_the_script_writes() -> None:
    written = _generator().render()
    committed = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    assert committed == written, (
        "docs/reference.md is out of date: run `python3 tools/gen_reference.py` and commit it")


def test_the_page_has_every_subcommand_option_and_loop_argument() -> None:
    # What "from the code" must cover, checked apart from the rendering.
    from finesse.cli.finesse import cli as finesse_cli
    from finesse.cli.ralph import cli as ralph_cli
    from finesse.loop.arguments import EXECUTE_ARGUMENTS, LOOP_ARGUMENTS
    from finesse.loop.grammar import _VALUE_FLAGS

    page = _generator().render()

    def walk(group: click.Group, path: str) -> None:
        context = click.Context(group, info_name=path.split()[-1])
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            assert command is not None
            assert f"### {path} {name}\n" in page, f"{path} {name}"
            for param in command.params:
                names = param.opts if isinstance(param, click.Option) else [
                    param.human_readable_name]
                for shown in names:
                    assert shown in page, f"{path} {name} {shown}"
            if isinstance(command, click.Group):
                walk(command, f"{path} {name}")

    walk(ralph_cli, "ralph")
    walk(finesse_cli, "finesse")
    for argument in (*LOOP_ARGUMENTS, *EXECUTE_ARGUMENTS):
        assert f"| `{argument.flag or argument.value}" in page, argument
    assert set(_VALUE_FLAGS) == {a.flag for a in LOOP_ARGUMENTS if a.flag and a.value}
