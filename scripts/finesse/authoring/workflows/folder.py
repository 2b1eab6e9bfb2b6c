"""A decomposed plan's folder on disk, `finesse-plans/<session>/`, checked as a whole.

The nested layout of seed 000, and nothing else: `execution-graph.md`, then
`wave-<N>/<task>/prompt.md`, `promise.txt` and `plan.md` per sub-workflow. Flat-format
files (`<name>.md`, `<name>-promise.txt`, `<name>-plan.md`) do not belong in it: the two
formats are never mixed.

`validate_workflow_folder` checks each sub-workflow's prompt (all ten attributes, its own
promise, prompt-only), the graph (`parse_execution_graph`, `check_graph`), and that the two
agree. `load_execution_graph` is the same check for a runner: the graph with each
sub-workflow's files, or a GraphError listing every problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from finesse.authoring.plan_files import (
    NESTED_PLAN,
    NESTED_PROMISE,
    NESTED_PROMPT,
    PROMISE_SUFFIX,
)
from finesse.authoring.prompt_check.validate import ValidationReport, validate_prompt
from finesse.authoring.workflows.graph import parse_execution_graph
from finesse.authoring.workflows.model import (
    GRAPH_FILE,
    ExecutionGraph,
    GraphError,
    check_graph,
)
from finesse.authoring.workflows.names import (
    looks_like_wave,
    plan_folder_problem,
    wave_folder,
    wave_number,
)
from finesse.errors import UsageError
from finesse.loop.grammar import check_promise_file
from finesse.support.files import is_regular_file, read_text, shown_name
from finesse.support.strict import StrictModel

NOT_PLAN_FILES = (GRAPH_FILE, "README.md")


@dataclass(frozen=True)
class WorkflowFiles:
    name: str
    wave: int  # from the wave-N folder's name
    prompt: str  # paths relative to the plan folder
    promise: str
    plan: str


@dataclass(frozen=True)
class WorkflowFolder:
    path: Path
    graph_text: str | None
    workflows: tuple[WorkflowFiles, ...]
    flat: tuple[str, ...]  # flat-format files found at the top: they do not belong
    problems: tuple[str, ...]  # files a sub-workflow lacks, a graph that cannot be read


def _misnamed_wave(name: str) -> str:
    number = int(name.removeprefix("wave-")[:9] or "0")
    right = (f"a wave's folder is {wave_folder(number)}/" if number >= 1
             else "waves are numbered from 1")
    return (f"{shown_name(name)}/: {right}, the name ralph run --graph looks for; rename it")


def flat_files(path: Path) -> list[str]:
    """The flat-format plan files at the top of `path` (`<name>.md`, `-promise.txt`)."""
    return sorted(p.name for p in path.iterdir() if is_regular_file(p)
                  and not p.name.startswith(".") and p.name not in NOT_PLAN_FILES
                  and (p.name.endswith(".md") or p.name.endswith(PROMISE_SUFFIX)))


def load_workflow_folder(path: Path) -> WorkflowFolder:
    """What a plan folder holds on disk; a UsageError when it is not a plan folder."""
    try:
        return _load(path)
    except OSError as err:
        raise UsageError(f"{shown_name(path)}: cannot read it ({err.strerror})") from None


def _load(path: Path) -> WorkflowFolder:
    if not path.is_dir():
        raise UsageError(f"{shown_name(path)}: not a directory")
    problems: list[str] = []
    found = []
    for wave_dir in sorted(p for p in path.iterdir() if p.is_dir()):
        number = wave_number(wave_dir.name)
        if number is None:
            if looks_like_wave(wave_dir.name):
                problems.append(_misnamed_wave(wave_dir.name))
            continue
        for task in sorted(p for p in wave_dir.iterdir() if p.is_dir()):
            rel = f"{wave_dir.name}/{task.name}"
            problems += [f"{shown_name(rel)}/ has no {need}"
                         for need in (NESTED_PROMPT, NESTED_PROMISE, NESTED_PLAN)
                         if not is_regular_file(task / need)]
            found.append(WorkflowFiles(task.name, number,
                                       f"{rel}/{NESTED_PROMPT}", f"{rel}/{NESTED_PROMISE}",
                                       f"{rel}/{NESTED_PLAN}"))
    graph_path = path / GRAPH_FILE
    if not found and not graph_path.exists():
        raise UsageError(f"{shown_name(path)}: no {GRAPH_FILE} and no wave-N/ folders; give a "
                         "prompt file or a decomposed plan's folder")
    graph_text = None
    if not graph_path.exists():
        problems.append(f"no {GRAPH_FILE}: write it with the overview, the wave tables, the "
                        "dependency rationale and the commands")
    else:
        try:
            graph_text = read_text(graph_path,
                                   subject=f"execution graph {shown_name(graph_path)}")
        except UsageError as err:
            problems.append(str(err))
    return WorkflowFolder(path, graph_text, tuple(found), tuple(flat_files(path)),
                          tuple(problems))


class WorkflowResult(StrictModel):
    name: str
    wave: int
    prompt: str  # relative to the plan folder
    report: ValidationReport


class FolderReport(StrictModel):
    path: str
    workflows: list[WorkflowResult]
    errors: list[str]

    @property
    def passed(self) -> bool:
        return not self.errors


def validate_workflow_folder(path: Path | str) -> FolderReport:
    """Check a plan folder: each sub-workflow's prompt, the graph, and how the two agree."""
    report, _ = _check(Path(path))
    return report


