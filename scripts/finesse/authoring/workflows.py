"""Multi-workflow plans: one task split into sub-workflows that run as loops, wave by wave.

A plan folder (`finesse-plans/<session>/`) holds `execution-graph.md` and the sub-workflows
in one of two layouts, never both:

- nested: `wave-<N>/<task>/prompt.md`, `promise.txt` and `plan.md`;
- flat: `<task>.md` and `<task>-promise.txt` (and optionally `<task>-plan.md`) at the top.
  At the top level every `*-promise.txt` and every `*.md` except `execution-graph.md`,
  `README.md`, `*-plan.md` and `*-retro.md` is taken for a flat sub-workflow.

`execution-graph.md`, as `render_execution_graph` writes it and `parse_execution_graph`
reads it (sections are `#`/`##` headings, matched without regard to case):

    ## Overview         the original task as a block quote (`> ` lines), then the fields
                        `- **Plan folder**: <dir>` (as the commands name it, from the project
                        root), `- **Layout**: nested|flat`, `- **Sub-workflows**: N`,
                        `- **Waves**: N`, `- **Total estimated iterations**: N`
    ## Wave <N>         one table: | Name | Type | Est. iterations | Scope | Dependencies |
                        (type: feature, bugfix, refactor, testing, performance or research;
                        dependencies: names separated by commas, or `none`; `\\|` escapes a pipe)
    ## Dependency rationale    free text, without `#` or `##` headings
    ## Commands         `### Wave <N>`, then the `/finesse:finesse-execute --prompt-file ...
                        --completion-promise-file ... --max-iterations N` line of each task

The counts and the commands repeat what the tables say; where they disagree it is a problem
of the plan, reported, not a parse failure. Sections with other titles are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from finesse.authoring.prompt_check.validate import ValidationReport, read_text, validate_prompt
from finesse.errors import FinesseError, UsageError
from finesse.loop.grammar import check_promise

TaskType = Literal["feature", "bugfix", "refactor", "testing", "performance", "research"]
Layout = Literal["nested", "flat"]
GRAPH_FILE = "execution-graph.md"
MAX_ITERATIONS = 25  # attribute 9's cap: each sub-workflow is a loop of its own
COLUMNS = ("Name", "Type", "Est. iterations", "Scope", "Dependencies")
EXECUTE = "/finesse:finesse-execute"

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_SECTION = re.compile(r"^ {0,3}(#{1,3})\s+(.*?)\s*#*\s*$")
_WAVE_TITLE = re.compile(r"wave\s+(\d+)\b", re.IGNORECASE)
_WAVE_DIR = re.compile(r"wave-(\d+)")
_FIELD = re.compile(r"^\s*[-*+]\s+[*_]*([^:*_]+?)[*_]*\s*:[*_]*\s*(.*?)\s*$")
_CELL_BREAK = re.compile(r"(?<!\\)\|")
_NO_DEPENDENCIES = {"", "none", "-", "—", "n/a"}


class GraphError(FinesseError):
    """execution-graph.md cannot be read as a graph; the message names the line."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SubWorkflow(_Model):
    name: str = Field(pattern=rf"^{_NAME}$")
    type: TaskType
    iterations: int = Field(ge=1, le=MAX_ITERATIONS)
    scope: str = Field(min_length=1, pattern=r"^[^\n]*$")
    depends_on: tuple[str, ...] = ()


class Wave(_Model):
    number: int = Field(ge=1)
    workflows: tuple[SubWorkflow, ...] = Field(min_length=1)


class ExecutionGraph(_Model):
    task: str = Field(min_length=1)
    # Relative to the project root, where the commands run; no blanks or quotes to escape.
    plan_dir: str = Field(pattern=r"^[^/\s'\"\\`][^\s'\"\\`]*$")
    layout: Layout = "nested"
    waves: tuple[Wave, ...] = Field(min_length=1)
    rationale: str = Field(min_length=1)

    @field_validator("task", "rationale", mode="before")
    @classmethod
    def _strip(cls, value: object) -> object:
        return value.strip() if isinstance(value, str) else value

    @field_validator("rationale")
    @classmethod
    def _no_sections(cls, value: str) -> str:
        if any((m := _SECTION.match(line)) and len(m.group(1)) <= 2
               for line in value.splitlines()):
            raise ValueError("the rationale may not hold `#` or `##` headings")
        return value

    @model_validator(mode="after")
    def _waves_in_order(self) -> ExecutionGraph:
        numbers = [wave.number for wave in self.waves]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(f"waves must be numbered 1, 2, 3... in order, not {numbers}")
        return self

    def entries(self) -> Iterator[tuple[int, SubWorkflow]]:
        for wave in self.waves:
            for workflow in wave.workflows:
                yield wave.number, workflow

    @property
    def total_iterations(self) -> int:
        return sum(workflow.iterations for _, workflow in self.entries())

    def files(self, wave: int, name: str) -> tuple[str, str]:
        """The prompt and promise files of a sub-workflow, as the commands name them."""
        base = PurePosixPath(self.plan_dir)
        if self.layout == "nested":
            return str(base / f"wave-{wave}" / name / "prompt.md"), str(
                base / f"wave-{wave}" / name / "promise.txt")
        return str(base / f"{name}.md"), str(base / f"{name}-promise.txt")

    def command(self, wave: int, workflow: SubWorkflow) -> str:
        prompt, promise = self.files(wave, workflow.name)
        return (f"{EXECUTE} --prompt-file {prompt} --completion-promise-file {promise} "
                f"--max-iterations {workflow.iterations}")


