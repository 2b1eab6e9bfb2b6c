"""The one Markdown scanner: fenced code, ATX headings, code spans, and the prose left
outside code. Standard library only: the Stop hook reads the agent's reply with it.

Every reader of Markdown in finesse (the reply's promise and result lines, `tasks/todo.md`,
the Finesse prompt checker, plan and graph files) uses this module, so "what is code" means
the same thing everywhere:

- a fence opens on a line of three or more backticks or tildes; a backtick fence's info
  string may not hold a backtick (CommonMark); it closes on a line of the same character, at
  least as long, and nothing else. `Fences` tracks fences alone, after any indentation and
  `>` quote markers: what the plan editor needs to keep a file's structure.
- `Blocks` reads a text as CommonMark does, with its containers: block quotes and list
  items. A fence left open ends with the quote or list item it opened in; a line indented
  four columns past its container's content, after a blank line (or at the start), is an
  indented code block. `prose_lines` and `strip_code` are built on it: what an agent's
  reply says outside code.
- a heading is `#` to `######` after at most three spaces, then a space or the line's end;
  closing hashes are not part of the title. `heading_sections` gives each heading with the
  lines its section spans (to the next heading of its level or above), `section_ends` the
  same for any sequence of levels, in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Literal, NamedTuple

FenceLine = Literal["open", "code", "close"]

_FENCE_OPEN = re.compile(r"([ \t>]*)(`{3,}|~{3,})(.*)")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t](.*))?")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_LINE_ENDING = re.compile(r"\r\n|\r|\n")


_BACKTICK_RUN = re.compile("`+")


class CodeSpan(NamedTuple):
    start: int  # of the opening backticks
    end: int  # after the closing backticks
    code: str  # between them, as written


def code_spans(text: str) -> list[CodeSpan]:
    """The inline code spans of `text`, left to right: a run of backticks opens one, the next
    run of the same length closes it (at least one character between); a run with no such
    partner is text. Linear in `text`: each run length keeps a cursor into its runs, which
    only moves forward (a regular expression that looks ahead for the closer from every
    unpartnered run costs the square of the text)."""
    if "`" not in text:
        return []
    starts: list[int] = []  # of each maximal run of backticks, and its length
    lengths: list[int] = []
    for run in _BACKTICK_RUN.finditer(text):
        starts.append(run.start())
        lengths.append(run.end() - run.start())
    by_length: dict[int, list[int]] = {}
    for index, length in enumerate(lengths):
        by_length.setdefault(length, []).append(index)
    cursors = dict.fromkeys(by_length, 0)
    spans: list[CodeSpan] = []
    index = 0
    while index < len(starts):
        length = lengths[index]
        same, cursor = by_length[length], cursors[length]
        while cursor < len(same) and same[cursor] <= index:
            cursor += 1
        cursors[length] = cursor
        if cursor == len(same):
            index += 1
            continue
        closer = same[cursor]
        start, closing = starts[index], starts[closer]
        spans.append(CodeSpan(start, closing + length, text[start + length:closing]))
        index = closer + 1
    return spans


def without_code_spans(text: str, replacement: str = " ") -> str:
    """`text` with each inline code span replaced by `replacement`."""
    if "`" not in text:
        return text
    kept, position = [], 0
    for span in code_spans(text):
        kept.append(text[position:span.start])
        position = span.end
    kept.append(text[position:])
    return replacement.join(kept)


class Fences:
    """Tracks fenced code blocks, one line at a time."""

    def __init__(self) -> None:
        self.fence: str | None = None  # the open fence's marker, e.g. "```"
        self.quoted = False  # whether the open fence sits in a `>` quote

    def step(self, line: str) -> FenceLine | None:
        """How `line` (without its line ending) stands to fenced code; None for prose."""
        if self.fence is None:
            opened = _FENCE_OPEN.fullmatch(line)
            if opened is None or (opened.group(2)[0] == "`" and "`" in opened.group(3)):
                return None
            self.fence = opened.group(2)
            self.quoted = ">" in opened.group(1)
            return "open"
        closing = line.lstrip(" \t>").rstrip(" \t")
        if set(closing) == {self.fence[0]} and len(closing) >= len(self.fence):
            self.fence = None
            return "close"
        return "code"


def heading(line: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading line, else None. `##Title` is no heading."""
    found = _HEADING.fullmatch(line)
    if found is None:
        return None
    return len(found.group(1)), _without_closing_hashes((found.group(2) or "").strip(" \t"))


def _without_closing_hashes(title: str) -> str:
    """The title less a closing run of `#` that stands alone (the whole title, or after a
    space or tab) and the blanks before it. Written with `str` methods: the pattern
    `[ \\t]+#+\\Z` searched over a long run of blanks costs the square of its length."""
    body = title.rstrip("#")
    if body == title or not body:
        return body
    before = body.rstrip(" \t")
    return title if before == body else before


def section_ends(levels: Sequence[int | None]) -> list[int]:
    """Where each section ends, for a sequence of heading levels (None for what is no
    heading): a heading's section ends at the next heading of its level or a higher one (a
    smaller number), anything else at the next heading of any level; len(levels) when
    nothing ends it. One pass, with a stack of the headings still open, so a reader of many
    sections never walks forward from each."""
    ends = [len(levels)] * len(levels)
    still_open: list[tuple[int, int]] = []  # (position, level) of the open headings, levels rising
    waiting: list[int] = []  # positions that are no heading, since the last heading
    for position, level in enumerate(levels):
        if level is None:
            waiting.append(position)
            continue
        for earlier in waiting:
            ends[earlier] = position
        waiting.clear()
        while still_open and still_open[-1][1] >= level:
            ends[still_open.pop()[0]] = position
        still_open.append((position, level))
    return ends


