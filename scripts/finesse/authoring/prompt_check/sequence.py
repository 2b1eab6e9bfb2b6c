"""Phases told in words rather than numbers, in any of the ways people write them:
- sentences of a paragraph, or the items of a bulleted list, that open with "First, ...
  Then ... Finally" or "Phase one ... Phase two";
- one sentence chaining the work with "then": "Build auth, then products, then cart" (the
  seed's own example);
- a bulleted list under a heading that says it is in order: "## Requirements (in order)",
  "Order of work".
The opening paragraph (the cold start) is not searched: "First check the state" is no
phase; nor are rules ("If stuck, read the error, then ...") or a list said to be in no
particular order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from finesse.authoring.prompt_check.document import Block, Document, Line
from finesse.authoring.prompt_check.phase_model import Phase, Phases
from finesse.authoring.prompt_check.vocabulary import (
    IN_ORDER,
    INLINE_PHASE_MARKER,
    NOT_WORK,
    SEQUENCE_NEXT,
    SEQUENCE_START,
    UNORDERED,
    number_value,
)

_I = re.IGNORECASE
_ITEM_MARK = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
# "Build auth, then products, then cart": two "then"s at least.
_THEN_CHAIN = re.compile(
    r"(?P<first>[^,;:]{3,}?)[,;]\s*(?:and\s+)?then\s+(?P<second>[^,;]+?)[,;]\s*(?:and\s+)?"
    r"(?:then|finally)\s+(?P<rest>[^;]+)", _I)
_CONDITION_FIRST = re.compile(r"^[*_]*(?:if|when|whenever|once|after|before|unless)\b", _I)


@dataclass(frozen=True)
class _Unit:
    text: str
    line: Line
    end: int  # the number of the line after it


def told_phases(doc: Document) -> Phases:
    for units in _runs(doc):
        found = _sequence(doc, units)
        if len(found.found) >= 2:
            return found
    chained = _chained(doc)
    return chained if chained.found else _ordered_list(doc)


def _runs(doc: Document) -> list[list[_Unit]]:
    """The sentences of each paragraph, and the items of each list, outside the opening."""
    opening = {line.number for line in doc.opening()}
    runs: list[list[_Unit]] = []
    items: list[_Unit] = []
    for _, block in doc.prose():
        if block.kind == "item" and block.first.number not in opening:
            items.append(_Unit(_ITEM_MARK.sub("", block.text), block.first,
                               block.lines[-1].number + 1))
            continue
        if items:
            runs.append(items)
            items = []
        if (block.kind == "paragraph" and block.first.number not in opening
                and not UNORDERED.search(block.text)):
            end = block.lines[-1].number + 1
            runs.append([_Unit(s.text.strip(), s.line_at(), end) for s in block.sentences()])
    return [*runs, items] if items else runs


def _sequence(doc: Document, units: list[_Unit]) -> Phases:
    """Units opening with an ordinal or a sequence word, the first one "First"/"Start
    by"/"Phase 1", at least one more after it; each phase runs to the next."""
    told: list[list[str]] = []
    starts: list[_Unit] = []
    for unit in units:
        numbered = INLINE_PHASE_MARKER.match(unit.text)
        if numbered and number_value(numbered.group(1)) != len(starts) + 1:
            numbered = None
        opens = SEQUENCE_START.match(unit.text) if not starts else SEQUENCE_NEXT.match(unit.text)
        if numbered or opens:
            starts.append(unit)
            told.append([])
        if told:
            told[-1].append(unit.text)
    if len(starts) < 2:
        return Phases(())
    ends = [unit.line.number for unit in starts[1:]] + [units[-1].end]
    return Phases(tuple(
        Phase(number, unit.line,
              doc.lines[unit.line.number - 1 : max(end, unit.line.number + 1) - 1],
              " ".join(sentences))
        for number, (unit, end, sentences) in enumerate(zip(starts, ends, told, strict=True), 1)))


def _chained(doc: Document) -> Phases:
    opening = {line.number for line in doc.opening()}
    for index, block in doc.prose():
        if block.first.number in opening or _under_rules(doc, index):
            continue
        for sentence in block.sentences():
            text = _ITEM_MARK.sub("", sentence.text.strip())
            chain = _THEN_CHAIN.search(text)
            if chain and not _CONDITION_FIRST.match(text) and not UNORDERED.search(text):
                line = sentence.line_at(chain.start())
                parts = [chain.group("first"), chain.group("second"), chain.group("rest")]
                return Phases(tuple(Phase(number, line, (line,), part.strip())
                                    for number, part in enumerate(parts, 1)))
    return Phases(())


def _ordered_list(doc: Document) -> Phases:
    """The items of the first list under a heading or label that says it is in order."""
    for index, block in enumerate(doc.blocks):
        if (block.kind != "heading" or not IN_ORDER.search(block.title)
                or UNORDERED.search(block.title)):
            continue
        items = _first_list(doc.section(index))
        if len(items) >= 2:
            return Phases(tuple(Phase(number, item.first, item.lines)
                                for number, item in enumerate(items, 1)))
    return Phases(())


def _first_list(blocks: list[Block]) -> list[Block]:
    items: list[Block] = []
    for block in blocks:
        if block.kind == "item":
            items.append(block)
        elif items:
            break
    outer = min((item.level for item in items), default=0)
    return [item for item in items if item.level == outer]


def _under_rules(doc: Document, index: int) -> bool:
    return any(NOT_WORK.search(heading.title) for heading in doc.headings_over(index))
