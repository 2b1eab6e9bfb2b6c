"""The written plan, `tasks/todo.md`, read: its level-2 sections, its verification and gate
commands, and whether it can drive a loop. (`edit` writes the loop's notes into it.)

A plan is Markdown with the level-2 sections Goal, Acceptance Criteria, Plan, Verification
Commands, Attempts and Review. Titles match case-insensitively, ignoring trailing colons and
whitespace (`## attempts:` is Attempts); `##Attempts` (no space) and `### Attempts` are not
section headings, nor is anything inside a fenced code block. Only ATX headings (`## Title`)
count. A section's body runs to the next level-1 or level-2 heading; when a title appears
twice, the first one is the section.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from finesse.errors import UsageError
from finesse.record import Record
from finesse.support.files import shown_name
from finesse.support.markdown import Fences, code_spans, heading, lines_with_offsets, section_ends

GOAL = "goal"
ACCEPTANCE_CRITERIA = "acceptance criteria"
PLAN = "plan"
VERIFICATION_COMMANDS = "verification commands"
ATTEMPTS = "attempts"
REVIEW = "review"
GATE = "gate"

# The loop's own review starts at this line; everything above it in Review is kept.
REVIEW_MARKER = "<!-- finesse:review -->"

LINE_BREAK = re.compile(r"\r\n|\r|\n")

class Section(Record):
    """A level-2 section: its heading as written and where it sits in the text.

    `line` is the heading's 0-based line index; `heading_start` its offset; the body is
    `text[body_start:body_end]`, from just after the heading's line ending to the next
    level-1 or level-2 heading (or the end of the text).
    """

    title: str
    line: int
    heading_start: int
    body_start: int
    body_end: int

    def body(self, text: str) -> str:
        return text[self.body_start : self.body_end]


class Heading(Record):
    level: int
    title: str
    line: int
    start: int
    end: int


def normalise_title(title: str) -> str:
    """The key a heading's title is matched by: `Attempts :` and `attempts` are the same."""
    return " ".join(title.rstrip(" \t:").split()).casefold()


def scan(text: str) -> tuple[list[Heading], str | None]:
    """Every ATX heading outside fenced code, and the fence left open at the end, if any."""
    headings: list[Heading] = []
    fences = Fences()
    for index, (start, line, end) in enumerate(lines_with_offsets(text)):
        if index == 0:
            line = line.removeprefix("\ufeff")
        if fences.step(line) is not None:
            continue
        found = heading(line)
        if found is not None:
            headings.append(Heading(found[0], found[1], index, start, end))
    return headings, fences.fence


def parse_sections(text: str) -> dict[str, Section]:
    """The level-2 sections of a plan, keyed by `normalise_title`; the first of a title wins."""
    headings, _ = scan(text)
    ends = section_ends([found.level for found in headings])
    sections: dict[str, Section] = {}
    for index, found in enumerate(headings):
        if found.level != 2:
            continue
        body_end = headings[ends[index]].start if ends[index] < len(headings) else len(text)
        sections.setdefault(
            normalise_title(found.title),
            Section(found.title, found.line, found.start, found.end, body_end),
        )
    return sections



def _comment_free(line: str, in_comment: bool) -> tuple[str, bool]:
    """The parts of a prose line outside HTML comments, and whether a comment is still open."""
    kept: list[str] = []
    position = 0
    while True:
        if in_comment:
            closing = line.find("-->", position)
            if closing < 0:
                return " ".join(kept), True
            position, in_comment = closing + 3, False
        else:
            opening = line.find("<!--", position)
            if opening < 0:
                kept.append(line[position:])
                return " ".join(kept), False
            kept.append(line[position:opening])
            position, in_comment = opening + 4, True


def _without_comments(body: str) -> str:
    """The body with HTML comments outside fenced code removed (template hints say nothing)."""
    kept: list[str] = []
    fences = Fences()
    in_comment = False
    for start, line, end in lines_with_offsets(body):
        ending = body[start + len(line) : end]
        if not in_comment and fences.step(line) is not None:
            kept.append(line + ending)
            continue
        visible, in_comment = _comment_free(line, in_comment)
        kept.append(visible + ending)
    return "".join(kept)


def _is_empty(body: str) -> bool:
    return not _without_comments(body).strip()


def _span_commands(prose: list[str]) -> list[str]:
    """The code spans of prose lines; a span never crosses a blank line (a paragraph's end)."""
    commands: list[str] = []
    for paragraph in re.split(r"\n[ \t]*\n", "\n".join(prose)):
        for span in code_spans(paragraph):
            command = span.code.replace("\n", " ").strip()
            if command:
                commands.append(command)
    return commands


