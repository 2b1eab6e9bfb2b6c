"""A multi-workflow plan folder on disk, checked as a whole.

`finesse-plans/<session>/` holds `execution-graph.md` and the sub-workflows in one of two
layouts, never both:

- nested: `wave-<N>/<task>/prompt.md`, `promise.txt` and `plan.md`;
- flat: `<task>.md` and `<task>-promise.txt` (and optionally `<task>-plan.md`) at the top.
  At the top level every `*-promise.txt` and every `*.md` except `execution-graph.md`,
  `README.md`, `*-plan.md` and `*-retro.md` is taken for a flat sub-workflow.

`validate_workflow_folder` checks each sub-workflow's prompt (all ten attributes, its own
promise), the graph (`parse_execution_graph`, `check_graph`), and that the two agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from finesse.authoring.plan_files import (
    NESTED_PLAN,
    NESTED_PROMISE,
    NESTED_PROMPT,
    PLAN_SUFFIX,
    PROMISE_SUFFIX,
    RETRO_SUFFIX,
)
from finesse.authoring.prompt_check.validate import ValidationReport, validate_prompt
from finesse.authoring.workflows.graph import parse_execution_graph
from finesse.authoring.workflows.model import (
    GRAPH_FILE,
    ExecutionGraph,
    GraphError,
    Layout,
    check_graph,
)
from finesse.errors import UsageError
from finesse.loop.grammar import check_promise
from finesse.support.files import is_regular_file, read_text, shown_name
from finesse.support.strict import StrictModel

_WAVE_DIR = re.compile(r"wave-(\d+)")


@dataclass(frozen=True)
class WorkflowFiles:
    name: str
    wave: int | None  # from the nested folder's name; None when flat
    prompt: str  # paths relative to the plan folder
    promise: str


@dataclass(frozen=True)
class WorkflowFolder:
    path: Path
    graph_text: str | None
    nested: tuple[WorkflowFiles, ...]
    flat: tuple[WorkflowFiles, ...]
    problems: tuple[str, ...]  # files a sub-workflow lacks, a graph that cannot be read


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
    nested = []
    for wave_dir in sorted(p for p in path.iterdir() if p.is_dir()):
        match = _WAVE_DIR.fullmatch(wave_dir.name)
        if match is None:
            continue
        for task in sorted(p for p in wave_dir.iterdir() if p.is_dir()):
            rel = f"{wave_dir.name}/{task.name}"
            problems += [f"{shown_name(rel)}/ has no {need}"
                         for need in (NESTED_PROMPT, NESTED_PROMISE, NESTED_PLAN)
                         if not is_regular_file(task / need)]
            nested.append(WorkflowFiles(task.name, int(match.group(1)),
                                        f"{rel}/{NESTED_PROMPT}", f"{rel}/{NESTED_PROMISE}"))
    graph_path = path / GRAPH_FILE
    if not nested and not graph_path.exists():
        raise UsageError(f"{shown_name(path)}: no {GRAPH_FILE} and no wave-N/ folders; give a "
                         "prompt file or a multi-workflow plan folder")
    flat = _flat_workflows(path, problems)
    graph_text = None
    if not graph_path.exists():
        problems.append(f"no {GRAPH_FILE}: write it with the waves, tables and commands")
    else:
        try:
            graph_text = read_text(graph_path,
                                   subject=f"execution graph {shown_name(graph_path)}")
        except UsageError as err:
            problems.append(str(err))
    return WorkflowFolder(path, graph_text, tuple(nested), tuple(flat), tuple(problems))


def _flat_workflows(path: Path, problems: list[str]) -> list[WorkflowFiles]:
    files = {p.name for p in path.iterdir() if p.is_file() and not p.name.startswith(".")}
    names = {name.removesuffix(PROMISE_SUFFIX) for name in files
             if name.endswith(PROMISE_SUFFIX)}
    names |= {name.removesuffix(".md") for name in files if name.endswith(".md")
              and name not in (GRAPH_FILE, "README.md")
              and not name.endswith((PLAN_SUFFIX, RETRO_SUFFIX))}
    found = []
    for name in sorted(names):
        prompt, promise = f"{name}.md", f"{name}{PROMISE_SUFFIX}"
        problems += [f"{shown_name(have)} has no {shown_name(need)} beside it"
                     for have, need in ((prompt, promise), (promise, prompt))
                     if have in files and need not in files]
        found.append(WorkflowFiles(name, None, prompt, promise))
    return found


class WorkflowResult(StrictModel):
    name: str
    wave: int | None
    prompt: str  # relative to the plan folder
    report: ValidationReport


class FolderReport(StrictModel):
    path: str
    layout: Layout | None  # None when the folder mixes both
    workflows: list[WorkflowResult]
    errors: list[str]

    @property
    def passed(self) -> bool:
        return not self.errors


def validate_workflow_folder(path: Path | str) -> FolderReport:
    """Check a plan folder: each sub-workflow's prompt, the graph, and how the two agree."""
    folder = load_workflow_folder(Path(path))
    errors = list(folder.problems)
    layout: Layout | None = "nested" if folder.nested else "flat"
    if folder.nested and folder.flat:
        layout = None
        errors.append(
            f"mixes the flat format ({', '.join(w.prompt for w in folder.flat[:3])}) and the "
            f"nested format ({', '.join(w.prompt for w in folder.nested[:3])}): keep one, "
            "wave-N/<task>/prompt.md or <task>.md with <task>-promise.txt")
    on_disk = [*folder.nested, *folder.flat]
    if folder.graph_text is not None:
        try:
            parsed = parse_execution_graph(folder.graph_text)
        except GraphError as err:
            errors.append(f"{GRAPH_FILE}: {err}")
        else:
            errors += [f"{GRAPH_FILE}: {p}" for p in (*parsed.problems, *check_graph(parsed.graph))]
            errors += _disagreements(parsed.graph, folder, layout, on_disk)
    results = []
    for files in on_disk:
        result = _validate_one(folder.path, files, errors)
        if result is not None:
            results.append(result)
    return FolderReport(path=str(path), layout=layout, workflows=results, errors=errors)


