"""Attribute 10, zero ambiguity about "done": the prompt leaves the agent no room to
convince itself it is done when it is not.

It passes on either of two signs (their words: `holdback`):
- anywhere, a rule that withholds the promise, or the claim of being done, until every
  criterion holds: "Do not output the completion promise unless every criterion is met",
  "Never call it done with anything red", "If anything is red it isn't done",
  "Outputting the promise before every check passes is forbidden";
- a signal that waits for every criterion ("Output X when ALL phases verify"), and a cue
  that holds it back, in the completion section around it (the signal's paragraph, the
  criteria under it and what follows about the promise, or the whole section under a
  "Completion"/"Done" heading) or in any sentence about the promise: "— not a moment
  earlier", "Not before.", "This must be unequivocally true", "don't fudge it", "never on a
  hunch", "no exceptions", "Only then".
A permission to finish anyway ("close enough is fine", "print it anyway", "if you're fairly
confident it's basically there") fails the attribute whatever else the prompt says, unless
the same sentence refuses ("even if you're fairly confident, don't print it until ...").
An honesty clause alone ("don't output it just to get out of the loop") is not enough.
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.criteria import signal_condition
from finesse.authoring.prompt_check.document import Block, Document, Line, Sentence
from finesse.authoring.prompt_check.holdback import (
    CUE,
    EARLY,
    GATED_CLAIM,
    GERUND_REFUSAL,
    LENIENT,
    NEGATED_BEFORE,
    NEGATED_CLAIM,
    NOT_DONE,
    ONLY_EMIT,
    PASSIVE_NEGATED_EMIT,
    STRONG_CUE,
    UNIVERSAL,
    UNTIL_ALL,
    WHILE_NOT,
)
from finesse.authoring.prompt_check.memo import per_text
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict
from finesse.authoring.prompt_check.vocabulary import (
    EMIT,
    EMIT_WORDS,
    NEGATED_EMIT,
    PROMISE_TAG,
    PROMISE_TALK,
    THEN,
)

_I = re.IGNORECASE
EMIT_PRONOUN = re.compile(rf"\b{EMIT_WORDS}\s+(?:it|that|this)\b", _I)
DONE_WORDS = r"<promise>|\bpromise\b|\bcompletion\b|\bcomplete\b|\bdone\b|\bfinished\b"
_BLOCKED = re.compile(r"<promise>\s*BLOCKED\s*</promise>", _I)
# A heading over the completion section: "## Completion", "**Done**", "Finish line".
_COMPLETION_TITLE = re.compile(
    r"\b(?:done|complet\w*|finish\w*|exit|signal|promise|success|end|wrap\w*)\b", _I)

# Turning the leniency down after naming it: "Being 'pretty sure' isn't enough".
_NOT_ENOUGH = re.compile(
    r"\b(?:is\s+not|isn['\u2019]t|are\s+not|aren['\u2019]t|not)\s+(?:good\s+)?enough\b|"
    r"\b(?:does\s+not|doesn['\u2019]t|won['\u2019]t|will\s+not)\s+(?:count|do|cut\s+it)\b", _I)
FIX = "add 'Do not output the completion promise unless every criterion above is met.'"
LENIENT_FIX = ("remove the permission to finish anyway: output the promise only when every "
               "criterion is met")


def zero_ambiguity_found(prompt: Prompt) -> tuple[bool, Line | None, str]:
    """Whether the prompt withholds "done" until every criterion holds: (passed, the line
    that shows it or what undoes it, the fix)."""
    sentences = list(prompt.doc.sentences())
    for sentence in sentences:
        lenient = _lenient(sentence.text)
        if lenient is not None:
            return False, sentence.line_at(lenient), LENIENT_FIX
    promised = sorted({re.escape(tag.text) for tag in prompt.tags if tag.text})
    done = re.compile("|".join([DONE_WORDS, *promised]), _I)
    before = ""
    for sentence in sentences:
        at = _withholds(sentence.text, before, done)
        if at is not None:
            return True, sentence.line_at(at), ""
        before = sentence.text
    held = _held_back(prompt, sentences, promised)
    if held is not None:
        return True, held, ""
    return False, None, FIX


def _withholds(text: str, before: str, done: re.Pattern[str]) -> int | None:
    """Where `text` withholds the promise or the claim of being done until every criterion
    holds (`before` is the sentence before it, for "it")."""
    withheld = (NEGATED_EMIT.search(text) or PASSIVE_NEGATED_EMIT.search(text)
                or ONLY_EMIT.search(text))
    about_promise = done.search(text) or (
        EMIT_PRONOUN.search(text) and PROMISE_TALK.search(before))
    if withheld and about_promise and UNTIL_ALL.search(text):
        return withheld.start()
    gated = GATED_CLAIM.search(text)
    if gated:
        return gated.start()
    refused = NEGATED_CLAIM.search(text) or NOT_DONE.search(text)
    if refused and (UNTIL_ALL.search(text) or WHILE_NOT.search(text)):
        return refused.start()
    gerund = GERUND_REFUSAL.search(text)
    pointed = gerund and re.match(r"\w+\s+(?:it|that|this)\b", text[gerund.start():])
    if gerund and (about_promise or (pointed and done.search(before))) and (
            UNTIL_ALL.search(text) or EARLY.search(text)):
        return gerund.start()
    return None


def _held_back(prompt: Prompt, sentences: list[Sentence], promised: list[str]) -> Line | None:
    """The line of a cue that holds back a signal waiting for every criterion: any cue in
    the completion section, a strong one after the signal (up to the next heading) or in a
    sentence about the promise; None when there is none."""
    doc = prompt.doc
    region: list[Sentence] = []
    after: set[int] = set()
    for tag in prompt.signals:
        if tag.sentence is None:
            continue
        blocks = completion_section(doc, tag.sentence.block)
        texts = [block.text for block in blocks] + [signal_condition(tag)]
        if not any(UNIVERSAL.search(_without_blocked(text)) for text in texts):
            continue
        region += [sentence for block in blocks for sentence in block.sentences()]
        after |= _sentences_after(sentences, tag.sentence)
    about = re.compile("|".join([PROMISE_TALK.pattern, *promised]), _I)
    for sentence in region:
        cue = CUE.search(_without_blocked(sentence.text)) or STRONG_CUE.search(
            _without_blocked(sentence.text))
        if cue:
            return sentence.line_at(cue.start())
    if not region:
        return None
    for sentence in sentences:
        text = _without_blocked(sentence.text).strip()
        if id(sentence) in after or about.search(text) or NOT_DONE.search(text):
            cue = STRONG_CUE.search(text)
            if cue:
                return sentence.line_at(cue.start())
    return None


def _sentences_after(sentences: list[Sentence], signal: Sentence) -> set[int]:
    """The ids of the sentences after the `signal`, up to the next heading."""
    found: set[int] = set()
    seen = False
    for sentence in sentences:
        if seen and sentence.block.kind == "heading":
            break
        if seen:
            found.add(id(sentence))
        seen = seen or sentence is signal
    return found


def completion_section(doc: Document, block: Block) -> list[Block]:
    """The blocks about completion around the signal's `block`: the section under a
    completion heading over it, else the block, the list right after it, and the paragraph
    after that when it speaks of the promise."""
    index = next(at for at, candidate in enumerate(doc.blocks) if candidate is block)
    over = doc.headings_over(index)
    if block.kind == "item" and over and over[0].title and not _COMPLETION_TITLE.search(
            over[0].title):
        return [block, *_sub_items(doc, index)]
    if over and _COMPLETION_TITLE.search(over[0].title):
        heading = next(at for at, candidate in enumerate(doc.blocks) if candidate is over[0])
        return [over[0], *doc.section(heading)]
    following = [block, *doc.list_after(index)]
    after = index + len(following)
    blocks = [*_list_before(doc, index), *following]
    if after < len(doc.blocks) and doc.blocks[after].kind == "paragraph":
        text = doc.blocks[after].text
        if re.search(DONE_WORDS, text, _I) or EMIT.search(text) or PROMISE_TAG.search(text):
            blocks.append(doc.blocks[after])
    return blocks


def _list_before(doc: Document, index: int) -> list[Block]:
    """For a signal that opens with "Then" right under a list ("  - `ct lint` exits 0" then
    "Then, and only then, print ..."): that list and the line that introduces it."""
    block = doc.blocks[index]
    if block.kind != "paragraph" or not THEN.match(block.text) or index == 0 or (
            doc.blocks[index - 1].kind != "item"):
        return []
    start = index - 1
    while start > 0 and doc.blocks[start - 1].kind == "item":
        start -= 1
    lead = start - 1 if start > 0 and doc.blocks[start - 1].kind != "code" else start
    return list(doc.blocks[lead:index])


def _sub_items(doc: Document, index: int) -> list[Block]:
    level = doc.blocks[index].level
    found = []
    for block in doc.blocks[index + 1:]:
        if block.kind != "item" or block.level <= level:
            break
        found.append(block)
    return found


def _without_blocked(text: str) -> str:
    """`text` less a sentence's BLOCKED rule: its words are about giving up, not done."""
    return "" if _BLOCKED.search(text) else text