def _commands(body: str) -> list[str]:
    found: list[str] = []
    prose: list[str] = []
    fences = Fences()
    pending = ""
    for _, line, _ in lines_with_offsets(_without_comments(body)):
        kind = fences.step(line)
        if kind is None:
            prose.append(line)
            continue
        if kind == "open":
            found += _span_commands(prose)
            prose = []
            continue
        if kind == "close":
            if pending.strip():
                found.append(pending.strip())
            pending = ""
            continue
        command = line.lstrip(" \t>" if fences.quoted else " \t").strip()
        if not command or command.startswith("#"):
            continue
        # A shell prompt copied with the command is not part of it.
        command = command.removeprefix("$ ").strip()
        if command.endswith("\\"):
            pending += command[:-1].rstrip() + " "
            continue
        found.append(pending + command)
        pending = ""
    found += _span_commands(prose)
    if pending.strip():
        found.append(pending.strip())
    return list(dict.fromkeys(found))


def verification_commands(text: str) -> list[str]:
    """The commands in `## Verification Commands`, in order, each once.

    A command is an inline code span (`` `pytest -q` ``) or a line of a fenced block; in a
    block, blank lines and `#` comments are skipped, a leading `$ ` prompt is dropped and a
    line ending in a backslash continues on the next. Every code span in prose counts, so
    nothing but commands goes in backticks in this section; HTML comments are ignored.
    """
    section = parse_sections(text).get(VERIFICATION_COMMANDS)
    return [] if section is None else _commands(section.body(text))


def gate_commands(text: str) -> list[str]:
    """The commands in an optional `## Gate` section (gate mode), read as above."""
    section = parse_sections(text).get(GATE)
    return [] if section is None else _commands(section.body(text))


_REQUIRED = (
    (GOAL, "## Goal", "saying what the loop must achieve"),
    (ACCEPTANCE_CRITERIA, "## Acceptance Criteria", "listing what must be true when it is done"),
    (VERIFICATION_COMMANDS, "## Verification Commands", "listing each command in backticks"),
)


def check_plan(text: str, *, path: str, extra_verify: Sequence[str] = ()) -> list[str]:
    """The plan's verification commands; a UsageError when the plan cannot drive a loop.

    Goal, Acceptance Criteria and Verification Commands must be there (an empty Goal or
    Acceptance Criteria counts as missing; HTML comments alone are empty), and there must be
    a command to verify with, in the plan or in `extra_verify` (from `--verify`). Only the
    plan's commands are returned, not those of `extra_verify`.
    """
    name = shown_name(path)
    sections = parse_sections(text)
    problems: list[tuple[str, str]] = []
    for key, title, content in _REQUIRED:
        section = sections.get(key)
        if section is None:
            problems.append((title, f'{name} has no "{title}" section: add one {content}'))
        elif key != VERIFICATION_COMMANDS and _is_empty(section.body(text)):
            problems.append(
                (title, f'{name} has an empty "{title}" section: add a few lines {content}')
            )
    if len(problems) == 1:
        raise UsageError(problems[0][1])
    if problems:
        listed = [f'"{title}"' for title, _ in problems]
        raise UsageError(
            f"{name} is missing {', '.join(listed[:-1])} and {listed[-1]}: add each as a "
            "level-2 heading with its content below it"
        )
    commands = verification_commands(text)
    if not commands and not extra_verify:
        raise UsageError(
            f'{name} has no command under "## Verification Commands": list each in backticks, '
            "e.g. `pytest -q`, or pass --verify CMD"
        )
    return commands




_ITEM = re.compile(r"^[ \t]*(?:[-*+]|[0-9]+[.)])[ \t]+(?:\[[ xX]\][ \t]+)?(.*\S)[ \t]*$")


def acceptance_criteria(text: str) -> list[str]:
    """The items of `## Acceptance Criteria` (judge mode's criteria): each list item, its
    checkbox dropped; HTML comments and fenced code are not criteria."""
    section = parse_sections(text).get(ACCEPTANCE_CRITERIA)
    if section is None:
        return []
    found: list[str] = []
    fences = Fences()
    for _, line, _ in lines_with_offsets(_without_comments(section.body(text))):
        if fences.step(line) is not None:
            continue
        item = _ITEM.match(line)
        if item is not None:
            found.append(item.group(1))
    return list(dict.fromkeys(found))
