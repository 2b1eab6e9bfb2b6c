"""The parts of a loop prompt that several checks need: promise tags, the completion
signal, the completion criteria, and the phases with the lines each one spans.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from finesse.authoring.prompt_check.document import LABEL_LEVEL, Block, Document, Line, Sentence
from finesse.authoring.prompt_check.vocabulary import (
    CONDITION,
    CRITERIA_INTRO,
    CRITERIA_TITLE,
    EMIT,
    NEGATED_EMIT,
    PHASE_LIST_TITLE,
    PHASE_MARKER,
    PROMISE_TAG,
    number_value,
)
from finesse.signals import collapse_whitespace


@dataclass(frozen=True)
class PromiseTag:
    text: str  # whitespace-collapsed, as the loop compares it
    line: Line
    sentence: Sentence | None  # None when the tag sits in code

    @property
    def blocked(self) -> bool:
        return self.text.upper() == "BLOCKED"


@dataclass(frozen=True)
class Phase:
    number: int
    line: Line
    region: tuple[Line, ...]  # its lines, up to the next phase or the next heading above it


@dataclass(frozen=True)
class Phases:
    found: tuple[Phase, ...]
    problem: Line | None = None  # where the numbering goes wrong
    problem_fix: str = ""


class Prompt:
    """A parsed prompt, the promise the loop expects, and the structures that several checks
    share, each found once."""

    def __init__(self, text: str, promise: str | None = None) -> None:
        self.doc = Document.parse(text)
        self.promise = promise

    @cached_property
    def tags(self) -> list[PromiseTag]:
        return promise_tags(self.doc)

    @cached_property
    def signals(self) -> list[PromiseTag]:
        return completion_signals(self.doc, self.tags)

    @cached_property
    def criteria(self) -> list[Block]:
        return criteria_items(self.doc)

    @cached_property
    def phases(self) -> Phases:
        return find_phases(self.doc, self.criteria)


def promise_tags(doc: Document) -> list[PromiseTag]:
    tags: list[PromiseTag] = []
    for block in doc.blocks:
        if block.kind == "code":
            tags += [PromiseTag(collapse_whitespace(match.group(1)), line, None)
                     for line in block.lines for match in PROMISE_TAG.finditer(line.text)]
            continue
        for sentence in block.sentences():
            tags += [PromiseTag(collapse_whitespace(match.group(1)),
                                sentence.line_at(match.start()), sentence)
                     for match in PROMISE_TAG.finditer(sentence.text)]
    return tags


def instructs_output(text: str) -> bool:
    """Whether `text` tells the agent to output something on a condition (not to withhold it)."""
    if not CONDITION.search(text):
        return False
    negated = {match.end() for match in NEGATED_EMIT.finditer(text)}
    return any(match.end() not in negated for match in EMIT.finditer(text))


def completion_signals(doc: Document,
                       tags: Sequence[PromiseTag] | None = None) -> list[PromiseTag]:
    """Promise tags other than BLOCKED that come with an instruction to output them."""
    signals = []
    instructed: dict[int, bool] = {}  # per sentence: many tags may share a long one
    for tag in promise_tags(doc) if tags is None else tags:
        if tag.blocked:
            continue
        if tag.sentence is not None and id(tag.sentence) not in instructed:
            instructed[id(tag.sentence)] = instructs_output(tag.sentence.text)
        if instructed.get(id(tag.sentence), False) or (
            _stands_alone(tag) and instructs_output(_text_above(tag.line, doc))
        ):
            signals.append(tag)
    return signals


def criteria_items(doc: Document) -> list[Block]:
    """The top-level items of the list(s) of completion criteria."""
    items: list[Block] = []
    for index, block in enumerate(doc.blocks):
        if block.kind == "heading" and CRITERIA_TITLE.search(block.title):
            if not PHASE_MARKER.match(block.first.text):
                items += _first_list(doc.section(index))
        elif block.kind != "code" and block.text.endswith(":"):
            intro = block.sentences()[-1].text
            if PROMISE_TAG.search(intro) or CRITERIA_INTRO.search(intro):
                items += doc.list_after(index)
    unique = list({id(item): item for item in items}.values())
    if not unique:
        return []
    outer = min(item.level for item in unique)
    return [item for item in unique if item.level == outer]


def inline_criteria(signal: PromiseTag) -> str:
    """The condition of a signal that has no list: "Output <promise>X</promise> when `make
    test` exits 0", or "When `make test` exits 0, output <promise>X</promise>"."""
    if signal.sentence is None:
        return ""
    text = signal.sentence.text
    tail = text[text.lower().rfind("</promise>") + len("</promise>") :]
    head = text[: text.lower().find("<promise>")]
    for part in (tail, head):
        condition = CONDITION.search(part)
        if condition:
            criteria = part[condition.end() :].strip(" .:,")
            return "" if CRITERIA_INTRO.search(criteria) else criteria
    return ""


def find_phases(doc: Document, criteria: Sequence[Block] | None = None) -> Phases:
    """"Phase 1 / Phase 2" (or Step, Stage) lines; else a numbered list under a heading or
    an intro about phases, steps, a plan, requirements or tasks (and not the criteria)."""
    marked = _marked_phases(doc)
    if len(marked.found) >= 2 or marked.problem is not None:
        return marked
    listed = _listed_phases(doc, criteria_items(doc) if criteria is None else criteria)
    return listed if listed.found or listed.problem else marked


def _stands_alone(tag: PromiseTag) -> bool:
    bare = tag.line.text.strip().lstrip(">").strip("`*_ ")  # "> `<promise>X</promise>`"
    return tag.sentence is None or PROMISE_TAG.fullmatch(bare) is not None


