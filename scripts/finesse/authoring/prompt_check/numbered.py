"""Work numbered 1, 2, 3... in whatever layout a writer picks: a numbered list under any
heading about the work ("## What to build"), lines that open with a number in bold
("**1. Lexer** — ..."), or keys numbered under a "phases:" key ("  1: ...").

Numbers give the order, so such a list is the plan unless it is plainly something else:
under a heading about rules, scope, notes, the criteria, being stuck or the start of each
iteration; in the opening (the cold start's own steps); a list of rules ("Do not ...", "If
..."); or in a prompt that says its work can be done in any order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from finesse.authoring.prompt_check.commands import invocation
from finesse.authoring.prompt_check.document import Block, Document, Line
from finesse.authoring.prompt_check.opening import cold_start_lines
from finesse.authoring.prompt_check.phase_model import Phase, Phases
from finesse.authoring.prompt_check.vocabulary import (
    CODE_SPAN,
    COMMAND_ARROW,
    CRITERIA_TITLE,
    IN_ORDER,
    NOT_WORK,
    PHASE_WORDS,
    UNORDERED,
    VERIFY,
    number_value,
)

_I = re.IGNORECASE
# "**1. Lexer** —", "1) backoff ...", "__2 — Parser__", "  3: docs ...", "### B. Print",
# "- [ ] 2. print", "#3", "(4)", "[5]", "6️⃣".
NUMBERED_LINE = re.compile(
    r"^\s*+(?:#{1,6}\s++)?(?:[-*+]\s++)?(?:\[[ xX]\]\s++)?(?:\*\*|__)?\s*+"
    r"(?:(?P<number>\d{1,2}|(?-i:[A-H])(?=[.)]))(?:st|nd|rd|th)?\s*(?:[.):]|\s[\u2014\u2013-])|"
    r"[#(\[](?P<mark>\d{1,2}|(?-i:[a-h])(?=\)))[)\]]?\s|(?P<key>\d)\ufe0f?\u20e3|"
    r"(?P<letter>(?-i:[a-h]))\)\s)(?:\*\*|__)?\s*\S")
# Headings over lists that are not the work (beyond `NOT_WORK`).
_NOT_THE_PLAN = re.compile(
    r"\b(?:how\s+to\s+work|each\s+iteration|every\s+iteration|cold[- ]start|start\s+here|"
    r"orientation|protocol|first\s+thing|before\s+(?:you|anything)|iteration\s+start|"
    r"verification|checks?)\b", _I)
_OPENING_LINES = 8
_RULE_START = re.compile(
    r"^\s*+(?:[-*+]|\d{1,3}[.)])?\s*+[*_]*+(?:do\s+not|don['\u2019]?t|never|always|avoid|if|when|"
    r"whenever|only|no\s|must|keep|run|read)\b", _I)


def numbered_phases(doc: Document, criteria: Sequence[Block]) -> Phases:
    """The first run of lines numbered 1, 2, 3... that is the plan (see the module doc)."""
    if any(UNORDERED.search(block.text) for _, block in doc.prose()):
        return Phases(())
    # The cold start's own steps; not a whole prompt written as one block of keys.
    first = cold_start_lines(doc)
    opening = first if len(first) <= _OPENING_LINES else frozenset()
    skipped = {line.number for item in criteria for line in item.lines}
    starts: list[tuple[int, Line]] = []
    block_of = {line.number: index for index, block in enumerate(doc.blocks)
                for line in block.lines}
    for line in doc.lines:
        match = NUMBERED_LINE.match(line.text)
        if (match is None or line.number in doc.code_lines or line.number in opening
                or line.number in skipped or not _about_work(doc, block_of[line.number])):
            continue
        number = number_value(match.group("number") or match.group("mark") or match.group("key")
                              or match.group("letter"))
        if number == 1 and len(starts) < 2:
            starts = [(1, line)]
        elif starts and number == starts[-1][0] + 1:
            starts.append((number, line))
        elif len(starts) >= 2:
            break
    rules = sum(1 for _, line in starts if _RULE_START.match(_after_number(line.text)))
    if len(starts) < 2 or rules * 2 >= len(starts) or not _named_as_work(doc, starts):
        return Phases(())
    ends = [line.number for _, line in starts[1:]]
    ends.append(_end_of(doc, block_of[starts[-1][1].number]))
    return Phases(tuple(Phase(number, line, doc.lines[line.number - 1: end - 1])
                        for (number, line), end in zip(starts, ends, strict=True)))


def _after_number(text: str) -> str:
    match = NUMBERED_LINE.match(text)
    return text[match.end() - 1:] if match else text


def _about_work(doc: Document, index: int) -> bool:
    titles = [heading.title for heading in doc.headings_over(index)]
    return not any(NOT_WORK.search(title) or _NOT_THE_PLAN.search(title) or (
        CRITERIA_TITLE.search(title) and not PHASE_WORDS.search(title)) for title in titles)


def _named_as_work(doc: Document, starts: list[tuple[int, Line]]) -> bool:
    """Whether something says the numbered lines are the work: a heading over them, a line
    ending in ':' right above the first ("phases:", "What to build:"), or the prompt
    speaking of its phases, steps or order elsewhere."""
    first = starts[0][1]
    index = next(at for at, block in enumerate(doc.blocks) if first in block.lines)
    above = doc.lines[first.number - 2].text.rstrip() if first.number > 1 else ""
    if doc.headings_over(index) or doc.blocks[index].kind == "heading" or above.endswith(":") or (
            not above and index and doc.blocks[index - 1].text.endswith(":")):
        return True
    numbered = {line.number for _, line in starts}
    checked = sum(1 for _, line in starts if VERIFY.search(line.text) or COMMAND_ARROW.search(
        line.text) or any(invocation(span.strip("`")) for span in CODE_SPAN.findall(line.text)))
    if checked >= len(starts) - 1:
        return True
    return any((PHASE_WORDS.search(block.text) or IN_ORDER.search(block.text))
               and not numbered & {line.number for line in block.lines}
               for _, block in doc.prose())


def _end_of(doc: Document, index: int) -> int:
    """Where the last numbered phase ends: after its block, and the indented items or code
    right under it."""
    end = doc.blocks[index].lines[-1].number + 1
    for block in doc.blocks[index + 1:]:
        if block.kind == "code" or (block.kind == "item" and block.level > 0) or (
                block.first.text[:1].isspace() and block.kind != "heading"):
            end = block.lines[-1].number + 1
            continue
        break
    return end