@dataclass(frozen=True)
class ParsedGraph:
    graph: ExecutionGraph
    problems: tuple[str, ...]  # counts and commands that disagree with the wave tables


# ---------------------------------------------------------------- render and parse


def render_execution_graph(graph: ExecutionGraph) -> str:
    quoted = "\n".join(f"> {line}" if line else ">" for line in graph.task.splitlines())
    count = sum(1 for _ in graph.entries())
    out = ["# Execution graph", "", "## Overview", "", quoted, "",
           f"- **Plan folder**: {graph.plan_dir}", f"- **Layout**: {graph.layout}",
           f"- **Sub-workflows**: {count}", f"- **Waves**: {len(graph.waves)}",
           f"- **Total estimated iterations**: {graph.total_iterations}"]
    for wave in graph.waves:
        out += ["", f"## Wave {wave.number}", "", _row(COLUMNS), _row(("---",) * 5)]
        out += [_row((w.name, w.type, str(w.iterations), w.scope, ", ".join(w.depends_on)
                      or "none")) for w in wave.workflows]
    out += ["", "## Dependency rationale", "", graph.rationale, "", "## Commands", "",
            "Run the waves in order: start a wave when every loop of the wave before it has "
            "output its promise."]
    for wave in graph.waves:
        out += ["", f"### Wave {wave.number}", "", "```"]
        out += [graph.command(wave.number, workflow) for workflow in wave.workflows]
        out += ["```"]
    return "\n".join(out) + "\n"