class HeadingSection(NamedTuple):
    level: int
    title: str
    start: int  # the heading's line, 0-based
    end: int  # the line after the section's last, 0-based: the next heading of its level or above


def heading_sections(text: str) -> list[HeadingSection]:
    """The ATX headings of `text` outside fenced code, each with the lines its section
    spans (`section_ends`)."""
    fences = Fences()
    lines = split_lines(text)
    levels: list[int | None] = []
    titles: dict[int, str] = {}
    for number, line in enumerate(lines):
        found = heading(line) if fences.step(line) is None else None
        levels.append(None if found is None else found[0])
        if found is not None:
            titles[number] = found[1]
    ends = section_ends(levels)
    return [HeadingSection(level, titles[number], number, ends[number])
            for number, level in enumerate(levels) if level is not None]


def lines_with_offsets(text: str, start: int = 0,
                       end: int | None = None) -> Iterator[tuple[int, str, int]]:
    """(start, content without its line ending, end) of each line of text[start:end]."""
    for match in _LINE.finditer(text, start, len(text) if end is None else end):
        yield match.start(), match.group().rstrip("\r\n"), match.end()


def split_lines(text: str) -> list[str]:
    """The lines of `text` at Markdown's line endings (\\n, \\r\\n, \\r), not at the other
    characters `str.splitlines` breaks on (form feed, U+2028, record separators...)."""
    return _LINE_ENDING.split(text.removesuffix("\n").removesuffix("\r")) if text else []


def outside_fences(text: str) -> list[str]:
    """The lines of `text` that are not fenced code (fence lines themselves left out)."""
    fences = Fences()
    return [line for line in split_lines(text) if fences.step(line) is None]


_QUOTE = re.compile(r" {0,3}> ?")
_LIST_ITEM = re.compile(r"([-*+]|[0-9]{1,9}[.)])([ \t]+|$)")
_OPEN = re.compile(r"(`{3,}|~{3,})(.*)")
TAB = 4


def _columns(text: str) -> tuple[int, str]:
    """The indentation of `text` in columns (tabs to the next multiple of four), and the
    text after it."""
    column = 0
    for index, char in enumerate(text):
        if char == " ":
            column += 1
        elif char == "\t":
            column += TAB - column % TAB
        else:
            return column, text[index:]
    return column, ""


class Blocks:
    """Reads a Markdown text line by line, as CommonMark's block structure has it, enough
    to tell code from prose (see the module docstring). `step(line)` is True for a line of
    code: a fence line, a line inside a fence, or a line of an indented code block."""

    def __init__(self) -> None:
        self.items: list[int] = []  # content columns of the open list items, innermost last
        self.fence: tuple[str, int, int, int] | None = None  # char, length, quotes, column
        self.paragraph = False  # the previous line continues a paragraph
        self.indented = False  # inside an indented code block

    def step(self, line: str) -> bool:
        quotes, position = 0, 0
        while (marker := _QUOTE.match(line, position)) is not None:
            quotes, position = quotes + 1, marker.end()
        rest = line[position:]
        column, content = _columns(rest)
        blank = not content
        if self.fence is not None:
            char, length, fence_quotes, base = self.fence
            if quotes < fence_quotes or (not blank and column < base):
                self.fence = None  # the quote or list item the fence opened in has ended
            else:
                closing = content.rstrip(" \t")
                if column - base <= 3 and set(closing) == {char} and len(closing) >= length:
                    self.fence = None
                return True
        if blank:
            self.paragraph = False
            return self.indented
        # A line outside an item's content ends it, unless it continues a paragraph.
        while self.items and column < self.items[-1] and not self.paragraph:
            self.items.pop()
        base = self.items[-1] if self.items else 0
        relative = column - base
        if relative >= 4 and (self.indented or not self.paragraph):
            self.indented = True
            return True
        self.indented = False
        item = _LIST_ITEM.match(content) if relative <= 3 else None
        if item is not None:
            after, _ = _columns(content[item.end(1):])
            content_column = column + len(item.group(1)) + (after if 1 <= after <= 4 else 1)
            self.items.append(content_column)
            base = content_column
            column, content = _columns(content[item.end():])
            column += content_column
            relative = column - base
            self.paragraph = False
        opened = _OPEN.fullmatch(content.rstrip(" \t")) if content and relative <= 3 else None
        if opened is not None and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            self.fence = (opened.group(1)[0], len(opened.group(1)), quotes, base)
            self.paragraph = False
            return True
        self.paragraph = heading(content) is None and bool(content)
        return False


def prose_lines(text: str) -> list[str]:
    """The lines of `text` that are not code (fences, their contents, indented code)."""
    blocks = Blocks()
    return [line for line in split_lines(text) if not blocks.step(line)]


def strip_code(text: str) -> str:
    """The prose of a Markdown text: fenced and indented code, and code spans, removed.

    An unclosed fence hides the rest of its container (the whole text at the top level), as
    a Markdown renderer would show it.
    """
    return without_code_spans("\n".join(prose_lines(text)))
