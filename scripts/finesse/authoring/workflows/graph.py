"""`execution-graph.md`, seed 000's Execution Graph Format, as `render_execution_graph`
writes it and `parse_execution_graph` reads it back.

    # Execution Graph: <session>
    ## Overview                 - **Original task**: ..., - **Sub-workflows**: N,
                                - **Waves**: N, - **Total estimated iterations**: N
    ## Wave Structure
    ### Wave <N>                | Name | Type | Est. Iterations | Scope | Dependencies |
    ## Dependency Rationale     - `<name>` depends on `<other>` (file-based|logical): <why>
    ## Wave 1 (run in parallel)
    /finesse:finesse-execute --prompt-file <dir>/wave-1/<task>/prompt.md
        --completion-promise-file <dir>/wave-1/<task>/promise.txt --max-iterations <N>
    ## Wave 2 (run after Wave 1 completes)
    ...

Headings are matched without regard to case, outside fenced code; the commands may also sit
in a fence. Type is one of the six task types; Dependencies are names separated by commas,
or `none`; `\\|` escapes a pipe in a cell. The plan folder is read from the commands.

The API, for anything that runs the graph (e.g. `ralph run --graph finesse-plans/<session>/`):

- `parse_execution_graph(text) -> ParsedGraph`: `.graph` is an `ExecutionGraph` (its
  `waves`, each with `workflows`: name, type, iterations, scope, depends_on; `reasons`;
  `files(wave, name)` and `command(wave, workflow)`), `.problems` the counts and commands
  that disagree with the wave tables. GraphError when the text is no graph at all.
- `finesse.authoring.workflows.folder.load_execution_graph(folder) -> LoadedGraph`: the
  same, checked against the folder on disk, with each sub-workflow's prompt, promise and
  plan paths and its `--max-iterations`; GraphError listing every problem otherwise.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from pydantic import ValidationError

from finesse.authoring.iterations import MAX_ITERATIONS
from finesse.authoring.workflows.model import (
    EXECUTE,
    DependencyReason,
    ExecutionGraph,
    GraphError,
    ParsedGraph,
    SubWorkflow,
    Wave,
    wave_heading,
)
from finesse.support import strict
from finesse.support.markdown import Fences, heading, section_ends, split_lines

COLUMNS = ("Name", "Type", "Est. Iterations", "Scope", "Dependencies")

_WAVE_TITLE = re.compile(r"wave\s+(\d+)\s*$", re.IGNORECASE)
_COMMANDS_TITLE = re.compile(r"wave\s+(\d+)\s*\((run\b.*)\)\s*$", re.IGNORECASE)
# Label and value are trimmed in `_field`: a lazy label before `\s*:` is quadratic.
_FIELD = re.compile(r"^\s*[-*+](\s[^:]*):(.*)$")
# `why` is trimmed in `_reasons`: a lazy `.+?` before `\s*$` costs the square of its blanks.
_REASON = re.compile(r"^\s*[-*+]\s+`?(?P<workflow>[\w.-]+)`?\s+depends\s+on\s+`?"
                     r"(?P<on>[\w.-]+)`?\s*\((?P<kind>[^)]*)\)\s*:(?P<why>.+)$",
                     re.IGNORECASE)
_CELL_BREAK = re.compile(r"(?<!\\)\|")
_NO_DEPENDENCIES = {"", "none", "-", "—", "n/a"}
_NO_REASON = "No sub-workflow depends on another."


def render_execution_graph(graph: ExecutionGraph, session: str) -> str:
    count = sum(1 for _ in graph.entries())
    out = [f"# Execution Graph: {session}", "", "## Overview", "",
           f"- **Original task**: {graph.task}", f"- **Sub-workflows**: {count}",
           f"- **Waves**: {len(graph.waves)}",
           f"- **Total estimated iterations**: {graph.total_iterations}",
           "", "## Wave Structure"]
    for wave in graph.waves:
        out += ["", f"### Wave {wave.number}", "", _row(COLUMNS), _row(("---",) * 5)]
        out += [_row((w.name, w.type, str(w.iterations), w.scope, ", ".join(w.depends_on)
                      or "none")) for w in wave.workflows]
    out += ["", "## Dependency Rationale", ""]
    out += [f"- `{r.workflow}` depends on `{r.on}` ({r.kind}): {r.why}"
            for r in graph.reasons] or [_NO_REASON]
    for wave in graph.waves:
        out += ["", f"## {wave_heading(wave.number)}"]
        for workflow in wave.workflows:
            out += ["", graph.command(wave.number, workflow)]
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
    each (fenced lines included), their ends found in one pass (`markdown.section_ends`)."""
    fences = Fences()
    titled = [heading(text) if fences.step(text) is None else None for _, text in lines]
    levels = [found[0] if found and found[0] <= deepest else None for found in titled]
    ends = section_ends(levels)
    return [_Section(level, found[1], lines[at][0], lines[at + 1 : ends[at]])
            for at, (level, found) in enumerate(zip(levels, titled, strict=True))
            if level is not None and found is not None]