@per_text
def _lenient(text: str) -> int | None:
    """Where `text` lets the agent finish anyway (not "no close enough", not BLOCKED, not
    in a sentence that refuses: "even if you're fairly confident, don't print it")."""
    if (_BLOCKED.search(text) or NEGATED_EMIT.search(text) or NEGATED_CLAIM.search(text)
            or _NOT_ENOUGH.search(text)):
        return None
    return next((match.start() for match in LENIENT.finditer(text)
                 if not NEGATED_BEFORE.search(text[: match.start()])), None)


def check(prompt: Prompt) -> Verdict:
    return Verdict.of(*zero_ambiguity_found(prompt))


RULE = Rule(
    id=10,
    key="zero-ambiguity",
    definition=("No room for the agent to convince itself it's done when it isn't. Include: \"Do "
                "not output the completion promise unless every criterion is met. Do not lie even "
                "if you think you should exit.\""),
    check=check,
    passes=(
        "Do not output the completion promise unless every criterion is met.\n",
        ("Output <promise>DONE</promise> when ALL of the following are true:\n- `pytest -q` exits "
         "0\n\nThis must be unequivocally true.\n"),
        "Do NOT mark a task complete unless tests pass.\n",
        "Never set `\"passes\": true` without its gate actually passing.\n",
    ),
    fails=(
        "Output <promise>DONE</promise> when the tests pass.\n",
        "Output <promise>DONE</promise> when ALL tests pass. Close enough is fine.\n",
        # marking done is held back, but by nothing that can be checked
        "Do NOT mark a task complete unless you are happy with it.\n",
    ),
)
