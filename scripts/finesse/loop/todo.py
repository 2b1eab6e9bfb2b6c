"""The written plan, `tasks/todo.md`: its sections read, and the loop's notes written into it.

A plan is Markdown with the level-2 sections Goal, Acceptance Criteria, Plan, Verification
Commands, Attempts and Review. Titles match case-insensitively, ignoring trailing colons and
whitespace (`## attempts:` is Attempts); `##Attempts` (no space) and `### Attempts` are not
section headings, nor is anything inside a fenced code block. Only ATX headings (`## Title`)
count. A section's body runs to the next level-1 or level-2 heading; when a title appears
twice, the first one is the section.

The plan belongs to the user, so every write is an insertion or a replacement inside one
section: all other bytes stay exactly as they were, line endings included. What the loop
inserts uses the file's own line ending, cannot open a section of its own (a `#`/`##` line in
it is escaped) and cannot swallow the rest of the file (an unclosed fence in it is closed).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from finesse.errors import UsageError
from finesse.support.files import shown_name
from finesse.support.markdown import CODE_SPAN, Fences, lines_with_offsets
from finesse.support.markdown import heading as markdown_heading

GOAL = "goal"
ACCEPTANCE_CRITERIA = "acceptance criteria"
PLAN = "plan"
VERIFICATION_COMMANDS = "verification commands"
ATTEMPTS = "attempts"
REVIEW = "review"
GATE = "gate"

# The loop's own review starts at this line; everything above it in Review is kept.
REVIEW_MARKER = "<!-- finesse:review -->"

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

@dataclass(frozen=True)
class Section:
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


@dataclass(frozen=True)
class _Heading:
    level: int
    title: str
    line: int
    start: int
    end: int


def normalise_title(title: str) -> str:
    """The key a heading's title is matched by: `Attempts :` and `attempts` are the same."""
    return " ".join(title.rstrip(" \t:").split()).casefold()


def _scan(text: str) -> tuple[list[_Heading], str | None]:
    """Every ATX heading outside fenced code, and the fence left open at the end, if any."""
    headings: list[_Heading] = []
    fences = Fences()
    for index, (start, line, end) in enumerate(lines_with_offsets(text)):
        if index == 0:
            line = line.removeprefix("\ufeff")
        if fences.step(line) is not None:
            continue
        found = markdown_heading(line)
        if found is not None:
            headings.append(_Heading(found[0], found[1], index, start, end))
    return headings, fences.fence


def parse_sections(text: str) -> dict[str, Section]:
    """The level-2 sections of a plan, keyed by `normalise_title`; the first of a title wins."""
    headings, _ = _scan(text)
    sections: dict[str, Section] = {}
    for index, heading in enumerate(headings):
        if heading.level != 2:
            continue
        body_end = next((h.start for h in headings[index + 1 :] if h.level <= 2), len(text))
        sections.setdefault(
            normalise_title(heading.title),
            Section(heading.title, heading.line, heading.start, heading.end, body_end),
        )
    return sections


# --- reading ----------------------------------------------------------------------------------


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
        for match in CODE_SPAN.finditer(paragraph):
            command = match.group(2).replace("\n", " ").strip()
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
    for key, heading, content in _REQUIRED:
        section = sections.get(key)
        if section is None:
            problems.append((heading, f'{name} has no "{heading}" section: add one {content}'))
        elif key != VERIFICATION_COMMANDS and _is_empty(section.body(text)):
            problems.append(
                (heading, f'{name} has an empty "{heading}" section: add a few lines {content}')
            )
    if len(problems) == 1:
        raise UsageError(problems[0][1])
    if problems:
        listed = [f'"{heading}"' for heading, _ in problems]
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


# --- writing ----------------------------------------------------------------------------------


def _newline(text: str) -> str:
    first = _LINE_BREAK.search(text)
    return "\n" if first is None else first.group()


def _ends_with_line_break(text: str) -> bool:
    return text.endswith(("\n", "\r"))


def _last_line_blank(text: str) -> bool:
    """Whether the last complete line of `text` (which ends with a line break) is blank."""
    before_break = re.sub(r"(?:\r\n|\r|\n)\Z", "", text)
    last = re.search(r"[^\r\n]*\Z", before_break)
    return last is None or not last.group().strip()


def _starts_with_blank_line(text: str) -> bool:
    return re.match(r"[ \t]*(?:\r\n|\r|\n)", text) is not None


def _content_end(text: str, start: int, end: int) -> int:
    """The offset just after the last non-blank line in text[start:end], else `start`."""
    last = start
    for _, line, line_end in lines_with_offsets(text, start, end):
        if line.strip():
            last = line_end
    return last