@dataclass(frozen=True)
class GraphWorkflow:
    """One sub-workflow, ready to run: its loop's files and cap, and what it waits for."""

    name: str
    wave: int
    type: str
    scope: str
    depends_on: tuple[str, ...]
    max_iterations: int
    prompt: Path
    promise: Path
    plan: Path
    command: str  # the /finesse:finesse-execute line of the graph


@dataclass(frozen=True)
class LoadedGraph:
    folder: Path
    task: str
    waves: tuple[tuple[GraphWorkflow, ...], ...]  # wave 1 first; a wave's loops run at once


def load_execution_graph(folder: Path) -> LoadedGraph:
    """The graph of a plan folder, checked as `finesse validate` checks it; a GraphError
    naming every problem when it is not fit to run."""
    report, graph = _check(folder)
    if graph is None or not report.passed:
        raise GraphError(f"{shown_name(folder)}: {_first_problems(folder, report.errors)}")
    waves = tuple(tuple(
        GraphWorkflow(name=w.name, wave=wave.number, type=w.type, scope=w.scope,
                      depends_on=w.depends_on, max_iterations=w.iterations,
                      prompt=folder / wave_folder(wave.number) / w.name / NESTED_PROMPT,
                      promise=folder / wave_folder(wave.number) / w.name / NESTED_PROMISE,
                      plan=folder / wave_folder(wave.number) / w.name / NESTED_PLAN,
                      command=graph.command(wave.number, w))
        for w in wave.workflows) for wave in graph.waves)
    return LoadedGraph(folder, graph.task, waves)


SHOWN_PROBLEMS = 3  # in a refusal's one line; `finesse validate` lists every one


def _first_problems(folder: Path, errors: list[str]) -> str:
    """The first few problems: the refusal is one line, and a folder can hold hundreds."""
    shown = "; ".join(errors[:SHOWN_PROBLEMS])
    more = len(errors) - SHOWN_PROBLEMS
    if more <= 0:
        return shown
    return (f"{shown}; and {more} more: `finesse validate {shown_name(folder)}` lists them "
            "all")


