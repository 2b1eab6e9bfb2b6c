"""Phases told in words rather than numbers, in any of the ways people write them:
- sentences of a paragraph, or the items of a bulleted list, that open with "First, ...
  Then ... Finally" or "Phase one ... Phase two";
- one sentence chaining the work with "then": "Build auth, then products, then cart" (the
  seed's own example);
- a bulleted list under a heading that says it is in order: "## Requirements (in order)",
  "Order of work".
The cold start at the top is not searched: "First check the state" is no
phase; nor are rules ("If stuck, read the error, then ...") or a list said to be in no
particular order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import dropwhile

from finesse.authoring.prompt_check.document import (
    ITEM_MARKER,
    Block,
    Document,
    Line,
    Sentence,
)
from finesse.authoring.prompt_check.opening import cold_start_lines, is_cold_start
from finesse.authoring.prompt_check.phase_model import Phase, Phases
from finesse.authoring.prompt_check.vocabulary import (
    CODE_SPAN,
    IN_ORDER,
    INLINE_PHASE_MARKER,
    NOT_WORK,
    PROMISE_TAG,
    SEQUENCE_NEXT,
    SEQUENCE_START,
    UNORDERED,
    number_value,
)

_I = re.IGNORECASE
# "Build auth, then products, then cart": two "then"s at least.
_THEN_CHAIN = re.compile(
    r"(?P<first>[^,;:]{3,}?)[,;]\s*(?:and\s+)?then\s+(?P<second>[^,;]+?)[,;]\s*(?:and\s+)?"
    r"(?:then|finally)\s+(?P<rest>[^;]+)", _I)
_UNIT_TITLE = re.compile(r"^[*_]*(?:phase|step|stage|milestone)\b(?!s)", _I)
_SEQUENTIAL_TITLE = re.compile(r"\b(?:phases|steps|stages|milestones)\b", _I)
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
    opening = cold_start_lines(doc)
    runs: list[list[_Unit]] = []
    items: list[_Unit] = []
    last: Block | None = None  # the block before, when it was a paragraph of the runs
    for _, block in doc.prose():
        if block.kind == "item" and block.first.number not in opening:
            items.append(_Unit(ITEM_MARKER.sub("", block.text), block.first,
                               block.lines[-1].number + 1))
            last = None
            continue
        if items:
            runs.append(items)
            items = []
        sentences = _past_the_opening(block, opening)
        if block.kind == "paragraph" and sentences and not UNORDERED.search(block.text):
            end = block.lines[-1].number + 1
            units = [_Unit(part, s.line_at(s.text.find(part)), end) for s in sentences
                     for part in _after_intro(s.text.strip())]
            # "First, ..." and "Then, ..." in paragraphs of their own are one run.
            if last is not None and runs and SEQUENCE_NEXT.match(units[0].text):
                runs[-1] += units
            else:
                runs.append(units)
            last = block
        else:
            last = None
    return [*runs, items] if items else runs


def _past_the_opening(block: Block, opening: frozenset[int]) -> list[Sentence]:
    """The sentences of `block` that are not the cold start: all of them outside the
    opening; in a prompt written as one paragraph, those after its cold-start sentences."""
    sentences = list(block.sentences())
    if block.first.number not in opening:
        return sentences
    rest = list(dropwhile(lambda sentence: is_cold_start(sentence.text), sentences))
    return rest if len(rest) >= 3 else []


def _after_intro(text: str) -> list[str]:
    """A sentence split after an intro that ends in ':' when a sequence opens after it:
    "What I want, in order: First, ..." reads as two."""
    intro, colon, rest = text.partition(": ")
    if colon and SEQUENCE_START.match(rest.strip()):
        return [intro + ":", rest.strip()]
    return [text]


# A sentence about the loop rather than the work: a rule for every change, a prohibition, what
# to do when stuck, the promise.
_NOT_THE_WORK = re.compile(
    r"<promise>|\b(?:after|following)\s+(?:every|each)\s+(?:change|edit)\b|"
    r"^[*_]*(?:please\s+)?(?:don['\u2019]?t|do\s+not|never|keep\s+your\s+hands|only\s+"
    r"(?:edit|touch|change|modify))\b|\b(?:stuck|blocked)\b", _I)


def _sequence(doc: Document, units: list[_Unit]) -> Phases:
    """Units opening with an ordinal or a sequence word, the first one "First"/"Start
    by"/"Phase 1", at least one more after it; each phase runs to the next."""
    told: list[list[str]] = []
    starts: list[_Unit] = []
    closed = False
    for unit in units:
        numbered = INLINE_PHASE_MARKER.match(unit.text)
        if numbered and number_value(numbered.group(1)) != len(starts) + 1:
            numbered = None
        opens = SEQUENCE_START.match(unit.text) if not starts else SEQUENCE_NEXT.match(unit.text)
        if numbered or opens:
            starts.append(unit)
            told.append([])
            closed = False
        elif told and _NOT_THE_WORK.search(unit.text):
            closed = True  # the rules after the last step are no part of it
        if told and not closed:
            told[-1].append(unit.text)
    if len(starts) < 2:
        return Phases(())
    ends = [unit.line.number for unit in starts[1:]] + [units[-1].end]
    return Phases(tuple(
        Phase(number, unit.line,
              doc.lines[unit.line.number - 1 : max(end, unit.line.number + 1) - 1],
              " ".join(sentences))
        for number, (unit, end, sentences) in enumerate(zip(starts, ends, told, strict=True), 1)))


# "parse the flag → print debug lines → document it": two arrows at least.
_ARROW_CHAIN = re.compile(
    r"(?P<first>[^\u2192>]{3,}?)\s*(?:\u2192|->|=>)\s*(?P<second>[^\u2192>]{3,}?)\s*"
    r"(?:\u2192|->|=>)\s*(?P<rest>[^\u2192>]{3,})")


