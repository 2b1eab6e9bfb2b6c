"""`execution-graph.md`, as `render_execution_graph` writes it and `parse_execution_graph`
reads it (sections are `#`/`##` headings outside code, matched without regard to case):

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
from dataclasses import dataclass

from pydantic import ValidationError

from finesse.authoring.workflows.model import (
    MAX_ITERATIONS,
    ExecutionGraph,
    GraphError,
    ParsedGraph,
    SubWorkflow,
    Wave,
)
from finesse.support.markdown import Fences, heading
from finesse.support.strict import problems as validation_problems

COLUMNS = ("Name", "Type", "Est. iterations", "Scope", "Dependencies")

_WAVE_TITLE = re.compile(r"wave\s+(\d+)\b", re.IGNORECASE)
_FIELD = re.compile(r"^\s*[-*+]\s+[*_]*([^:*_]+?)[*_]*\s*:[*_]*\s*(.*?)\s*$")
_CELL_BREAK = re.compile(r"(?<!\\)\|")
_NO_DEPENDENCIES = {"", "none", "-", "—", "n/a"}


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
    """The headings of level `deepest` or above, outside fenced code, with the lines under
    each (fenced lines included)."""
    found: list[_Section] = []
    fences = Fences()
    for number, text in lines:
        titled = heading(text) if fences.step(text) is None else None
        if titled and titled[0] <= deepest:
            found.append(_Section(titled[0], titled[1], number, []))
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
        raise GraphError(validation_problems(err, top="the graph")) from None
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
            raise GraphError(f"line {line}: {validation_problems(err, top='the row')}") from None
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