def _block(markdown: str, newline: str, *, first_prefix: str = "", indent: str = "") -> str:
    """`markdown` as lines in the plan's line ending, unable to break the plan's structure.

    Leading and trailing blank lines go; a heading of level 1 or 2 is escaped so it stays
    text; a fence left open is closed so it cannot hide the sections after it.
    """
    lines = [line.rstrip() for line in _LINE_BREAK.split(markdown)]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    fences = Fences()
    out: list[str] = []
    for line in lines:
        if fences.step(line) is None:
            found = markdown_heading(line)
            if found is not None and found[0] <= 2:
                line = "\\" + line.lstrip(" ")
        out.append(line)
    if fences.fence is not None:
        out.append(fences.fence)
    if not out:
        return ""
    if first_prefix and Fences().step(out[0]) is not None:
        # `- ```` is no fence to the scanner: start the item on a line of its own.
        out.insert(0, "")
    shaped = [(first_prefix + out[0]).rstrip()]
    shaped += [indent + line if line else line for line in out[1:]]
    return newline.join(shaped) + newline


def _glue(before: str, middle: str, after: str) -> str:
    """before + middle + after, where a `\r` and a `\n` meeting at a seam (a plan with mixed
    line endings) would fuse into one `\r\n`: the inserted side is given the missing half."""
    if before.endswith("\r") and middle.startswith("\n"):
        middle = "\r" + middle
    if middle.endswith("\r") and after.startswith("\n"):
        middle += "\n"
    return before + middle + after


def _insert(text: str, at: int, block: str, *, tight: bool = False) -> str:
    """`text` with `block` inserted at `at` (a line start or the end), set off by blank lines.

    Only separators are added around the block, so the result is `text[:at] + inserted +
    text[at:]`. When nothing but blank lines follows `at` and the file ends inside an open
    fence, the fence is closed first so the block is not taken as code.
    """
    newline = _newline(text)
    before, after = text[:at], text[at:]
    prefix = ""
    if before and not _ends_with_line_break(before):
        prefix = newline
    if not after.strip():
        _, open_fence = _scan(text)
        if open_fence is not None:
            prefix += open_fence + newline
    if before and not tight and not _last_line_blank(before + prefix):
        prefix += newline
    suffix = "" if not after.strip() or _starts_with_blank_line(after) else newline
    return _glue(before, prefix + block + suffix, after)


def _new_section(text: str, title: str, block: str) -> str:
    newline = _newline(text)
    return _insert(text, len(text), f"## {title}{newline}{newline}{block}")


def append_attempt(text: str, entry: str) -> str:
    """The plan with `entry` appended at the end of `## Attempts`, which is made if absent.

    The entry goes after the last non-blank line of the section's body, so the result is
    `text[:i] + inserted + text[i:]`; a missing section is added at the end of the file.
    An entry with nothing but whitespace leaves the text as it is.
    """
    newline = _newline(text)
    block = _block(entry, newline)
    if not block:
        return text
    section = parse_sections(text).get(ATTEMPTS)
    if section is None:
        return _new_section(text, "Attempts", block)
    at = _content_end(text, section.body_start, section.body_end)
    return _insert(text, at, block)


def _marker_offset(text: str, section: Section) -> int | None:
    """Where REVIEW_MARKER's line starts in the section's body, outside fenced code."""
    fences = Fences()
    for start, line, _ in lines_with_offsets(text, section.body_start, section.body_end):
        if fences.step(line) is None and line.strip() == REVIEW_MARKER:
            return start
    return None


def write_review(text: str, review: str) -> str:
    """The plan with `review` as the loop's part of `## Review`, which is made if absent.

    The loop's part starts at the line `<!-- finesse:review -->` (REVIEW_MARKER) and runs to
    the end of the section's body (its trailing blank lines excepted); a second call replaces
    it. What the user wrote in Review above the marker is kept, and so are the notes of
    `append_review_note`, which go above it too. Without a marker yet, the marker and review
    are appended after the section's last non-blank line. Nothing outside Review changes.
    """
    newline = _newline(text)
    block = REVIEW_MARKER + newline + _block(review, newline)
    section = parse_sections(text).get(REVIEW)
    if section is None:
        return _new_section(text, "Review", block)
    marker = _marker_offset(text, section)
    if marker is None:
        return _insert(text, _content_end(text, section.body_start, section.body_end), block)
    end = _content_end(text, marker, section.body_end)
    rest = text[end:]
    suffix = "" if not rest.strip() or _starts_with_blank_line(rest) else newline
    return _glue(text[:marker], block + suffix, rest)


def append_review_note(text: str, note: str) -> str:
    """The plan with `note` as a bullet in `## Review` (a blocker, a re-plan), kept for good.

    The bullet goes after the last non-blank line above the loop's review (REVIEW_MARKER), or
    at the end of the section's body when there is none yet, so `write_review` never erases
    it; the section is made if absent. Same insertion-only rule as `append_attempt`.
    """
    newline = _newline(text)
    block = _block(note, newline, first_prefix="- ", indent="  ")
    if not block:
        return text
    section = parse_sections(text).get(REVIEW)
    if section is None:
        return _new_section(text, "Review", block)
    marker = _marker_offset(text, section)
    limit = section.body_end if marker is None else marker
    at = _content_end(text, section.body_start, limit)
    previous = _LINE_BREAK.split(text[section.body_start : at].rstrip("\r\n"))[-1]
    # Successive notes make one list; the first one is set off from what precedes it.
    tight = at > section.body_start and previous.lstrip(" \t\r").startswith("- ")
    return _insert(text, at, block, tight=tight)