def _row(cells: tuple[str, ...]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


@dataclass
class _Section:
    level: int
    title: str
    line: int
    body: list[tuple[int, str]]


def _sections(lines: list[tuple[int, str]], deepest: int) -> list[_Section]:
    found: list[_Section] = []
    for number, text in lines:
        heading = _SECTION.match(text)
        if heading and len(heading.group(1)) <= deepest:
            found.append(_Section(len(heading.group(1)), heading.group(2), number, []))
        elif found:
            found[-1].body.append((number, text))
    return found


def parse_execution_graph(text: str) -> ParsedGraph:
    """The graph in an execution-graph.md; GraphError when it cannot be read as one."""
    sections = _sections(list(enumerate(text.splitlines(), 1)), deepest=2)
    named = {s.title.lower(): s for s in sections if s.level == 2}
    overview = named.get("overview")
    if overview is None:
        raise GraphError("no `## Overview` section: start with the overview of the plan")
    task = "\n".join(_unquote(line) for _, line in overview.body if line.lstrip().startswith(">"))
    if not task.strip():
        raise GraphError(f"line {overview.line}: the overview has no task: quote the original "
                         "task in `> ` lines")
    fields = {m.group(1).strip().lower(): (n, m.group(2).strip("` ")) for n, line in overview.body
              if (m := _FIELD.match(line))}
    waves = [_parse_wave(s, number) for s in sections
             if s.level == 2 and (number := _wave_number(s)) is not None]
    if not waves:
        raise GraphError("no `## Wave 1` section with the table of its sub-workflows")
    rationale = named.get("dependency rationale")
    if rationale is None:
        raise GraphError("no `## Dependency rationale` section: say why each wave waits for "
                         "the one before it (or that none does)")
    try:
        graph = ExecutionGraph.model_validate({
            "task": task, "plan_dir": _required(fields, "plan folder", overview.line),
            "layout": _required(fields, "layout", overview.line).lower(), "waves": waves,
            "rationale": "\n".join(line for _, line in rationale.body)})
    except ValidationError as err:
        raise GraphError(_readable(err)) from None
    problems = _count_problems(graph, fields)
    commands = named.get("commands")
    if commands is None:
        problems.append("no `## Commands` section: give each wave's /finesse:finesse-execute "
                        "commands")
    else:
        problems += _command_problems(graph, commands)
    return ParsedGraph(graph, tuple(problems))


def _unquote(line: str) -> str:
    content = line.lstrip()[1:]
    return content[1:] if content.startswith(" ") else content


def _required(fields: dict[str, tuple[int, str]], key: str, line: int) -> str:
    if key not in fields:
        raise GraphError(f"line {line}: the overview has no `- **{key.capitalize()}**: ...` "
                         "field")
    return fields[key][1]


def _readable(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def _parse_wave(section: _Section, number: int) -> Wave:
    rows = [(n, _cells(line)) for n, line in section.body if line.lstrip().startswith("|")]
    if len(rows) < 3:
        raise GraphError(f"line {section.line}: wave {number} needs a table with a header, a "
                         f"separator and a row per sub-workflow: {_row(COLUMNS)}")
    header = [" ".join(cell.lower().replace(".", "").split()) for cell in rows[0][1]]
    if header != [c.lower().replace(".", "") for c in COLUMNS]:
        raise GraphError(f"line {rows[0][0]}: the columns must be {_row(COLUMNS)}")
    if not all(re.fullmatch(r":?-+:?", cell) for cell in rows[1][1]):
        raise GraphError(f"line {rows[1][0]}: the header needs a separator row under it: "
                         f"{_row(('---',) * len(COLUMNS))}")
    workflows = []
    for line, cells in rows[2:]:
        if len(cells) != len(COLUMNS):
            raise GraphError(f"line {line}: expected {len(COLUMNS)} cells, found {len(cells)}")
        name, kind, iterations, scope, depends = cells
        if not re.fullmatch(r"[0-9]+", iterations):
            raise GraphError(f"line {line}: Est. iterations must be a whole number from 1 to "
                             f"{MAX_ITERATIONS}, not {iterations!r}")
        try:
            workflows.append(SubWorkflow.model_validate({
                "name": name.strip("`"), "type": kind.lower(), "iterations": int(iterations),
                "scope": scope, "depends_on": _dependencies(depends)}))
        except ValidationError as err:
            raise GraphError(f"line {line}: {_readable(err)}") from None
    return Wave(number=number, workflows=tuple(workflows))


def _cells(line: str) -> list[str]:
    parts = _CELL_BREAK.split(line.strip())
    parts = parts[1:-1] if line.strip().endswith("|") else parts[1:]
    return [part.strip().replace("\\|", "|") for part in parts]


def _dependencies(cell: str) -> tuple[str, ...]:
    if cell.strip().lower() in _NO_DEPENDENCIES:
        return ()
    return tuple(name.strip(" `") for name in cell.split(",") if name.strip(" `"))


def _count_problems(graph: ExecutionGraph, fields: dict[str, tuple[int, str]]) -> list[str]:
    actual = {"sub-workflows": sum(1 for _ in graph.entries()), "waves": len(graph.waves),
              "total estimated iterations": graph.total_iterations}
    problems = []
    for key, value in actual.items():
        line, stated = fields.get(key, (0, ""))
        if stated != str(value):
            said = f"line {line}: the overview says {key} {stated}" if line else \
                f"the overview does not give {key}"
            problems.append(f"{said}; the wave tables make it {value}")
    return problems


def _command_problems(graph: ExecutionGraph, section: _Section) -> list[str]:
    problems = []
    by_wave = {_wave_number(s): s for s in _sections(section.body, deepest=3) if s.level == 3}
    for wave in graph.waves:
        block = by_wave.get(wave.number)
        if block is None:
            problems.append(f"Commands: no `### Wave {wave.number}` with its commands")
            continue
        expected = {w.name: graph.command(wave.number, w) for w in wave.workflows}
        prompts = {graph.files(wave.number, name)[0]: name for name in expected}
        seen = set()
        for line, text in block.body:
            if not text.strip().startswith("/"):
                continue
            words = text.split()
            after = words.index("--prompt-file") + 1 if "--prompt-file" in words else 0
            name = prompts.get(words[after]) if 0 < after < len(words) else None
            if name is None:
                problems.append(f"line {line}: this command runs no sub-workflow of wave "
                                f"{wave.number}")
            elif " ".join(words) != expected[name]:
                problems.append(f"line {line}: the command for `{name}` should read: "
                                f"{expected[name]}")
            seen.add(name)
        problems += [f"Commands, wave {wave.number}: no command for `{name}`: {command}"
                     for name, command in expected.items() if name not in seen]
    problems += [f"Commands: `### Wave {number}` is not a wave of the graph"
                 for number in by_wave if number is not None and number > len(graph.waves)]
    return problems


def _wave_number(section: _Section) -> int | None:
    match = _WAVE_TITLE.match(section.title)
    return int(match.group(1)) if match else None


def check_graph(graph: ExecutionGraph) -> list[str]:
    """Names listed twice, and dependencies that are not on an earlier wave."""
    problems: list[str] = []
    waves: dict[str, int] = {}
    for number, workflow in graph.entries():
        if workflow.name in waves:
            problems.append(f"`{workflow.name}` is listed twice (waves {waves[workflow.name]} "
                            f"and {number}): give each sub-workflow its own name")
        waves.setdefault(workflow.name, number)
    for number, workflow in graph.entries():
        for needed in workflow.depends_on:
            where = f"`{workflow.name}` (wave {number}) depends on `{needed}`"
            if needed not in waves:
                problems.append(f"{where}, which is not in the graph")
            elif waves[needed] == number:
                problems.append(f"{where} in the same wave: move `{workflow.name}` to a "
                                "later wave")
            elif waves[needed] > number:
                problems.append(f"{where} in wave {waves[needed]}, a later wave: a wave may "
                                "only depend on earlier waves")
    return problems


# ---------------------------------------------------------------- the folder


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
        raise UsageError(f"{path}: cannot read it ({err.strerror})") from None


def _load(path: Path) -> WorkflowFolder:
    if not path.is_dir():
        raise UsageError(f"{path}: not a directory")
    problems: list[str] = []
    nested = []
    for wave_dir in sorted(p for p in path.iterdir() if p.is_dir()):
        match = _WAVE_DIR.fullmatch(wave_dir.name)
        if match is None:
            continue
        for task in sorted(p for p in wave_dir.iterdir() if p.is_dir()):
            rel = f"{wave_dir.name}/{task.name}"
            problems += [f"{rel}/ has no {need}" for need in ("prompt.md", "promise.txt",
                                                               "plan.md")
                         if not (task / need).is_file()]
            nested.append(WorkflowFiles(task.name, int(match.group(1)), f"{rel}/prompt.md",
                                        f"{rel}/promise.txt"))
    graph_path = path / GRAPH_FILE
    if not nested and not graph_path.exists():
        raise UsageError(f"{path}: no {GRAPH_FILE} and no wave-N/ folders; give a prompt file "
                         "or a multi-workflow plan folder")
    flat = _flat_workflows(path, problems)
    graph_text = None
    if not graph_path.exists():
        problems.append(f"no {GRAPH_FILE}: write it with the waves, tables and commands")
    else:
        try:
            graph_text = read_text(graph_path, "execution graph")
        except UsageError as err:
            problems.append(str(err))
    return WorkflowFolder(path, graph_text, tuple(nested), tuple(flat), tuple(problems))


def _flat_workflows(path: Path, problems: list[str]) -> list[WorkflowFiles]:
    files = {p.name for p in path.iterdir() if p.is_file() and not p.name.startswith(".")}
    names = {name.removesuffix("-promise.txt") for name in files if name.endswith("-promise.txt")}
    names |= {name.removesuffix(".md") for name in files if name.endswith(".md")
              and name not in (GRAPH_FILE, "README.md")
              and not name.endswith(("-plan.md", "-retro.md"))}
    found = []
    for name in sorted(names):
        prompt, promise = f"{name}.md", f"{name}-promise.txt"
        problems += [f"{have} has no {need} beside it" for have, need in
                     ((prompt, promise), (promise, prompt)) if have in files and need not in files]
        found.append(WorkflowFiles(name, None, prompt, promise))
    return found


class WorkflowResult(_Model):
    name: str
    wave: int | None
    prompt: str  # relative to the plan folder
    report: ValidationReport


class FolderReport(_Model):
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
                      f"folder is {folder.path}: its commands would not find the prompts")
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
    errors += [f"{files.prompt} is not in {GRAPH_FILE}: add it to a wave or remove it"
               for files in on_disk if files.name not in listed]
    return errors


def _validate_one(root: Path, files: WorkflowFiles, errors: list[str]) -> WorkflowResult | None:
    if not (root / files.prompt).is_file() or not (root / files.promise).is_file():
        return None  # already reported as missing
    try:
        text = read_text(root / files.prompt, "prompt file")
        promise = check_promise(read_text(root / files.promise, "promise file"), files.promise)
    except UsageError as err:
        errors.append(str(err))
        return None
    report = validate_prompt(text, promise=promise)
    if not report.passed:
        keys = ", ".join(result.key for result in report.failed)
        errors.append(f"{files.prompt}: fails {len(report.failed)} of {len(report.attributes)} "
                      f"attributes: {keys}")
    return WorkflowResult(name=files.name, wave=files.wave, prompt=files.prompt, report=report)


def folder_summary(report: FolderReport) -> str:
    """Text for a person: a line per sub-workflow, then each error, then the verdict."""
    lines = [f"{'PASS' if w.report.passed else 'FAIL'} {w.prompt}" for w in report.workflows]
    lines += [f"error: {error}" for error in report.errors]
    lines.append(
        f"{report.path}: {len(report.workflows)} sub-workflows, all pass" if report.passed
        else f"{report.path}: {len(report.errors)} problems; fix them and run `finesse validate` "
             "again (on a prompt file for its details)")
    return "\n".join(lines)
