"""`finesse new`'s work: a spec becomes a plan's files on disk.

The plan's name, the project's baseline commit, the budget measured on the project's files,
the rendered texts (`finesse.authoring.render`), the refusal to overwrite, the writes, and
the summary with the command that runs the plan. The CLI module only parses and prints.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from finesse.authoring.budget import PhaseSpec, estimate, measure
from finesse.authoring.cache import load_config
from finesse.authoring.plan_files import PlanFiles
from finesse.authoring.render import NOT_A_REPOSITORY, RenderedPlan, render_files
from finesse.authoring.spec import Spec
from finesse.errors import FinesseError, UsageError
from finesse.support.files import shown_name, shown_path, write_atomic
from finesse.support.git import open_repository

DEFAULT_OUT_DIR = "finesse-plans"
NO_COMMIT_YET = "none (no commit yet)"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")


@dataclass(frozen=True)
class Baseline:
    commit: str  # a hex sha, or why there is none
    is_repository: bool


def plan_name_for(name: str | None, spec_path: Path) -> str:
    """`--name`, else the spec file's name without its extension; a UsageError when it
    cannot name files."""
    chosen = name if name is not None else spec_path.stem
    if not _NAME.fullmatch(chosen):
        where = "--name" if name is not None else "the spec's file name"
        raise UsageError(f"{where} {shown_name(chosen)!r} cannot name the plan files: use "
                         "letters, digits, '.', '_' and '-' (up to 80), e.g. --name csv-export")
    return chosen


def refuse_overwrite(files: PlanFiles, root: Path) -> None:
    existing = [path for path in files.all() if path.exists() or path.is_symlink()]
    if existing:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise UsageError(f"{shown_path(existing[0], root)} already exists{more}; pass --force "
                         "to overwrite, or --name to write a new plan")


def baseline_of(root: Path) -> Baseline:
    """HEAD of the project's repository: the commit `finesse retro` compares against."""
    with open_repository(root) as repository:
        if repository is None:
            return Baseline(NOT_A_REPOSITORY, is_repository=False)
        return Baseline(repository.head() or NO_COMMIT_YET, is_repository=True)


def build(spec: Spec, root: Path, files: PlanFiles) -> RenderedPlan:
    """The plan's texts, with the budget measured on the project's files."""
    phases = [PhaseSpec(type=phase.kind, files=phase.files) for phase in spec.phases]
    budget = estimate(measure(phases, root), spec.iteration_limit,
                      load_config(root).context_window)
    baseline = baseline_of(root)
    return render_files(spec, prompt_path=shown_path(files.prompt, root),
                        promise_path=shown_path(files.promise, root), budget=budget,
                        baseline_commit=baseline.commit, is_repository=baseline.is_repository)


def refuse_failing(rendered: RenderedPlan) -> None:
    """A rendered prompt that fails the checker is a bug of finesse, never written."""
    if not rendered.report.passed:
        failed = "; ".join(f"{r.key} ({r.fix})" for r in rendered.report.failed)
        raise FinesseError(f"the rendered prompt fails {failed}; nothing was written. "
                           "This is a finesse bug: please report it with the spec")


def write_plan(files: PlanFiles, rendered: RenderedPlan) -> None:
    try:
        # The prompt last: a plan whose prompt exists is complete.
        write_atomic(files.promise, rendered.promise)
        write_atomic(files.plan, rendered.plan)
        write_atomic(files.prompt, rendered.prompt)
    except OSError as err:
        raise UsageError(f"cannot write the plan files in {shown_name(files.prompt.parent)} "
                         f"({err.strerror}); give a writable --out-dir") from None


def execute_command(files: PlanFiles, max_iterations: int, root: Path) -> str:
    """The line that runs the plan in Claude Code."""
    return (f"/finesse:finesse-execute --prompt-file {shlex.quote(shown_path(files.prompt, root))}"
            f" --completion-promise-file {shlex.quote(shown_path(files.promise, root))}"
            f" --max-iterations {max_iterations}")


def summary(spec: Spec, rendered: RenderedPlan, files: PlanFiles, root: Path) -> str:
    total = len(rendered.report.attributes)
    budget = rendered.budget
    return "\n".join([
        "Wrote " + ", ".join(shown_path(path, root) for path in files.all()) + ".",
        f"All {total} attributes pass (finesse validate).",
        f"Peak context {budget.peak_tokens:,} tokens, {budget.peak_percent:g}% of the window "
        f"({budget.pressure} pressure); cost for {budget.iterations} iterations: "
        f"{budget.cost_range}.",
        "Run the plan in Claude Code with:",
        f"  {execute_command(files, spec.iteration_limit, root)}",
    ])