def parse_execution_graph(text: str) -> ParsedGraph:
    """The graph in an execution-graph.md; GraphError when it cannot be read as one."""
    sections = _sections(list(enumerate(split_lines(text), 1)), deepest=2)
    named = {s.title.lower(): s for s in sections if s.level == 2}
    overview = _required_section(named, "Overview", "the original task and the counts")
    fields = {field[0]: (n, field[1]) for n, line in overview.body
              if (field := _field(line)) is not None}
    if "original task" not in fields:
        raise GraphError(f"line {overview.line}: the overview has no "
                         "`- **Original task**: ...` field")
    structure = _required_section(named, "Wave Structure", "a `### Wave N` table per wave")
    waves = [_parse_wave(s, number) for s in _sections(structure.body, deepest=3)
             if s.level == 3 and (number := _number(_WAVE_TITLE, s.title)) is not None]
    if not waves:
        raise GraphError(f"line {structure.line}: no `### Wave 1` with the table of its "
                         "sub-workflows")
    rationale = _required_section(named, "Dependency Rationale",
                                  "why each dependency is file-based or logical")
    commands = {number: s for s in sections if s.level == 2
                and (number := _number(_COMMANDS_TITLE, s.title)) is not None}
    plan_dir = _plan_dir(commands, waves)
    try:
        graph = ExecutionGraph.model_validate({
            "task": fields["original task"][1], "plan_dir": plan_dir, "waves": waves,
            "reasons": _reasons(rationale)})
    except ValidationError as err:
        raise GraphError(strict.problems(err, top="the graph")) from None
    problems = _count_problems(graph, fields) + _command_problems(graph, commands)
    return ParsedGraph(graph, tuple(problems))


def _required_section(named: dict[str, _Section], title: str, what: str) -> _Section:
    found = named.get(title.lower())
    if found is None:
        raise GraphError(f"no `## {title}` section: give {what}")
    return found


def _field(line: str) -> tuple[str, str] | None:
    """(label in lower case, value) of a `- **Label**: value` line, else None; the label
    (before the first colon, less blanks and emphasis) holds no other `*` or `_`."""
    found = _FIELD.match(line)
    if found is None:
        return None
    label = found.group(1).strip().strip("*_")
    if not label.strip() or "*" in label or "_" in label:
        return None
    return label.strip().lower(), found.group(2).lstrip("*_").strip()


def _number(pattern: re.Pattern[str], title: str) -> int | None:
    match = pattern.match(title)
    # A number of more digits than any wave count is no wave (and `int` refuses 4,300 digits).
    return int(match.group(1)) if match and len(match.group(1)) <= 9 else None


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
            raise GraphError(f"line {line}: Est. Iterations must be a whole number from 1 to "
                             f"{MAX_ITERATIONS}, not {iterations!r}")
        try:
            workflows.append(SubWorkflow.model_validate({
                "name": name.strip("`"), "type": kind.lower(), "iterations": int(iterations),
                "scope": scope, "depends_on": _dependencies(depends)}))
        except ValidationError as err:
            raise GraphError(f"line {line}: {strict.problems(err, top='the row')}") \
                from None
    return Wave(number=number, workflows=tuple(workflows))


