"""Phases given as a table: "| # | Phase | Passes when | Verify |" with rows numbered 1, 2,
3, or "| Phase | Work | Done when |" under a "Phases" heading.

A table holds phases when a header cell names them ("Phase", "Step", "Stage", "Milestone",
"#", "Order") or the heading above it does, and its first column numbers the rows 1, 2,
3... in order ("1", "Phase 1", "M1"). Each row becomes one phase, told as its cells; a cell
under a "Verify"/"Command"/"Check" header reads as the phase's Verify line.
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import Document
from finesse.authoring.prompt_check.phase_model import Phase, Phases
from finesse.authoring.prompt_check.tables import Table, tables
from finesse.authoring.prompt_check.vocabulary import (
    CRITERIA_TITLE,
    PHASE_LIST_TITLE,
    PHASE_WORDS,
    UNORDERED,
    number_value,
)

_I = re.IGNORECASE
_NUMBER_HEADER = re.compile(r"^(?:#|no\.?|nr\.?|order|n)$", _I)
_ROW_NUMBER = re.compile(
    r"^[*_]*(?:(?:phase|step|stage|milestone|part)\s+)?(?-i:[A-Z])?(\d{1,2}|one|two|three|"
    r"four|five|six|seven|eight|nine|ten)[*_.):]*$", _I)
_VERIFY_HEADER = re.compile(r"\b(?:verif\w*|commands?|checks?|how\s+to\s+check)\b", _I)


def table_phases(doc: Document) -> Phases:
    """The rows of the first table that holds phases, each told as its cells (the Verify
    column as "Verify: ..."), or none."""
    for table in tables(doc):
        if not _about_phases(table, doc):
            continue
        expected = list(range(1, len(table.rows) + 1))
        if len(expected) < 2 or [_row_number(row) for _, row in table.rows] != expected:
            continue
        verify = table.column(_VERIFY_HEADER)
        return Phases(tuple(Phase(number, line, (line,), "; ".join(
                    f"Verify: {cell}" if at == verify else cell for at, cell in enumerate(row)))
                for number, (line, row) in zip(expected, table.rows, strict=True)))
    return Phases(())


def _about_phases(table: Table, doc: Document) -> bool:
    titles = [heading.title for heading in doc.headings_over(table.index)][:1]
    if any(UNORDERED.search(title) for title in titles):
        return False
    if any(PHASE_WORDS.search(cell) for cell in table.header) or (
            table.header and _NUMBER_HEADER.match(table.header[0])):
        return True
    return any(PHASE_LIST_TITLE.search(title) and not (
        CRITERIA_TITLE.search(title) and not PHASE_WORDS.search(title)) for title in titles)


def _row_number(row: tuple[str, ...]) -> int | None:
    match = _ROW_NUMBER.match(row[0]) if row else None
    return number_value(match.group(1)) if match else None
