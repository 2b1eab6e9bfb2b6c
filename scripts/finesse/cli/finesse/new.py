"""`finesse new SPEC`: render a plan spec (YAML or JSON) into a loop prompt and its files.

One plan: writes `<out-dir>/<name>.md` (the prompt), `<name>-promise.txt` (the completion
promise) and `<name>-plan.md` (the plan's metadata), and prints the command that runs it. A
decomposed task (a spec with `workflows`): writes `<out-dir>/<session>/execution-graph.md`
and `wave-<N>/<task>/prompt.md`, `promise.txt`, `plan.md`, and prints each wave's commands.
The work is in `finesse.authoring.new`; this module parses the arguments and prints.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from finesse.authoring.new import (
    DEFAULT_OUT_DIR,
    build,
    build_decomposed,
    load_plan_spec,
    plan_name_for,
    refuse_failing,
    refuse_failing_session,
    refuse_mixing,
    refuse_overwrite,
    refuse_session_overwrite,
    session_folder,
    session_summary,
    summary,
    write_plan,
    write_session,
)
from finesse.authoring.plan_files import PlanFiles
from finesse.authoring.spec import Spec
from finesse.authoring.workflows.decompose import DecomposedSpec
from finesse.state.paths import find_project_root


@click.command("new")
@click.argument("spec_path", metavar="SPEC")
@click.option("--out-dir", default=DEFAULT_OUT_DIR, show_default=True, metavar="DIR",
              help="Where the three files go, relative to the project root.")
@click.option("--name", default=None,
              help="The plan's file name (letters, digits, . _ -); default: the spec's name "
                   "without its extension. For a decomposed task, the session folder's name "
                   "(kebab-case); default: the spec's session.")
@click.option("--force", is_flag=True, help="Overwrite the plan's files if they exist (never "
              "flat files with a decomposed plan's, nor the other way round).")
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
    spec = load_plan_spec(Path(spec_path))
    if isinstance(spec, DecomposedSpec):
        _new_session(spec, root / out_dir, name, force, root)
    else:
        _new_plan(spec, Path(spec_path), root / out_dir, name, force, root)


def _new_plan(spec: Spec, spec_path: Path, out_dir: Path, name: str | None, force: bool,
              root: Path) -> None:
    refuse_mixing(out_dir, root)
    files = PlanFiles.flat(out_dir, plan_name_for(name, spec_path))
    if not force:
        refuse_overwrite(files, root)
    rendered = build(spec, root, files)
    refuse_failing(rendered)
    write_plan(files, rendered)
    for warning in rendered.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(summary(spec, rendered, files, root))


def _new_session(spec: DecomposedSpec, out_dir: Path, name: str | None, force: bool,
                 root: Path) -> None:
    folder = session_folder(spec, out_dir, name)
    refuse_session_overwrite(folder, root, force=force)
    session = build_decomposed(spec, root, folder)
    refuse_failing_session(session)
    write_session(session)
    for files, rendered in session.workflows:
        for warning in rendered.warnings:
            click.echo(f"warning: {files.name}: {warning}", err=True)
    click.echo(session_summary(session, root))