def _text_above(line: Line, doc: Document) -> str:
    """The nearest non-blank prose line above `line`, where its instruction would be."""
    for number in range(line.number - 1, 0, -1):
        earlier = doc.lines[number - 1]
        if earlier.text.strip() and number not in doc.code_lines:
            return earlier.text
    return ""


def _marked_phases(doc: Document) -> Phases:
    starts: list[tuple[int, Line]] = []
    for line in doc.lines:
        match = PHASE_MARKER.match(line.text)
        if match is None or line.number in doc.code_lines:
            continue
        number = number_value(match.group(1))
        if any(number == seen for seen, _ in starts):
            continue  # a later mention of a phase already named
        if number != len(starts) + 1:
            return Phases((), line, f"number the phases 1, 2, 3... in order: this is phase "
                                    f"{number} after phase {len(starts)}")
        starts.append((number, line))
    next_heading = _next_heading(doc)
    phases = []
    for position, (number, line) in enumerate(starts):
        stops = [next_heading(line)]
        if position + 1 < len(starts):
            stops.append(starts[position + 1][1].number)
        phases.append(Phase(number, line, doc.lines[line.number - 1 : min(stops) - 1]))
    return Phases(tuple(phases))


def _next_heading(doc: Document) -> Callable[[Line], int]:
    """Where a phase that starts at a line ends: the next heading of its level or above."""
    headings = [(block.first.number, block.level) for block in doc.blocks
                if block.kind == "heading"]
    levels = dict(headings)

    def end(line: Line) -> int:
        own = levels.get(line.number, LABEL_LEVEL)
        later = (number for number, level in headings if number > line.number and level <= own)
        return next(later, len(doc.lines) + 1)

    return end


def _listed_phases(doc: Document, criteria_list: Sequence[Block]) -> Phases:
    criteria = {id(item) for item in criteria_list}
    for index, block in enumerate(doc.blocks):
        if block.kind == "heading":
            title, under = block.title, doc.section(index)
        elif block.kind == "paragraph" and block.text.endswith(":"):
            title, under = block.sentences()[-1].text, doc.list_after(index)
        else:
            continue
        if not PHASE_LIST_TITLE.search(title) or CRITERIA_TITLE.search(title):
            continue
        items = _first_numbered_list(under)
        if len(items) < 2 or any(id(item) in criteria for item in items):
            continue
        ordinals = [item.ordinal for item in items]
        # "1. 1. 1." is Markdown's own numbering: it renders as 1, 2, 3.
        if ordinals != list(range(1, len(items) + 1)) and set(ordinals) != {1}:
            wrong = next(i for n, i in enumerate(items, 1) if i.ordinal != n)
            return Phases((), wrong.first, "number the steps 1, 2, 3... in order")
        last = items[-1].first.number
        stops = [item.first.number for item in items[1:]]
        stops.append(next((b.first.number for b in doc.blocks[index + 1 :]
                           if b.kind == "heading" and b.first.number > last), len(doc.lines) + 1))
        return Phases(tuple(
            Phase(position, item.first, doc.lines[item.first.number - 1 : stop - 1])
            for position, (item, stop) in enumerate(zip(items, stops, strict=True), 1)
        ))
    return Phases(())


def _first_list(blocks: list[Block]) -> list[Block]:
    items: list[Block] = []
    for block in blocks:
        if block.kind == "item":
            items.append(block)
        elif items:
            break
    return items


def _first_numbered_list(blocks: list[Block]) -> list[Block]:
    """The first numbered list, across indented paragraphs or code that sit between items."""
    items: list[Block] = []
    for block in blocks:
        if block.kind == "item":
            items.append(block)
        elif items and not (block.kind == "code" or block.first.text[:1].isspace()):
            break
    numbered = [item for item in items if item.ordinal is not None]
    if not numbered:
        return []
    outer = min(item.level for item in numbered)
    return [item for item in numbered if item.level == outer]