# "Convert them one at a time in this order: `a.py`, `b.py`, and finally `c.py`": the
# items after the colon of a sentence that says they are in order.
_ORDERED_ENUMERATION = re.compile(
    r":\s*(?P<first>[^,;:]{2,}?)[,;]\s*(?P<second>[^,;:]{2,}?)(?:[,;]\s*(?:and\s+)?"
    r"(?:(?:then|finally)\s+)?(?P<rest>[^;:]{2,}))?$", _I)


# "Phases: (1) parse, (2) print, (3) document", in a sentence that speaks of the work.
_INLINE_NUMBERS = re.compile(
    r"\(?1\)\s*(?P<first>[^()]+?(?:\([^()]*\)[^()]*?)?)[,;]?\s*(?:and\s+)?\(?2\)\s*"
    r"(?P<second>[^()]+?(?:\([^()]*\)[^()]*?)?)(?:[,;]?\s*(?:and\s+)?\(?3\)\s*"
    r"(?P<rest>.+))?$")
_NAMES_WORK = re.compile(
    r"\b(?:phases?|steps?|stages?|milestones?|plan|order|sequence|work|tasks?)\b", _I)
_TROUBLE = re.compile(r"\b(?:stuck|blocked|fail\w*|errors?|progress)\b", _I)


def _arrows(text: str) -> int:
    return text.count("\u2192") + text.count("->") + text.count("=>")


def _chained(doc: Document) -> Phases:
    opening = cold_start_lines(doc)
    for index, block in doc.prose():
        if block.first.number in opening or _under_rules(doc, index):
            continue
        for sentence in block.sentences():
            text = ITEM_MARKER.sub("", sentence.text.strip())
            # Each pattern only where its marks are: searched everywhere, they take quadratic
            # time on a long sentence without them.
            lower = text.lower()
            then = lower.count("then") + lower.count("finally") >= 2 and (
                text.count(",") + text.count(";") >= 2)
            chain = (_THEN_CHAIN.search(text) if then else None) or (
                _ARROW_CHAIN.search(CODE_SPAN.sub("", text))
                if _arrows(text) >= 2 and not PROMISE_TAG.search(text) else None)
            inline = _INLINE_NUMBERS.search(text) if "1)" in text and "2)" in text else None
            if chain is None and inline and _NAMES_WORK.search(text) and not _TROUBLE.search(
                    text):
                chain = inline
            if chain is None and ":" in text and IN_ORDER.search(text.split(":", 1)[0]):
                chain = _ORDERED_ENUMERATION.match(text, text.index(":"))
            if chain and not _CONDITION_FIRST.match(text) and not UNORDERED.search(text):
                line = sentence.line_at(chain.start())
                parts = [chain.group("first"), chain.group("second"), chain.group("rest")]
                return Phases(tuple(Phase(number, line, (line,), part.strip())
                                    for number, part in enumerate(
                                        [part for part in parts if part], 1)))
    return Phases(())


def _ordered_list(doc: Document) -> Phases:
    """The items of the first list under a heading, label or intro that says it is in
    order ("Do these one at a time, top to bottom:")."""
    for index, block in enumerate(doc.blocks):
        intro = block.kind == "paragraph" and block.text.endswith(":")
        title = block.sentences()[-1].text if intro else block.title
        # A list under a heading or intro that names its items phases, steps or stages.
        ordered = IN_ORDER.search(title) or _SEQUENTIAL_TITLE.search(title)
        if (block.kind != "heading" and not intro) or not ordered or UNORDERED.search(title):
            continue
        items = _first_list(doc.section(index) if block.kind == "heading"
                            else doc.list_after(index))
        if len(items) < 2 and intro:
            items = _labelled_paragraphs(doc, index)
        if len(items) < 2 and block.kind == "heading":
            # "# Plan (in order)" over "## Parse", "## Print": its sub-headings.
            items = [under for under in doc.section(index) if under.kind == "heading"
                     and under.level > block.level]
        if len(items) >= 2:
            return Phases(tuple(Phase(number, item.first, item.lines)
                                for number, item in enumerate(items, 1)))
    return _named_headings(doc)


def _labelled_paragraphs(doc: Document, index: int) -> list[Block]:
    """The paragraphs right after block `index` that each open with a bold label ("Fix them
    in this order:" over "**H-01, reentrancy.** ...", "**M-01, rounding.** ...")."""
    found = []
    for block in doc.blocks[index + 1:]:
        if block.kind != "paragraph" or not block.text.startswith(("**", "__")):
            break
        found.append(block)
    return found


def _named_headings(doc: Document) -> Phases:
    """Headings that each name a phase, step or stage without a number ("## Phase: parse",
    "## Phase: print"): in the order they come."""
    headings = [block for block in doc.blocks if block.kind == "heading"
                and _UNIT_TITLE.match(block.title)]
    if len(headings) < 2:
        return Phases(())
    return Phases(tuple(Phase(number, heading.first, heading.lines)
                        for number, heading in enumerate(headings, 1)))


def _first_list(blocks: list[Block]) -> list[Block]:
    """The first list's outermost items."""
    items = first_list(blocks)
    outer = min((item.level for item in items), default=0)
    return [item for item in items if item.level == outer]


def _under_rules(doc: Document, index: int) -> bool:
    return any(NOT_WORK.search(heading.title) for heading in doc.headings_over(index))


def first_list(blocks: list[Block]) -> list[Block]:
    """The items of the first list among `blocks` (the run of items before anything else)."""
    items: list[Block] = []
    for block in blocks:
        if block.kind == "item":
            items.append(block)
        elif items:
            break
    return items
