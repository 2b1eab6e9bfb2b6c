"""`finesse new SPEC`: render a plan spec (YAML or JSON) into a loop prompt and its files.

Writes `<out-dir>/<name>.md` (the prompt), `<name>-promise.txt` (the completion promise) and
`<name>-plan.md` (the plan's metadata), and prints the command that runs the plan. The work
is in `finesse.authoring.new`; this module parses the arguments and prints.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from finesse.authoring.new import (
    DEFAULT_OUT_DIR,
    build,
    plan_name_for,
    refuse_failing,
    refuse_overwrite,
    summary,
    write_plan,
)
from finesse.authoring.plan_files import PlanFiles
from finesse.authoring.spec import load_spec
from finesse.state.paths import find_project_root


@click.command("new")
@click.argument("spec_path", metavar="SPEC")
@click.option("--out-dir", default=DEFAULT_OUT_DIR, show_default=True, metavar="DIR",
              help="Where the three files go, relative to the project root.")
@click.option("--name", default=None,
              help="The plan's file name (letters, digits, . _ -); default: the spec's name "
                   "without its extension.")
@click.option("--force", is_flag=True, help="Overwrite the plan's files if they exist.")
@click.option("--project", type=click.Path(file_okay=False, exists=True), default=None,
              help="Project root: phase files and --out-dir are relative to it (default: "
                   "$CLAUDE_PROJECT_DIR, else the git top level of the cwd).")
def command(spec_path: str, out_dir: str, name: str | None, force: bool,
            project: str | None) -> None:
    """Render a plan spec into a loop prompt, its promise file and its plan file.

    The prompt is checked with `finesse validate` before anything is written; the command
    prints how to run the plan with /finesse:finesse-execute.
    """
    root = Path(project).resolve() if project else find_project_root(os.environ, os.getcwd())
    spec = load_spec(Path(spec_path))
    files = PlanFiles.flat(root / out_dir, plan_name_for(name, Path(spec_path)))
    if not force:
        refuse_overwrite(files, root)
    rendered = build(spec, root, files)
    refuse_failing(rendered)
    write_plan(files, rendered)
    for warning in rendered.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(summary(spec, rendered, files, root))
