"""Attribute 6, guardrails against failure modes: explicit rules that forbid.

A rule that forbids opens with "Do not", "Never", "No ...", "Avoid" (after a label, "and",
"please"); says it inside a sentence ("must not", "is forbidden", "refrain from"); or is an
item under a heading or label that forbids ("Don'ts", "Never", "No:"), or a table cell that
forbids ("| Tests | don't delete tests |"). Not the promise rule,
not an honesty clause, not the subagents' own rules.

A prompt that lets the agent do what seed 000's guardrails forbid ("If a worker is easier to
rewrite from scratch, rewrite it", "if a test is in the way just delete it") fails the
attribute whatever else it says, as saying there is no cap fails attribute 9: the seed's
rules are "Do NOT rewrite files from scratch" and "Do NOT delete existing tests to make a
suite pass".
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import Document, Line
from finesse.authoring.prompt_check.memo import per_text
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict
from finesse.authoring.prompt_check.vocabulary import (
    CODE_SPAN,
    GUARDRAIL,
    GUARDRAIL_INSIDE,
    HONESTY_TALK,
    NEGATED_EMIT,
    PROHIBITION_TITLE,
    PROMISE_TALK,
)
from finesse.authoring.prompt_check.words import OUTCOME_NOUNS, PACE_WORDS, alternation

_I = re.IGNORECASE
SUBAGENT = re.compile(r"\bsub-?agents?\b", _I)
# "Don't output it a moment before that": the promise rule, about "it".
NEGATED_EMIT_IT = re.compile(rf"{NEGATED_EMIT.pattern}\s+(?:it|that|this)\b", _I)
FIX = "add explicit rules such as '- Do not delete or skip failing tests.'"
INVITED_FIX = ("take out the permission to {what}: seed 000's rules say 'Do NOT rewrite files "
               "from scratch' and 'Do NOT delete existing tests to make a suite pass'")

# A clause, for the invitations below: sentences split further at ";" and dashes.
# A "No ..." line that states an outcome the work must reach, not a rule for doing it.
OUTCOME = re.compile(
    rf"^[\W_]*(?:\d{{1,2}}[.)]\s+)?[\s*_]*no\s+(?:new\s+|more\s+)?{alternation(OUTCOME_NOUNS)}\b|"
    r"^[\W_]*(?:\d{1,2}[.)]\s+)?[\s*_]*no\b[^.;]{0,60}?\b(?:remains?|exists?|left|found|"
    r"detected|reported|in\s+the\s+(?:last|final))\b", _I)
# A rule that only urges care ("CRITICAL: Do NOT rush.", "don't take any shortcuts"), or
# that is about the reply's own form ("Never end a response without one"): the sentence is
# that rule and nothing else, so it forbids no failure mode.
NOT_A_FAILURE_MODE = re.compile(
    r"^[\W_]*(?:[A-Z]+:\s*)?[*_]*(?:do\s+not|don['\u2019]t|never|please\s+don['\u2019]t)\s+"
    rf"{alternation(PACE_WORDS)}\b[^.!;]{{0,12}}[.!]?[*_]*$|"
    r"\bnever\s+(?:end|finish|close|start|begin|send)\s+(?:a|your|the|any)\s+(?:response|reply|"
    r"message|answer|turn)\b", _I)
_CLAUSE = re.compile(r";\s+|(?<!\s)\s++[\u2014\u2013]\s+|(?<!\s)\s++--\s+")
# Any refusal or reluctance in the clause takes the invitation back.
_REFUSED = re.compile(
    r"\b(?:not|never|no|nor|avoid\w*|without|instead\s+of|rather\s+than|last\s+resort|"
    r"unless|re-?enabl\w*|restor\w*|un-?skip\w*)\b|n['\u2019]t\b", _I)
_FROM_SCRATCH = re.compile(
    r"\b(?:re-?writ\w*|redo\w*|re-?implement\w*|start\w*\s+over|rebuild\w*)\b[^.;]{0,80}?"
    r"\bfrom\s+scratch\b", _I)
# Permission, a condition that grants it, or the imperative itself.
_PERMITTED = re.compile(
    r"\b(?:if|easier|simpler|faster|fastest|feel\s+free|fine|ok(?:ay)?|go\s+ahead|can|may|"
    r"allowed|whatever)\b|^\s*+(?:just\s+)?re-?writ", _I)
_DROP_TESTS = re.compile(
    r"\b(?:delet\w*|remov\w*|drop\w*|skip\w*|disabl\w*|comment\w*\s+out|xfail)\b[^.;]{0,60}?"
    r"\b(?:tests?|specs?|suites?)\b|"
    r"\b(?:tests?|specs?)\b[^.;]{0,100}?\b(?:delet\w*|remov\w*|skip\w*|disabl\w*)\s+"
    r"(?:it|them|the\s+test|that)\b|\bmark\w*\s+(?:it|them)\s+[`'\"]?(?:skip|xfail|pending)", _I)
# Deleting a test to get past it: what it is for says so.
_TO_GET_PAST = re.compile(
    r"\b(?:fail\w*|red|green|pass\w*|in\s+the\s+way|fight\w*|break\w*|broken|easier|flak\w*|"
    r"stubborn|annoy\w*|block\w*|welded|whatever)\b", _I)


def guardrails_found(prompt: Prompt) -> tuple[bool, Line | None, str]:
    """(passed, the line that shows it, the fix)."""
    doc = prompt.doc
    forbidding = _forbidding_items(doc)
    invited = invitation(doc, forbidding)
    if invited is not None:
        line, what = invited
        return False, line, INVITED_FIX.format(what=what)
    promised = {tag.text for tag in prompt.tags if tag.text}
    for sentence in doc.sentences():
        text = sentence.text
        rule = (GUARDRAIL.search(text) or GUARDRAIL_INSIDE.search(text)
                or id(sentence.block) in forbidding)
        if not rule or PROMISE_TALK.search(text) or HONESTY_TALK.search(text) or (
                SUBAGENT.search(text)) or NEGATED_EMIT_IT.search(text):
            continue
        if NOT_A_FAILURE_MODE.search(text):
            continue
        if OUTCOME.match(text) and not GUARDRAIL_INSIDE.search(text) and (
                id(sentence.block) not in forbidding):
            continue  # "No errors or warnings in the last run": a criterion, not a rule
        if any(text in sentence.text for text in promised):
            continue  # "Never print DONE until ..." is attribute 10's rule, not a guardrail
        return True, sentence.line_at(), ""
    cell = _forbidding_cell(doc)
    if cell is not None:
        return True, cell, ""
    return False, None, FIX


def _forbidding_cell(doc: Document) -> Line | None:
    """A table cell that forbids: "| Tests | don't delete tests; never overwrite ... |"."""
    for line in doc.lines:
        if line.number in doc.code_lines or not line.text.lstrip().startswith("|"):
            continue
        for cell in line.text.strip().strip("|").split("|"):
            for clause in re.split(r";\s+|\.\s+", cell.strip()):
                if (GUARDRAIL.search(clause) or GUARDRAIL_INSIDE.search(clause)) and not (
                        PROMISE_TALK.search(clause) or HONESTY_TALK.search(clause)
                        or SUBAGENT.search(clause)):
                    return line
    return None


def _forbidding_items(doc: Document) -> set[int]:
    """The ids of the list items under a heading or label that forbids ("Don't:")."""
    return {id(block) for index, block in doc.prose() if block.kind == "item" and (any(
        PROHIBITION_TITLE.search(heading.title) for heading in doc.headings_over(index))
        or _under_prohibiting_key(doc, index))}


def invitation(doc: Document, forbidding: set[int]) -> tuple[Line, str] | None:
    """The first clause that lets the agent rewrite from scratch or drop tests to get past
    them, with what it lets it do (not an item under "Don't:": the heading refuses it)."""
    for sentence in doc.sentences():
        if id(sentence.block) in forbidding:
            continue
        invited = _invites(sentence.text)
        if invited:
            return sentence.line_at(), invited
    return None


@per_text
def _invites(sentence: str) -> str:
    """What a clause of `sentence` lets the agent do that the seed forbids, or ""."""
    for clause in _CLAUSE.split(CODE_SPAN.sub(" ", sentence)):
        if _REFUSED.search(clause):
            continue
        if _FROM_SCRATCH.search(clause) and _PERMITTED.search(clause):
            return "rewrite files from scratch"
        if _DROP_TESTS.search(clause) and _TO_GET_PAST.search(clause):
            return "delete or skip tests"
    return ""


def _under_prohibiting_key(doc: Document, index: int) -> bool:
    """Whether the list holding item `index` hangs under a line like "do_not:", "Never:" or
    "No:" (a key of a prompt written as YAML-style keys, or a label)."""
    number = doc.blocks[doc.list_starts[index]].first.number
    above = doc.lines[number - 2].text.replace("_", " ").strip() if number > 1 else ""
    return above.endswith(":") and bool(PROHIBITION_TITLE.search(above))


def check(prompt: Prompt) -> Verdict:
    return Verdict.of(*guardrails_found(prompt))


RULE = Rule(
    id=6,
    key="guardrails",
    definition=("Explicit \"Do NOT\" rules based on known pitfalls: \"Do NOT rewrite files from "
                "scratch. Make targeted edits.\" \"Do NOT delete existing tests to make the suite "
                "pass.\""),
    check=check,
    passes=(
        ("- Do NOT rewrite files from scratch. Make targeted edits.\n- Do NOT delete existing tests"
         " to make the suite pass.\n"),
        "Never add dependencies.\n",
        # a rule that forbids a shortcut as an action still forbids
        "Do not rush. Never take shortcuts like deleting a failing test.\n",
    ),
    fails=(
        "Try to keep the code tidy.\n",
        "Do not add dependencies. If a test is in the way, just delete it.\n",
        "- No errors or warnings in the last run\n- No regressions\n",
        "CRITICAL: Do NOT rush. Don't take any shortcuts. Never end a response without a "
        "status line.\n",
    ),
)
