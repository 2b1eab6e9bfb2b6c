"""The parts of a loop prompt that several checks need: promise tags, the completion
signal, the completion criteria, and the phases (found by `phases`, the criteria list
excepted).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from finesse.authoring.prompt_check import commands
from finesse.authoring.prompt_check import phases as phase_finder
from finesse.authoring.prompt_check.document import Block, Document, Line, Sentence
from finesse.authoring.prompt_check.phase_model import Phases
from finesse.authoring.prompt_check.sequence import first_list
from finesse.authoring.prompt_check.vocabulary import (
    CONDITION,
    CRITERIA_INTRO,
    CRITERIA_TITLE,
    EMIT,
    NEGATED_EMIT,
    PHASE_MARKER,
    PROMISE_TAG,
    PROMISE_TALK,
)
from finesse.signals import collapse_whitespace

# "Your final message must be exactly <promise>X</promise>, and only when ...".
FINAL_MESSAGE = re.compile(
    r"\b(?:final|last)\s+(?:message|reply|response|answer|line|output)\b[^.]{0,40}?"
    r"\b(?:be|is|contain\w*|read|say)\b", re.IGNORECASE)
ARROW_TO_TAG = re.compile(r"(?:\u2192|=>|->)\s*[`*_]*<promise>(?!\s*BLOCKED\s*<)", re.IGNORECASE)
# A condition and a colon, then the output: "All four gates green in one iteration: output
# <promise>X</promise>".
COLON_TO_EMIT = re.compile(
    r"\w[^:]{8,200}:\s*(?:then\s+)?(?:output|print|emit|write|reply\s+with|respond\s+with|say)\s+"
    r"[`*_\"']*<promise>(?!\s*BLOCKED\s*<)", re.IGNORECASE)


# A tag for giving up: "BLOCKED", or one the clause before it gives for being stuck ("If
# you're stuck for 3 iterations, output <promise>STUCK</promise>").
_GIVING_UP_CLAUSE = re.compile(
    r"\b(?:blocked|blocking|blockers?|stuck|stall\w*|wall|no\s+(?:progress|headway)|"
    r"(?:without|not)\s+(?:getting|making)\s+(?:anywhere|any\s+progress|progress|headway)|"
    r"going\s+nowhere|can(?:no|['\u2019]?)t\s+(?:proceed|"
    r"continue|progress|make\s+progress|get\s+past)|unable\s+to|give\s+up)\b", re.IGNORECASE)


@dataclass(frozen=True)
class PromiseTag:
    text: str  # whitespace-collapsed, as the loop compares it
    line: Line
    sentence: Sentence | None  # None when the tag sits in code
    clause: str = ""  # the words before the tag, back to the previous tag or sentence start

    @property
    def blocked(self) -> bool:
        """A tag for giving up, not for completion."""
        return self.text.upper() == "BLOCKED" or (
            bool(_GIVING_UP_CLAUSE.search(self.clause))
            and not re.search(r"\b(?:all|every|each|both)\b", self.clause, re.IGNORECASE))


class Prompt:
    """A parsed prompt, the flags the loop runs it with (when the caller knows them), and the
    structures that several checks share, each found once.

    `promise` is the loop's --completion-promise: the Stop hook ends the loop on
    `<promise>TEXT</promise>` with that TEXT (whitespace collapsed) and on nothing else.
    `max_iterations` is its --max-iterations: the loop stops there whatever the text says.
    """

    def __init__(self, text: str, promise: str | None = None,
                 max_iterations: int | None = None) -> None:
        self.doc = Document.parse(text)
        self.promise = None if promise is None else collapse_whitespace(promise)
        self.max_iterations = max_iterations

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
    def command_names(self) -> frozenset[str]:
        return commands.command_names(self.doc)

    @cached_property
    def programs(self) -> frozenset[str]:
        return commands.programs(self.doc)

    @cached_property
    def tool_names(self) -> frozenset[str]:
        """What the prompt calls its checks: the names it gives its commands and the
        programs they run ("mypy is clean" speaks of `mypy src`'s result)."""
        return self.command_names | self.programs

    @cached_property
    def phases(self) -> Phases:
        return find_phases(self.doc, criteria_list(self.doc))


def promise_tags(doc: Document) -> list[PromiseTag]:
    tags: list[PromiseTag] = []
    for block in doc.blocks:
        if block.kind == "code":
            tags += [PromiseTag(collapse_whitespace(match.group(1)), line, None)
                     for line in block.lines for match in PROMISE_TAG.finditer(line.text)]
            continue
        for sentence in block.sentences():
            tags += [PromiseTag(collapse_whitespace(match.group(1)),
                                sentence.line_at(match.start()), sentence,
                                _clause_before(sentence.text, match.start()))
                     for match in PROMISE_TAG.finditer(sentence.text)]
    return tags


def instructs_output(text: str) -> bool:
    """Whether `text` tells the agent to output something on a condition (not to withhold it).
    An arrow straight into the tag reads as "then output": "All 3 green → <promise>X</promise>";
    so does a colon before the output: "All four gates green: output <promise>X</promise>";
    so does the final message's content: "Your final message must be <promise>X</promise>
    when ..."."""
    if (ARROW_TO_TAG.search(text) or COLON_TO_EMIT.search(text)
            or (FINAL_MESSAGE.search(text) and CONDITION.search(text))):
        return True
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
    """The top-level items of the list(s) of completion criteria: conditions, not the
    items that give the signal or a rule about the promise."""
    return [item for item in criteria_list(doc)
            if not PROMISE_TAG.search(item.text) and not PROMISE_TALK.search(item.text)]


def criteria_list(doc: Document) -> list[Block]:
    """The top-level items of the list(s) under a completion heading or intro."""
    items: list[Block] = []
    for index, block in enumerate(doc.blocks):
        if block.kind == "heading" and CRITERIA_TITLE.search(block.title):
            if not PHASE_MARKER.match(block.first.text):
                items += first_list(doc.section(index))
        elif block.kind != "code" and block.text.endswith(":"):
            intro = block.sentences()[-1].text
            if PROMISE_TAG.search(intro) or CRITERIA_INTRO.search(intro):
                # A list item introduces its own sub-items, not its siblings.
                items += _introduced(block, doc.list_after(index))
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
    before = _BEFORE_EMIT.search(head)
    if before and not _ONLY_A_LABEL.fullmatch(before.group("condition")):
        # "All four checks pass in one iteration, then output ...", "All gates green: output
        # ...": the condition comes first (less a "Done:" label).
        criteria = before.group("condition").strip(" .:,")
        return "" if CRITERIA_INTRO.search(criteria) else criteria
    for part in (tail, head):
        condition = CONDITION.search(part)
        if condition:
            criteria = part[condition.end() :].strip(" .:,")
            return "" if CRITERIA_INTRO.search(criteria) else criteria
    return ""


_BEFORE_EMIT = re.compile(
    r"^(?:\W*(?:done|exit|finish|completion|success)\W*:[*_]*\s*)?"
    r"(?P<condition>\W*\w[^:]*?)(?:,\s*(?:and\s+)?(?:only\s+)?then|:)\s*"
    r"(?:output|print|emit|write|say|reply\s+with|respond\s+with)\W*$", re.IGNORECASE)
_ONLY_A_LABEL = re.compile(r"\W*(?:done|exit|finish\w*|complet\w*|success|signal|when\s+done)\W*",
                           re.IGNORECASE)


def find_phases(doc: Document, criteria: Sequence[Block] | None = None) -> Phases:
    """The prompt's phases (`finesse.authoring.prompt_check.phases`), the criteria list
    excepted."""
    return phase_finder.find_phases(doc, criteria_list(doc) if criteria is None else criteria)


_CLAUSE_CHARS = 120


def _clause_before(text: str, at: int) -> str:
    """The words before position `at`, back to the previous tag's end (or the start)."""
    head = text[max(0, at - _CLAUSE_CHARS - len("</promise>")):at]
    return head[head.lower().rfind("</promise>") + 1:][-_CLAUSE_CHARS:]


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


def _introduced(intro: Block, items: list[Block]) -> list[Block]:
    """The items a block ending in ':' introduces: a list item, only its own sub-items."""
    if intro.kind != "item":
        return items
    introduced = []
    for item in items:
        if item.level <= intro.level:
            break
        introduced.append(item)
    return introduced



