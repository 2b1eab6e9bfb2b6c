"""The loop's notes written into the plan (`tasks/todo.md`): an entry per iteration under
`## Attempts`, notes and the review under `## Review`.

The plan belongs to the user, so every write is an insertion or a replacement inside one
section: all other bytes stay exactly as they were, line endings included. What the loop
inserts uses the file's own line ending, cannot open a section of its own (a `#`/`##` line in
it is escaped) and cannot swallow the rest of the file (an unclosed fence in it is closed).
"""

from __future__ import annotations

import re

from finesse.loop.todo.sections import (
    ATTEMPTS,
    LINE_BREAK,
    REVIEW,
    REVIEW_MARKER,
    Section,
    parse_sections,
    scan,
)
from finesse.support.markdown import Fences, heading, lines_with_offsets


def _newline(text: str) -> str:
    first = LINE_BREAK.search(text)
    return "\n" if first is None else first.group()


def _ends_with_line_break(text: str) -> bool:
    return text.endswith(("\n", "\r"))


def _last_line_blank(text: str) -> bool:
    """Whether the last complete line of `text` (which ends with a line break) is blank."""
    before_break = re.sub(r"(?:\r\n|\r|\n)\Z", "", text)
    # The last line starts after the last line break (`[^\r\n]*\Z` searched from every
    # offset of a long line costs the square of its length).
    start = max(before_break.rfind("\n"), before_break.rfind("\r")) + 1
    return not before_break[start:].strip()


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
    lines = [line.rstrip() for line in LINE_BREAK.split(markdown)]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    fences = Fences()
    out: list[str] = []
    for line in lines:
        if fences.step(line) is None:
            found = heading(line)
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
        _, open_fence = scan(text)
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


def attempt_span(text: str, heading_start: str, since: str) -> tuple[int, int] | None:
    """Where this loop's entry for one iteration is in `## Attempts`: from its heading line
    (`heading_start` is "### Iteration N (") to its last non-blank line before the next
    heading, outside fenced code; None when there is none. An entry whose time (`YYYY-MM-DD
    HH:MM`, which sorts as time does) is before `since`, the loop's start, is an earlier
    loop's in the same plan, not this one's."""
    section = parse_sections(text).get(ATTEMPTS)
    if section is None:
        return None
    fences = Fences()
    found: int | None = None
    for start, line, _ in lines_with_offsets(text, section.body_start, section.body_end):
        if fences.step(line) is not None:
            continue
        if found is not None and heading(line) is not None:
            return found, _content_end(text, found, start)
        stamp = line[len(heading_start):len(heading_start) + len(since)]
        if found is None and line.startswith(heading_start) and (
                not (len(stamp) == len(since) and stamp[:4].isdigit()) or stamp >= since):
            found = start
    return None if found is None else (found, _content_end(text, found, section.body_end))


def replace_attempt(text: str, span: tuple[int, int], entry: str) -> str:
    """The plan with the entry at `span` (`attempt_span`) replaced by `entry`, when it holds
    nothing but the loop's own lines (its heading, then `- ` items): one a person added to
    is left as it is. Every byte outside the span stays."""
    start, end = span
    body = list(lines_with_offsets(text, start, end))[1:]
    if any(line.strip() and not line.startswith("- ") for _, line, _ in body):
        return text
    block = _block(entry, _newline(text))
    return _glue(text[:start], block, text[end:]) if block else text


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
    previous = LINE_BREAK.split(text[section.body_start : at].rstrip("\r\n"))[-1]
    # Successive notes make one list; the first one is set off from what precedes it.
    tight = at > section.body_start and previous.lstrip(" \t\r").startswith("- ")
    return _insert(text, at, block, tight=tight)