def _disagreements(graph: ExecutionGraph, folder: WorkflowFolder, layout: Layout | None,
                   on_disk: list[WorkflowFiles]) -> list[str]:
    errors = []
    if layout is not None and graph.layout != layout:
        errors.append(f"{GRAPH_FILE} says the layout is {graph.layout}, but the sub-workflows "
                      f"on disk are {layout}")
    tail = PurePosixPath(graph.plan_dir).parts
    if tail and folder.path.resolve().parts[-len(tail):] != tail:
        errors.append(f"{GRAPH_FILE}: the plan folder is given as {graph.plan_dir}, but this "
                      f"folder is {shown_name(folder.path)}: its commands would not find the "
                      "prompts")
    listed = {workflow.name: number for number, workflow in graph.entries()}
    disk = {files.name: files for files in on_disk}
    for name, number in listed.items():
        files = disk.get(name)
        if files is None:
            place = f"wave-{number}/{name}/" if graph.layout == "nested" else f"{name}.md"
            errors.append(f"`{name}` is in wave {number} of {GRAPH_FILE}, but there is no "
                          f"{place}")
        elif files.wave is not None and files.wave != number:
            errors.append(f"`{name}` is in wave {number} of {GRAPH_FILE}, but its folder is "
                          f"wave-{files.wave}/{name}/")
    errors += [f"{shown_name(files.prompt)} is not in {GRAPH_FILE}: add it to a wave or remove "
               "it" for files in on_disk if files.name not in listed]
    return errors


def _validate_one(root: Path, files: WorkflowFiles, errors: list[str]) -> WorkflowResult | None:
    if not is_regular_file(root / files.prompt) or not is_regular_file(root / files.promise):
        return None  # already reported as missing
    try:
        prompt, promise_file = root / files.prompt, root / files.promise
        text = read_text(prompt, subject=f"prompt file {shown_name(prompt)}")
        promise = check_promise(
            read_text(promise_file, subject=f"promise file {shown_name(promise_file)}"),
            files.promise)
    except UsageError as err:
        errors.append(str(err))
        return None
    report = validate_prompt(text, promise=promise)
    if not report.passed:
        keys = ", ".join(result.key for result in report.failed)
        errors.append(f"{shown_name(files.prompt)}: fails {len(report.failed)} of "
                      f"{len(report.attributes)} attributes: {keys}")
    return WorkflowResult(name=files.name, wave=files.wave, prompt=files.prompt, report=report)


def folder_summary(report: FolderReport) -> str:
    """Text for a person: a line per sub-workflow, then each error, then the verdict."""
    lines = [f"{'PASS' if w.report.passed else 'FAIL'} {shown_name(w.prompt)}"
             for w in report.workflows]
    lines += [f"error: {error}" for error in report.errors]
    lines.append(
        f"{shown_name(report.path)}: {len(report.workflows)} sub-workflows, all pass"
        if report.passed else
        f"{shown_name(report.path)}: {len(report.errors)} problems; fix them and run "
        "`finesse validate` again (on a prompt file for its details)")
    return "\n".join(lines)
