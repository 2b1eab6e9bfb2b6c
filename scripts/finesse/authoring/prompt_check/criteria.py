"""What attribute 1 reads: the completion condition, the criteria, and the phases a
command checks (how each is judged: `quality`)."""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import ITEM_MARKER, LIST_MARKER, Block, Line
from finesse.authoring.prompt_check.holdback import NEGATED_CLAIM
from finesse.authoring.prompt_check.phase_model import Phase
from finesse.authoring.prompt_check.quality import CHECKABLE, DONE_WHEN
from finesse.authoring.prompt_check.quality import vague_word as vague_word  # spec_fields
from finesse.authoring.prompt_check.reading import PromiseTag, Prompt, inline_criteria
from finesse.authoring.prompt_check.vocabulary import (
    ARROW,
    CODE_SPAN,
    COMMAND_ARROW,
    NEGATED_EMIT,
    PROMISE_TAG,
    SUBAGENT_NOTE,
    THEN,
    VERIFY,
    looks_like_command,
)

# A criterion under a phase: a list item or an outline-numbered line ("1.3.1 ...").
_CRITERION_LINE = re.compile(rf"^\s*+(?:{LIST_MARKER}|\d{{1,3}}(?:\.\d{{1,3}})+[.)]?)\s+\S")
# A phase line that goes on after its name: "**Step 1 — Verify.** `x` should check ...".
_SENTENCE_THEN_MORE = re.compile(r"[.!?][*_]*\s+\S")
# A command the phase runs, or gives under any label: "Run `pytest -q` to confirm", "Test:
# `pytest -q`", "Gate: `make check`".
RUN_OR_LABEL = re.compile(
    r"\b(?:run|re-?run|execute|rerun)\s+`([^`]+)`|"
    r"(?:^|[.;]\s|\s[-*]\s|^\s*[-*]\s)[*_]*[A-Za-z][\w-]*(?:\s+[\w-]+){0,2}[*_]*\s*:[*_]*"
    r"\s*`([^`]+)`",
    re.I)
_DONE_LABEL = re.compile(
    r"^[\s*_]*+(?:done|complete|completion|finished|finish|success|signal)[\s*_:]*$", re.I)


def completion_conditions(prompt: Prompt) -> list[tuple[str, Line]]:
    """What the completion signal waits for ("when ALL phases are complete and ..."), or,
    in a prompt without a signal, what "finished" or "complete" is said to mean. A line
    ending in ':' introduces the list of criteria: the items are the conditions then."""
    found = [(condition, _line_of(tag, condition)) for tag in prompt.signals
             if tag.sentence is None or not _introduces_list(tag.sentence.text)
             for condition in [signal_condition(tag)]]
    if not prompt.signals:
        for sentence in prompt.doc.sentences():
            text = sentence.text
            match = DONE_WHEN.search(text)
            withheld = NEGATED_EMIT.search(text) or NEGATED_CLAIM.search(text)
            if match and not withheld and not _introduces_list(text):
                found.append((text[match.end():], sentence.line_at(match.start())))
    return [(text, line) for text, line in found if text.strip()]


def _line_of(tag: PromiseTag, condition: str) -> Line:
    """The line where the condition starts (it may begin on a line above the tag)."""
    sentence = tag.sentence
    if sentence is None or not condition.strip():
        return tag.line
    at = sentence.text.find(condition.strip())
    return sentence.line_at(at) if at >= 0 else tag.line


def _introduces_list(text: str) -> bool:
    return text.rstrip(" *_").endswith(":")


def signal_condition(tag: PromiseTag) -> str:
    """The condition of a signal; for "... pass in the same iteration. Then output <promise>X
    </promise>", the sentence before it."""
    sentence = tag.sentence
    if sentence is not None and THEN.match(ITEM_MARKER.sub("",
                                                  sentence.text)):
        earlier = [s for s in sentence.block.sentences() if s.offset < sentence.offset]
        # "Then, and only then, output ..." under the list of criteria: they are the condition.
        return earlier[-1].text if earlier else ""
    if sentence is not None:
        head = sentence.text[: sentence.text.lower().find("<promise>")]
        arrow = ARROW.search(head)
        # "All four checks pass → output <promise>X</promise>"; not "Done → print ... when".
        if arrow and not _DONE_LABEL.match(head[: arrow.start()]):
            return head[: arrow.start()]
    return inline_criteria(tag)


def phase_verified(phase: Phase, names: frozenset[str] = frozenset()) -> bool:
    """Whether a command checks the phase: a Verify line (or "check:", "→ `cmd`") naming
    one, or one of the prompt's command `names` ("Verify: asan build+test", the name of a
    command in a table), a command and an arrow to what it shows ("`bats test/` → all ok"),
    or a sentence giving a command's result ("`cargo test x` passes")."""
    for text, _ in _phase_sentences(phase):
        label = VERIFY.search(text)
        rest = text[label.end():] if label else ""
        named = rest.strip(" *_:").lower()
        if label and (looks_like_command(rest) or any(
                re.match(rf"{re.escape(name)}(?![\w-])", named) for name in names)):
            return True
        if any(looks_like_command(span) for span in COMMAND_ARROW.findall(text)):
            return True
        if any(looks_like_command(match.group(1) or match.group(2))
               for match in RUN_OR_LABEL.finditer(text)):
            return True
        spans = [span.strip("`") for span in CODE_SPAN.findall(text)]
        if CHECKABLE.search(CODE_SPAN.sub(" ", text)) and any(
                looks_like_command(span) for span in spans):
            return True
    return False


def phase_criteria(prompt: Prompt) -> set[int]:
    """The ids of the criteria items that sit inside a phase a command checks ("phase_1:
    ... criteria: - ... verify: `cmd`"): that phase's command checks them, whatever they
    say. Not the items a completion signal introduces ("Output <promise>X</promise> when
    ALL of the following are true:"), even under the last phase's heading."""
    inside = {line.number for phase in prompt.phases.found
              if phase_verified(phase, prompt.command_names) for line in phase.region}
    found: set[int] = set()
    intro: Block | None = None
    criteria = {id(item) for item in prompt.criteria}
    for block in prompt.doc.blocks:
        if block.kind != "item":
            intro = block
        elif (id(block) in criteria and block.first.number in inside
              and not (intro is not None and PROMISE_TAG.search(intro.text))):
            found.add(id(block))
    return found


def _phase_sentences(phase: Phase) -> list[tuple[str, Line]]:
    if phase.told:
        return [(phase.told, phase.line)]
    return [(line.text, line) for line in phase.region]


def phase_statements(phase: Phase) -> list[tuple[str, Line]]:
    """A phase's statements: its text up to a Verify label, without subagent notes. A phase
    whose line only names it, over a list of its criteria ("Phase 3: Polish for release"
    over "- All tests pass"), is its criteria: the name is the deliverable (the seed's
    template puts "Phase 1: [specific deliverable]" over "- [verifiable criterion]")."""
    statements = []
    for text, line in _phase_sentences(phase):
        label = VERIFY.search(text)
        text = text[: label.start()] if label else text
        if text.strip() and not SUBAGENT_NOTE.search(text):
            statements.append((text, line))
    if (not phase.told and len(statements) > 1 and statements[0][1] == phase.line
            and not _SENTENCE_THEN_MORE.search(phase.line.text.strip())
            and any(_CRITERION_LINE.match(text) for text, _ in statements[1:])):
        return statements[1:]
    return statements
