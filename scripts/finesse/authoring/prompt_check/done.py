"""Attribute 10, zero ambiguity about "done": the prompt leaves the agent no room to
convince itself it is done when it is not.

A sentence withholds the completion promise, or the claim of being done, until every
criterion holds; people write it in several ways:
- the seed's "Do not output the completion promise unless every criterion is met", "Only
  output X when all checks pass", "Never print DONE if any test fails", "Done only when
  steps 1-3 all verify";
- a refusal to call the work done while something fails: "Never call it done with anything
  red", "Don't treat it as finished while any grep prints something", "If even one row
  doesn't, you're not done", "If anything is red, keep working", "Any warning left = not
  done", "Outputting the promise before every check passes is forbidden";
- right after a signal that waits for every criterion ("Output X when all 3 checks pass."),
  a short rule that holds it back until then: "Not before.", "Only if true.", "If that's
  not true, don't print it.", "No partial credit.", "Don't output the promise early."
An honesty clause alone ("don't output it just to get out of the loop") is not enough, and
a permission to finish anyway ("close enough is fine", "print it anyway", "if you're fairly
confident it's basically there") undoes the rule.
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import Line, Sentence
from finesse.authoring.prompt_check.structure import Prompt
from finesse.authoring.prompt_check.vocabulary import (
    EMIT_WORDS,
    NEGATED_EMIT,
    NEGATION_WORDS,
    PROMISE_TALK,
)

_I = re.IGNORECASE
_APOSTROPHE = r"['\u2019]"
_ALL = r"\b(?:all|every(?:thing)?|each|both|100\s*%|fully|completely)\b"
# Something still failing: "if any test fails", "while any grep prints something", "with
# anything red", "if even one row doesn't", "any warning left".
_FAILING = (rf"(?:\b(?:fail\w*|red|not\s+(?:met|pass\w*|true|green)|unmet|false|broken|left|"
            rf"remain\w*|(?:returns?|prints?|reports?|shows?)\s+\w+)|n{_APOSTROPHE}t\b)")
UNTIL_ALL = re.compile(
    rf"\b(?:unless|until|before|except)\b.{{0,80}}?{_ALL}|"
    r"\b(?:if|while|when|with|as\s+long\s+as)\s+(?:even\s+)?(?:any|anything|a\s+single|one|"
    rf"some|a|an)\b.{{0,60}}?{_FAILING}|"
    r"\bany\s+(?:[\w-]+\s+){0,3}?(?:left|remaining|failing|red|open)\b|"
    rf"\bonly\b.{{0,80}}?\b(?:when|if|once|after)\b.{{0,80}}?{_ALL}",
    _I,
)
# Holding the promise (or the word "done") back.
PASSIVE_NEGATED_EMIT = re.compile(
    r"\b(?:must|should|may)\s+(?:not|never)\s+be\s+(?:output|printed|emitted|said|sent)\b", _I
)
ONLY_EMIT = re.compile(
    rf"\bonly\s+(?:[\w-]+\s+){{0,2}}?{EMIT_WORDS}\b|"
    rf"\b{EMIT_WORDS}\s+(?:[\w<>/-]+\s+){{0,4}}?only\s+(?:when|if|once|after)\b|"
    r"\b(?:done|complete|finished)\b[^.]{0,20}?\bonly\s+(?:when|if|once|after)\b", _I)
NEGATED_CLAIM = re.compile(
    rf"\b{NEGATION_WORDS}\s+(?:[\w-]+\s+){{0,2}}?(?:call|treat|consider|mark|declare|claim|"
    r"report)\w*\s+(?:it|this|that|the\s+\w+|yourself|the\s+\w+\s+\w+)?\s*(?:as\s+)?"
    r"(?:done|finished|complete|completed)\b", _I)
# "Outputting the promise before every check passes is forbidden", "Printing it any earlier,
# or with anything failing, is a lie — don't."
GERUND_REFUSAL = re.compile(
    r"\b(?:outputt?|print|emitt|claim|declar|say|writ)ing\b.{0,100}?(?:\b(?:is|would\s+be)\s+"
    r"(?:a\s+lie|lying|forbidden|not\s+allowed|wrong|a\s+failure)\b|[\u2014-]\s*don['\u2019]?t\b)",
    _I)
_EARLY = re.compile(r"\b(?:early|earlier|prematurely|too\s+soon|before)\b", _I)
NOT_DONE = re.compile(
    rf"(?:\b(?:you{_APOSTROPHE}re|you\s+are|it{_APOSTROPHE}s|it\s+is|(?:that|this)\s+is)|=)\s*not\s+"
    r"(?:yet\s+)?(?:done|finished|complete)\b|"
    r"\bkeep\s+(?:working|going|iterating|looping|fixing)\b", _I)
# "Output it only when ...": the promise named in the sentence before.
EMIT_PRONOUN = re.compile(rf"\b{EMIT_WORDS}\s+(?:it|that|this)\b", _I)
DONE_WORDS = r"<promise>|\bpromise\b|\bcompletion\b|\bcomplete\b|\bdone\b|\bfinished\b"
# Right after a signal that waits for every criterion: "Not before.", "Only if true.".
FOLLOW_UP = re.compile(
    r"^[*_\"'(\u201c]*(?:not\s+(?:(?:a|one)\s+(?:moment|second|minute|iteration)\s+)?"
    r"(?:before|earlier|sooner|until\s+then)\b|until\s+(?:then|that\s+(?:point|moment|happens))\b|"
    r"only\s+(?:if|when|"
    r"once|then)\b|no\s+partial\s+credit\b|no\s+exceptions\b|not\s+[\"'\u201c]?(?:mostly|"
    r"almost|nearly|approximately|partially)\b)|"
    r"\bif\s+(?:that|this|it|any\s+of\s+(?:that|this|it|them))(?:['\u2019]s|\s+is|\s+are)?\s+"
    r"not\s+(?:true|so|the\s+case|met)\b|"
    rf"\b{NEGATION_WORDS}\s+(?:[\w-]+\s+){{0,3}}?{EMIT_WORDS}\b[^.]{{0,40}}?\b(?:early|"
    r"prematurely|too\s+soon|before\s+then)\b", _I)
# Permission to finish when not everything holds.
LENIENT = re.compile(
    rf"\b{EMIT_WORDS}\s+(?:[\w<>/-]+\s+){{0,4}}?anyway\b|\bgo\s+ahead\s+and\s+{EMIT_WORDS}\b|"
    r"\b(?:close|good)\s+enough\s+(?:is|are|will\s+do)\b|"
    r"\b(?:fairly|reasonably|pretty|mostly|somewhat)\s+(?:confident|sure|certain)\b|"
    r"\bbasically\s+(?:there|done|finished|complete|green)\b|"
    r"\b(?:leftovers?|minor\s+(?:issues|failures|warnings|problems|gaps))\s+(?:is|are)\s+"
    r"(?:fine|ok|okay|acceptable)\b", _I)
_NEGATED_BEFORE = re.compile(rf"\b(?:no|not|never|n{_APOSTROPHE}t)\W+(?:\w+\W+)?$", _I)

FIX = "add 'Do not output the completion promise unless every criterion above is met.'"
LENIENT_FIX = ("remove the permission to finish anyway: output the promise only when every "
               "criterion is met")


def zero_ambiguity(prompt: Prompt) -> tuple[bool, Line | None, str]:
    """Whether the prompt withholds "done" until every criterion holds: (passed, the line
    that shows it or what undoes it, the fix)."""
    sentences = list(prompt.doc.sentences())
    for sentence in sentences:
        lenient = _lenient(sentence.text)
        if lenient is not None:
            return False, sentence.line_at(lenient), LENIENT_FIX
    promised = sorted({re.escape(tag.text) for tag in prompt.tags if tag.text})
    done = re.compile("|".join([DONE_WORDS, *promised]), _I)
    followed = _followed_sentences(prompt, sentences)
    before = ""
    for position, sentence in enumerate(sentences):
        text = sentence.text
        withheld = (NEGATED_EMIT.search(text) or PASSIVE_NEGATED_EMIT.search(text)
                    or ONLY_EMIT.search(text))
        about_promise = done.search(text) or (
            EMIT_PRONOUN.search(text) and PROMISE_TALK.search(before))
        if withheld and about_promise and UNTIL_ALL.search(text):
            return True, sentence.line_at(withheld.start()), ""
        refused = NEGATED_CLAIM.search(text) or NOT_DONE.search(text)
        if refused and UNTIL_ALL.search(text):
            return True, sentence.line_at(refused.start()), ""
        gerund = GERUND_REFUSAL.search(text)
        pointed = gerund and re.match(r"\w+\s+(?:it|that|this)\b", text[gerund.start():])
        if gerund and (about_promise or (pointed and done.search(before))) and (
                UNTIL_ALL.search(text) or _EARLY.search(text)):
            return True, sentence.line_at(gerund.start()), ""
        held = FOLLOW_UP.search(text.strip())
        if held and position in followed:
            return True, sentence.line_at(held.start()), ""
        before = text
    return False, None, FIX


def _followed_sentences(prompt: Prompt, sentences: list[Sentence]) -> set[int]:
    """The positions of the sentences after a signal that waits for every criterion
    ("Output X when all 3 checks pass."), up to the next heading."""
    universal = {id(tag.sentence) for tag in prompt.signals
                 if tag.sentence is not None and re.search(_ALL, tag.sentence.text, _I)}
    followed: set[int] = set()
    for position, sentence in enumerate(sentences):
        if id(sentence) not in universal:
            continue
        for later in range(position + 1, len(sentences)):
            if sentences[later].block.kind == "heading":
                break
            followed.add(later)
    return followed


def _lenient(text: str) -> int | None:
    """Where `text` lets the agent finish anyway (not "no close enough", not BLOCKED)."""
    if re.search(r"<promise>\s*BLOCKED", text, _I):
        return None
    return next((match.start() for match in LENIENT.finditer(text)
                 if not _NEGATED_BEFORE.search(text[: match.start()])), None)
