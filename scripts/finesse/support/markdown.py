"""The one Markdown scanner: fenced code, ATX headings, code spans, and the prose left
outside code. Standard library only: the Stop hook reads the agent's reply with it.

Every reader of Markdown in finesse (the reply's promise and result lines, `tasks/todo.md`,
the Finesse prompt checker, plan and graph files) walks lines with `Fences` and reads
headings with `heading`, so "what is code" means the same thing everywhere:

- a fence opens on a line of three or more backticks or tildes, after any indentation and
  `>` quote markers (a fence in a list item or a quote is code too); a backtick fence's info
  string may not hold a backtick (CommonMark); it closes on a line of the same character, at
  least as long, and nothing else;
- a heading is `#` to `######` after at most three spaces, then a space or the line's end;
  closing hashes are not part of the title.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

FenceLine = Literal["open", "code", "close"]

_FENCE_OPEN = re.compile(r"([ \t>]*)(`{3,}|~{3,})(.*)")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t](.*))?")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+\Z")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


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
    title = _CLOSING_HASHES.sub("", (found.group(2) or "").strip(" \t"))
    return len(found.group(1)), title


def lines_with_offsets(text: str, start: int = 0,
                       end: int | None = None) -> Iterator[tuple[int, str, int]]:
    """(start, content without its line ending, end) of each line of text[start:end]."""
    for match in _LINE.finditer(text, start, len(text) if end is None else end):
        yield match.start(), match.group().rstrip("\r\n"), match.end()


def outside_fences(text: str) -> list[str]:
    """The lines of `text` that are not fenced code (fence lines themselves left out)."""
    fences = Fences()
    return [line for line in text.splitlines() if fences.step(line) is None]


def strip_code(text: str) -> str:
    """The prose of a Markdown text: fenced blocks and inline code spans removed.

    An unclosed fence hides the rest of the text, as a Markdown renderer would show it.
    """
    return CODE_SPAN.sub(" ", "\n".join(outside_fences(text)))
