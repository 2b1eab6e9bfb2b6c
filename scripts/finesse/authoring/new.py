"""`finesse new`'s work: a spec becomes a plan's files on disk; a decomposed task's spec
becomes `finesse-plans/<session>/`: `execution-graph.md` and the nested layout.

The plan's name, the project's baseline commit, the budget measured on the project's files,
the rendered texts (`finesse.authoring.render`, `finesse.authoring.plan`), the refusal to
overwrite, the writes, and the summary with the command that runs the plan. The CLI module
only parses and prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from finesse.authoring.budget import PhaseSpec, estimate, measure
from finesse.authoring.cache.store import load_config
from finesse.authoring.plan import NOT_A_REPOSITORY, RenderedPlan, render_files
from finesse.authoring.plan_files import PlanFiles
from finesse.authoring.spec import Spec, load_spec_data, parse_spec
from finesse.authoring.workflows.decompose import DecomposedSpec
from finesse.authoring.workflows.folder import flat_files
from finesse.authoring.workflows.graph import render_execution_graph
from finesse.authoring.workflows.model import (
    GRAPH_FILE,
    KEBAB,
    ExecutionGraph,
    execute_line,
    wave_heading,
)
from finesse.authoring.workflows.names import looks_like_wave, wave_folder
from finesse.errors import FinesseError, UsageError
from finesse.support.files import shown_name, shown_path
from finesse.support.git import open_repository
from finesse.support.strict import problems
from finesse.support.writes import write_atomic

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
    return execute_line(shown_path(files.prompt, root), shown_path(files.promise, root),
                        max_iterations)


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


# ---- a decomposed task: the nested layout --------------------------------------------------


def load_plan_spec(path: Path) -> Spec | DecomposedSpec:
    """A spec file: one plan, or a decomposed task when it lists `workflows`."""
    data = load_spec_data(path)
    decomposed = isinstance(data, dict) and "workflows" in data
    try:
        return DecomposedSpec.model_validate(data) if decomposed else parse_spec(data)
    except ValidationError as err:
        raise UsageError(f"the spec {shown_name(path)}: invalid spec: "
                         f"{problems(err, most=3)}") from None
    except UsageError as err:
        raise UsageError(f"the spec {shown_name(path)}: {err}") from None


def refuse_mixing(out_dir: Path, root: Path) -> None:
    """A single plan's flat files never go in a decomposed plan's folder."""
    if (out_dir / GRAPH_FILE).exists():
        raise UsageError(f"{shown_path(out_dir, root)} holds a decomposed plan "
                         f"({GRAPH_FILE}): the flat and nested formats are never mixed; "
                         "write this plan to another --out-dir")


@dataclass(frozen=True)
class RenderedSession:
    folder: Path
    graph: ExecutionGraph
    graph_text: str
    workflows: tuple[tuple[PlanFiles, RenderedPlan], ...]  # in wave order


def session_folder(spec: DecomposedSpec, out_dir: Path, name: str | None) -> Path:
    session = name if name is not None else spec.session
    if not re.fullmatch(KEBAB, session):
        raise UsageError(f"--name {shown_name(session)!r} cannot name a session folder: use "
                         "kebab-case, e.g. --name build-todo-api-with-auth")
    return out_dir / session


def refuse_session_overwrite(folder: Path, root: Path, *, force: bool) -> None:
    """Never mix the formats; never overwrite a decomposed plan without --force."""
    if not folder.exists():
        return
    if not folder.is_dir():
        raise UsageError(f"{shown_path(folder, root)} is a file; give the session another "
                         "--name")
    flat = flat_files(folder)
    if flat:
        raise UsageError(f"{shown_path(folder, root)} already holds flat-format plan files "
                         f"({', '.join(map(shown_name, flat[:3]))}): the flat and nested "
                         "formats are never mixed; give the session another --name")
    taken = (folder / GRAPH_FILE).exists() or any(
        looks_like_wave(p.name) for p in folder.iterdir() if p.is_dir())
    if taken and not force:
        raise UsageError(f"{shown_path(folder, root)} already holds a decomposed plan; pass "
                         "--force to overwrite, or --name to write a new session")


def session_plan_dir(folder: Path, root: Path) -> str:
    """The session folder as the graph's commands name it: relative to the project root,
    with nothing to quote. A UsageError in one line for an --out-dir that cannot be so."""
    try:
        relative = folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise UsageError(f"--out-dir {shown_name(str(folder.parent))} is outside the project "
                         f"{shown_name(str(root))}: a decomposed plan's commands name its "
                         "folder from the project root; give a folder inside it") from None
    if any(char.isspace() or char in "'\"\\`" for char in relative):
        raise UsageError(f"--out-dir {shown_name(str(folder.parent.relative_to(root)))!r}: a "
                         "decomposed plan's folder is named in its commands unquoted; use no "
                         "spaces or quotes (e.g. --out-dir finesse-plans)")
    return relative


def build_decomposed(spec: DecomposedSpec, root: Path, folder: Path) -> RenderedSession:
    graph = spec.graph(session_plan_dir(folder, root))
    numbers = spec.wave_numbers()
    rendered = []
    for wave in spec.waves():
        for workflow in wave:
            files = PlanFiles.nested(folder / wave_folder(numbers[workflow.name]) / workflow.name)
            rendered.append((files, build(workflow, root, files)))
    return RenderedSession(folder, graph, render_execution_graph(graph, folder.name),
                           tuple(rendered))


def refuse_failing_session(session: RenderedSession) -> None:
    for files, rendered in session.workflows:
        try:
            refuse_failing(rendered)
        except FinesseError as err:
            raise FinesseError(f"{files.name}: {err}") from None


def write_session(session: RenderedSession) -> None:
    for files, rendered in session.workflows:
        write_plan(files, rendered)
    try:  # the graph last: a session whose graph exists is complete
        write_atomic(session.folder / GRAPH_FILE, session.graph_text)
    except OSError as err:
        raise UsageError(f"cannot write {shown_name(session.folder / GRAPH_FILE)} "
                         f"({err.strerror}); give a writable --out-dir") from None


def session_summary(session: RenderedSession, root: Path) -> str:
    graph = session.graph
    folder = shown_path(session.folder, root)
    lines = [
        f"Wrote {folder}/{GRAPH_FILE} and {len(session.workflows)} sub-workflows in "
        f"{len(graph.waves)} waves (prompt.md, promise.txt and plan.md each).",
        f"All 10 attributes pass in every sub-workflow prompt (finesse validate {folder}/).",
        f"Total estimated iterations: {graph.total_iterations}.",
        "Run the waves in Claude Code, in order:",
    ]
    for wave in graph.waves:
        lines.append(f"## {wave_heading(wave.number)}")
        lines += [f"  {graph.command(wave.number, w)}" for w in wave.workflows]
    return "\n".join(lines)