def _cells(line: str) -> list[str]:
    parts = _CELL_BREAK.split(line.strip())
    parts = parts[1:-1] if line.strip().endswith("|") else parts[1:]
    return [part.strip().replace("\\|", "|") for part in parts]


def _dependencies(cell: str) -> tuple[str, ...]:
    if cell.strip().lower() in _NO_DEPENDENCIES:
        return ()
    return tuple(name.strip(" `") for name in cell.split(",") if name.strip(" `"))


def _reasons(section: _Section) -> list[DependencyReason | dict[str, str]]:
    reasons: list[DependencyReason | dict[str, str]] = []
    for line, text in section.body:
        found = _REASON.match(text)
        if found is None:
            if text.lstrip().startswith(("-", "*", "+")):
                raise GraphError(f"line {line}: write a dependency as '- `<name>` depends on "
                                 "`<other>` (file-based|logical): <why>'")
            continue
        why = found.group("why")
        # At least one character, as written; blanks only: the last of them.
        reasons.append({**found.groupdict(), "kind": found.group("kind").strip().lower(),
                        "why": why.strip() or why[-1]})
    return reasons


def _command_args(line: str) -> dict[str, str] | None:
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    if not words or words[0] != EXECUTE:
        return None
    args = dict(zip(words[1::2], words[2::2], strict=False))
    return args if len(words) % 2 == 1 else None


def _commands(section: _Section) -> list[tuple[int, str]]:
    return [(line, text.strip()) for line, text in section.body
            if text.strip().startswith(EXECUTE)]


def _plan_dir(commands: dict[int, _Section], waves: list[Wave]) -> str:
    """The plan folder the commands name (the first command's, before `/wave-N/...`)."""
    for _, section in sorted(commands.items()):
        for line, text in _commands(section):
            args = _command_args(text) or {}
            prompt = args.get("--prompt-file", "")
            found = re.fullmatch(r"(.+)/wave-\d+/[^/]+/prompt\.md", prompt)
            if found:
                return found.group(1)
            raise GraphError(f"line {line}: --prompt-file must be "
                             "<plan folder>/wave-<N>/<task>/prompt.md")
    raise GraphError(f"no `## {wave_heading(1)}` section with the "
                     f"{EXECUTE} command of each sub-workflow of wave {waves[0].number}")


def _count_problems(graph: ExecutionGraph, fields: dict[str, tuple[int, str]]) -> list[str]:
    actual = {"sub-workflows": sum(1 for _ in graph.entries()), "waves": len(graph.waves),
              "total estimated iterations": graph.total_iterations}
    problems = []
    for key, value in actual.items():
        line, stated = fields.get(key, (0, ""))
        if stated.strip("` ") != str(value):
            said = f"line {line}: the overview says {key} {stated}" if line else \
                f"the overview does not give {key}"
            problems.append(f"{said}; the wave tables make it {value}")
    return problems


def _command_problems(graph: ExecutionGraph, commands: dict[int, _Section]) -> list[str]:
    problems = []
    for wave in graph.waves:
        section = commands.get(wave.number)
        if section is None:
            problems.append(f"no `## {wave_heading(wave.number)}` with the commands of wave "
                            f"{wave.number}")
            continue
        if section.title != wave_heading(wave.number):
            problems.append(f"line {section.line}: the heading should read "
                            f"`## {wave_heading(wave.number)}`")
        expected = {w.name: graph.command(wave.number, w) for w in wave.workflows}
        prompts = {graph.files(wave.number, name)[0]: name for name in expected}
        seen = set()
        for line, text in _commands(section):
            args = _command_args(text) or {}
            name = prompts.get(args.get("--prompt-file", ""))
            if name is None:
                problems.append(f"line {line}: this command runs no sub-workflow of wave "
                                f"{wave.number}")
            elif args != _command_args(expected[name]):  # the words, however quoted
                problems.append(f"line {line}: the command for `{name}` should read: "
                                f"{expected[name]}")
            seen.add(name)
        problems += [f"{wave_heading(wave.number)}: no command for `{name}`: {command}"
                     for name, command in expected.items() if name not in seen]
    problems += [f"line {section.line}: `## {section.title}` is not a wave of the graph"
                 for number, section in commands.items() if number > len(graph.waves)]
    return problems
