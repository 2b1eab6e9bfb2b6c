"""`finesse new SPEC`: render a plan spec (YAML or JSON) into a loop prompt and its files.

Writes `<out-dir>/<name>.md` (the prompt), `<name>-promise.txt` (the completion promise) and
`<name>-plan.md` (the plan's metadata), and prints the command that runs the plan. The text
comes from `finesse.authoring.render`; this module reads the spec, the project's git HEAD and
file sizes, refuses to overwrite without --force, and writes.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from finesse.authoring.budget import PhaseSpec, estimate, measure
from finesse.authoring.cache import load_config
from finesse.authoring.render import NOT_A_REPOSITORY, PlanFiles, render_files
from finesse.authoring.spec import Spec, load_spec
from finesse.errors import FinesseError, UsageError
from finesse.state.paths import find_project_root
from finesse.support.files import write_atomic

DEFAULT_OUT_DIR = "finesse-plans"
NO_COMMIT_YET = "none (no commit yet)"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")


@dataclass(frozen=True)
class PlanPaths:
    prompt: Path
    promise: Path
    plan: Path

    @classmethod
    def under(cls, out_dir: Path, name: str) -> PlanPaths:
        return cls(out_dir / f"{name}.md", out_dir / f"{name}-promise.txt",
                   out_dir / f"{name}-plan.md")

    def all(self) -> tuple[Path, Path, Path]:
        return (self.prompt, self.promise, self.plan)


@dataclass(frozen=True)
class Baseline:
    commit: str  # a hex sha, or why there is none
    is_repository: bool


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
    plan_name = plan_name_for(name, Path(spec_path))
    paths = PlanPaths.under(root / out_dir, plan_name)
    if not force:
        refuse_overwrite(paths, root)
    files = build(spec, root, paths)
    if not files.report.passed:
        failed = "; ".join(f"{r.key} ({r.fix})" for r in files.report.failed)
        raise FinesseError(f"the rendered prompt fails {failed}; nothing was written. "
                           "This is a finesse bug: please report it with the spec")
    write_plan(paths, files)
    for warning in files.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(summary(spec, files, paths, root))


def plan_name_for(name: str | None, spec_path: Path) -> str:
    chosen = name if name is not None else spec_path.stem
    if not _NAME.fullmatch(chosen):
        shown = chosen if chosen.isprintable() else repr(chosen)
        where = "--name" if name is not None else "the spec's file name"
        raise UsageError(f"{where} {shown!r} cannot name the plan files: use letters, digits, "
                         "'.', '_' and '-' (up to 80), e.g. --name csv-export")
    return chosen


def refuse_overwrite(paths: PlanPaths, root: Path) -> None:
    existing = [path for path in paths.all() if path.exists() or path.is_symlink()]
    if existing:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise UsageError(f"{shown_path(existing[0], root)} already exists{more}; pass --force "
                         "to overwrite, or --name to write a new plan")


def baseline_of(root: Path) -> Baseline:
    """HEAD of the project's repository, through GitPython."""
    import git

    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return Baseline(NOT_A_REPOSITORY, is_repository=False)
    try:
        return Baseline(repo.head.commit.hexsha, is_repository=True)
    except ValueError:  # an unborn branch: no commit yet
        return Baseline(NO_COMMIT_YET, is_repository=True)
    finally:
        repo.close()


def build(spec: Spec, root: Path, paths: PlanPaths) -> PlanFiles:
    phases = [PhaseSpec(type=phase.kind, files=phase.files) for phase in spec.phases]
    budget = estimate(measure(phases, root), spec.iteration_limit,
                      load_config(root).context_window)
    baseline = baseline_of(root)
    return render_files(spec, prompt_path=shown_path(paths.prompt, root),
                        promise_path=shown_path(paths.promise, root), budget=budget,
                        baseline_commit=baseline.commit, is_repository=baseline.is_repository)


def write_plan(paths: PlanPaths, files: PlanFiles) -> None:
    try:
        # The prompt last: a plan whose prompt exists is complete.
        write_atomic(paths.promise, files.promise)
        write_atomic(paths.plan, files.plan)
        write_atomic(paths.prompt, files.prompt)
    except OSError as err:
        raise UsageError(f"cannot write the plan files in {paths.prompt.parent} "
                         f"({err.strerror}); give a writable --out-dir") from None


def shown_path(path: Path, root: Path) -> str:
    """`path` relative to the project root when it is under it, else absolute."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def execute_command(spec: Spec, paths: PlanPaths, root: Path) -> str:
    return (f"/finesse:finesse-execute --prompt-file {shlex.quote(shown_path(paths.prompt, root))}"
            f" --completion-promise-file {shlex.quote(shown_path(paths.promise, root))}"
            f" --max-iterations {spec.iteration_limit}")


def summary(spec: Spec, files: PlanFiles, paths: PlanPaths, root: Path) -> str:
    total = len(files.report.attributes)
    budget = files.budget
    return "\n".join([
        "Wrote " + ", ".join(shown_path(path, root) for path in paths.all()) + ".",
        f"All {total} attributes pass (finesse validate).",
        f"Peak context {budget.peak_tokens:,} tokens, {budget.peak_percent:g}% of the window "
        f"({budget.pressure} pressure); cost for {budget.iterations} iterations: "
        f"{budget.cost_range}.",
        "Run the plan in Claude Code with:",
        f"  {execute_command(spec, paths, root)}",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    from finesse.cli.finesse import main as finesse_main

    return finesse_main(["new", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
