"""Markdown tables in a prompt: people give phases, commands and criteria as tables
("| # | Phase | Verify |", "| Check | Command | Expected |").

The document model reads a table as one paragraph (its lines run on); `tables` splits it
into a header and rows of cells, each row with its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from finesse.authoring.prompt_check.document import Block, Document, Line

_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
_CELL_BREAK = re.compile(r"(?<!\\)\|")


@dataclass(frozen=True)
class Table:
    index: int  # the block's index in the document
    header: tuple[str, ...]
    rows: tuple[tuple[Line, tuple[str, ...]], ...]

    def column(self, pattern: re.Pattern[str]) -> int | None:
        """The first column whose header matches `pattern`."""
        return next((at for at, name in enumerate(self.header) if pattern.search(name)), None)


def tables(doc: Document) -> list[Table]:
    return [table for index, block in doc.prose()
            if (table := parse_table(index, block)) is not None]


def parse_table(index: int, block: Block) -> Table | None:
    """The table a paragraph holds: a header line, a separator line, and rows."""
    lines = block.lines
    if (block.kind != "paragraph" or len(lines) < 3
            or not all(line.text.strip().startswith("|") for line in lines)
            or not _SEPARATOR.match(lines[1].text.strip())):
        return None
    return Table(index, cells(lines[0].text),
                 tuple((line, cells(line.text)) for line in lines[2:]))


def cells(text: str) -> tuple[str, ...]:
    """A table line's cells, trimmed ("\\|" inside a cell is a pipe, not a break)."""
    text = text.strip()
    text = text[1:] if text.startswith("|") else text
    text = text[:-1] if text.endswith("|") and not text.endswith("\\|") else text
    return tuple(cell.strip().replace("\\|", "|") for cell in _CELL_BREAK.split(text))