def _check(path: Path) -> tuple[FolderReport, ExecutionGraph | None]:
    folder = load_workflow_folder(path)
    errors = list(folder.problems)
    named = plan_folder_problem(path.resolve().name)
    if named is not None:
        errors.insert(0, named)
    if folder.flat:
        errors.append(
            f"holds flat-format plan files ({', '.join(map(shown_name, folder.flat[:3]))}) "
            "beside the nested layout: the two are never mixed; keep wave-N/<task>/ here and "
            "put a single plan's files in finesse-plans/ itself")
    graph = None
    if folder.graph_text is not None:
        try:
            parsed = parse_execution_graph(folder.graph_text)
        except GraphError as err:
            errors.append(f"{GRAPH_FILE}: {err}")
        else:
            graph = parsed.graph
            errors += [f"{GRAPH_FILE}: {p}" for p in (*parsed.problems, *check_graph(graph))]
            errors += _disagreements(graph, folder)
    # Each prompt is checked as `ralph run --graph` runs it: with the graph's cap for it.
    caps = {} if graph is None else {w.name: w.iterations for _, w in graph.entries()}
    results = []
    for files in folder.workflows:
        result = _validate_one(folder.path, files, errors, caps.get(files.name))
        if result is not None:
            results.append(result)
    return FolderReport(path=str(path), workflows=results, errors=errors), graph


def _disagreements(graph: ExecutionGraph, folder: WorkflowFolder) -> list[str]:
    errors = []
    tail = PurePosixPath(graph.plan_dir).parts
    if tail and folder.path.resolve().parts[-len(tail):] != tail:
        errors.append(f"{GRAPH_FILE}: its commands name the plan folder {graph.plan_dir}, but "
                      f"this folder is {shown_name(folder.path)}: they would not find the "
                      "prompts")
    listed = {workflow.name: number for number, workflow in graph.entries()}
    disk = {files.name: files for files in folder.workflows}
    for name, number in listed.items():
        files = disk.get(name)
        if files is None:
            errors.append(f"`{name}` is in wave {number} of {GRAPH_FILE}, but there is no "
                          f"{wave_folder(number)}/{name}/")
        elif files.wave != number:
            errors.append(f"`{name}` is in wave {number} of {GRAPH_FILE}, but its folder is "
                          f"{wave_folder(files.wave)}/{name}/")
    errors += [f"{shown_name(files.prompt)} is not in {GRAPH_FILE}: add it to a wave or remove "
               "it" for files in folder.workflows if files.name not in listed]
    return errors


def _validate_one(root: Path, files: WorkflowFiles, errors: list[str],
                  max_iterations: int | None) -> WorkflowResult | None:
    if not is_regular_file(root / files.prompt) or not is_regular_file(root / files.promise):
        return None  # already reported as missing
    try:
        prompt, promise_file = root / files.prompt, root / files.promise
        text = read_text(prompt, subject=f"prompt file {shown_name(prompt)}")
        promise = check_promise_file(
            read_text(promise_file, subject=f"promise file {shown_name(promise_file)}"),
            files.promise)
    except UsageError as err:
        errors.append(str(err))
        return None
    report = validate_prompt(text, promise=promise, max_iterations=max_iterations)
    if report.failed:
        keys = ", ".join(result.key for result in report.failed)
        errors.append(f"{shown_name(files.prompt)}: fails {len(report.failed)} of "
                      f"{len(report.attributes)} attributes: {keys}")
    if not report.prompt_only.passed:
        errors.append(f"{shown_name(files.prompt)}: not prompt-only: {report.prompt_only.fix}")
    return WorkflowResult(name=files.name, wave=files.wave, prompt=files.prompt, report=report)


def folder_summary(report: FolderReport) -> str:
    """Text for a person: a line per sub-workflow, then each error, then the verdict."""
    lines = [f"{'PASS' if w.report.passed else 'FAIL'} {shown_name(w.prompt)}"
             for w in report.workflows]
    lines += [f"error: {error}" for error in report.errors]
    lines.append(
        f"{shown_name(report.path)}: {len(report.workflows)} sub-workflows, all pass"
        if report.passed else
        f"{shown_name(report.path)}: {len(report.errors)} "
        f"{'problem' if len(report.errors) == 1 else 'problems'}; fix "
        f"{'it' if len(report.errors) == 1 else 'them'} and run "
        "`finesse validate` again (on a prompt file for its details)")
    return "\n".join(lines)
