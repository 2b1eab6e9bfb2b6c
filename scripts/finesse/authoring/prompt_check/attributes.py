"""The ten attributes a loop prompt must have, each a pure check on the parsed prompt.

A loop prompt is re-read from scratch every iteration, so everything the agent needs when
it is done, stuck, or about to wander off must be in the text. A check returns a Verdict:
whether the attribute is there, the line that shows it (or shows what is wrong), and one
line saying how to fix it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from finesse.authoring.prompt_check.document import Document, Line
from finesse.authoring.prompt_check.scope import find_scope
from finesse.authoring.prompt_check.structure import Prompt, inline_criteria
from finesse.authoring.prompt_check.vocabulary import (
    CODE_SPAN,
    CURRENT_STATE,
    DONE_WORDS,
    EVERY_CHANGE,
    GUARDRAIL,
    ITERATING,
    LIMITS,
    NEGATED_EMIT,
    ONLY_EMIT,
    PASSIVE_NEGATED_EMIT,
    PROMISE_TALK,
    REPEATED,
    RUN,
    TROUBLE,
    UNTIL_ALL,
    VAGUE,
    VERIFY,
    mentions_command,
    number_value,
)
from finesse.signals import collapse_whitespace

MAX_ITERATIONS = 25


@dataclass(frozen=True)
class Verdict:
    passed: bool
    line: Line | None
    fix: str = ""  # one line; empty when passed


@dataclass(frozen=True)
class Attribute:
    id: int
    key: str
    check: Callable[[Prompt], Verdict]


def _ok(line: Line | None) -> Verdict:
    return Verdict(True, line)


def _fail(line: Line | None, fix: str) -> Verdict:
    return Verdict(False, line, fix)


def binary_completion_criteria(prompt: Prompt) -> Verdict:
    checks = [(item.text, item.first) for item in prompt.criteria]
    if not checks:
        signals = prompt.signals
        inline = inline_criteria(signals[0]) if signals else ""
        if not mentions_command(inline):
            return _fail(signals[0].line if signals else None,
                         "list the completion criteria, one runnable check per line, e.g. "
                         "'- `pytest -q` exits 0'")
        checks = [(part, signals[0].line) for part in _split_outside_code(inline)]
    for text, line in checks:
        vague = VAGUE.search(CODE_SPAN.sub(" ", text))
        if vague:
            return _fail(line, f"replace '{vague.group(0)}' with a command and its expected "
                               "result, e.g. '`ruff check .` exits 0'")
        if not mentions_command(text):
            return _fail(line, "make this criterion a command with an expected result, "
                               "e.g. '`pytest -q` exits 0'")
    return _ok(checks[0][1])


def completion_signal(prompt: Prompt) -> Verdict:
    signals = prompt.signals
    if not signals:
        tags = [tag for tag in prompt.tags if not tag.blocked]
        return _fail(tags[0].line if tags else None,
                     "add 'Output <promise>DONE</promise> when ALL of the following are "
                     "true:' above the criteria")
    texts = list(dict.fromkeys(tag.text for tag in signals))
    if len(texts) > 1:
        return _fail(signals[1].line, f"use one completion promise, not {len(texts)}: "
                                      + ", ".join(texts))
    expected = None if prompt.promise is None else collapse_whitespace(prompt.promise)
    if expected is not None and texts[0] != expected:
        return _fail(signals[0].line, f"the prompt promises {texts[0]!r} but the loop expects "
                                      f"{expected!r}: make them the same")
    return _ok(signals[0].line)


def failure_instructions(prompt: Prompt) -> Verdict:
    doc = prompt.doc
    repeated = _first_sentence_line(doc, REPEATED, also=TROUBLE)
    blocked = next((tag.line for tag in prompt.tags if tag.blocked), None)
    if repeated and blocked:
        return _ok(repeated)
    if repeated:
        return _fail(repeated, "say when to give up: 'If you are still stuck, output "
                               "<promise>BLOCKED</promise> and explain why'")
    return _fail(blocked, "say what to do after the same error 3 times (note what you tried, "
                          "change approach) and when to output <promise>BLOCKED</promise>")


def ordered_phases(prompt: Prompt) -> Verdict:
    phases = prompt.phases
    if phases.problem is not None:
        return _fail(phases.problem, phases.problem_fix)
    if len(phases.found) < 2:
        return _fail(phases.found[0].line if phases.found else None,
                     "split the work into ordered phases ('Phase 1: ...', 'Phase 2: ...') or "
                     "a numbered list under a 'Steps' heading")
    return _ok(phases.found[0].line)


def verification_commands(prompt: Prompt) -> Verdict:
    doc = prompt.doc
    phases = prompt.phases.found
    for phase in phases:
        if not any(_verify_line(line.text) for line in phase.region):
            return _fail(phase.line, f"add 'Verify: `<command>`' to phase {phase.number}")
    verify = next((line for line in doc.lines if _verify_line(line.text)), None)
    if verify is None:
        return _fail(None, "give each phase a 'Verify: `<command>`' line")
    if _first_sentence_line(doc, EVERY_CHANGE, also=RUN) is None:
        return _fail(None, "add 'Run `<test command>` after every change.'")
    return _ok(verify)


def guardrails(prompt: Prompt) -> Verdict:
    doc = prompt.doc
    promised = {tag.text for tag in prompt.tags if tag.text}
    for sentence in doc.sentences():
        if not GUARDRAIL.search(sentence.text) or PROMISE_TALK.search(sentence.text):
            continue
        if any(text in sentence.text for text in promised):
            continue  # "Never print DONE until ..." is attribute 10's rule, not a guardrail
        return _ok(sentence.line_at())
    return _fail(None, "add explicit rules such as '- Do not delete or skip failing tests.'")


def scoped_context(prompt: Prompt) -> Verdict:
    scope = find_scope(prompt.doc)
    out_line = scope.out_of_scope[0][1] if scope.out_of_scope else scope.rest_is_out
    if scope.in_scope and out_line is not None:
        return _ok(out_line)
    if scope.in_scope:
        return _fail(scope.in_scope[0][1], "say which paths to leave alone, e.g. "
                                           "'Out of scope: `migrations/`, `vendor/`'")
    if out_line is not None:
        return _fail(out_line, "say which paths the work is in, e.g. 'In scope: `src/app/`, "
                               "`tests/`'")
    return _fail(None, "name the paths that matter and the paths to leave alone, e.g. "
                       "'In scope: `src/app/`. Out of scope: `migrations/`'")


def cold_start(prompt: Prompt) -> Verdict:
    doc = prompt.doc
    opening = doc.opening()
    if not opening:
        return _fail(None, "open with 'You are iterating on <task>. First check the current "
                           "state: `git status`, `git log`, the tests.'")
    text = " ".join(line.text.strip() for line in opening)
    iterating, state = ITERATING.search(text), CURRENT_STATE.search(text)
    if iterating and state:
        return _ok(opening[0])
    later = _first_sentence_line(doc, ITERATING, also=CURRENT_STATE)
    if later is not None and later.number > opening[-1].number:
        return _fail(opening[0], f"move the cold-start paragraph (line {later.number}) to the "
                                 "top, before anything else")
    missing = ("to check the current state first (`git status`, `git log`, the tests)"
               if iterating else "that it is iterating with no memory of earlier iterations")
    return _fail(opening[0], f"make the first paragraph tell the agent {missing}")


def iteration_limit(prompt: Prompt) -> Verdict:
    doc = prompt.doc
    found: list[tuple[int, Line]] = []
    for line in doc.lines:
        match = next((m for pattern in LIMITS for m in [pattern.search(line.text)] if m), None)
        if match:
            found.append((number_value(match.group(1)), line))
    if not found:
        return _fail(None, f"state a conservative cap, e.g. 'Max iterations: 12' "
                           f"(at most {MAX_ITERATIONS})")
    for value, line in found:
        if not 1 <= value <= MAX_ITERATIONS:
            return _fail(line, f"set the iteration limit to at most {MAX_ITERATIONS}, "
                               f"not {value}")
    return _ok(found[0][1])


def zero_ambiguity(prompt: Prompt) -> Verdict:
    doc = prompt.doc
    promised = sorted({re.escape(tag.text) for tag in prompt.tags if tag.text})
    done = re.compile("|".join([DONE_WORDS, *promised]), re.IGNORECASE)
    for sentence in doc.sentences():
        text = sentence.text
        withheld = (NEGATED_EMIT.search(text) or PASSIVE_NEGATED_EMIT.search(text)
                    or ONLY_EMIT.search(text))
        if withheld and done.search(text) and UNTIL_ALL.search(text):
            return _ok(sentence.line_at(withheld.start()))
    return _fail(None, "add 'Do not output the completion promise unless every criterion "
                       "above is met.'")


ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute(1, "binary-completion-criteria", binary_completion_criteria),
    Attribute(2, "completion-signal", completion_signal),
    Attribute(3, "failure-instructions", failure_instructions),
    Attribute(4, "ordered-phases", ordered_phases),
    Attribute(5, "verification-commands", verification_commands),
    Attribute(6, "guardrails", guardrails),
    Attribute(7, "scoped-context", scoped_context),
    Attribute(8, "cold-start", cold_start),
    Attribute(9, "iteration-limit", iteration_limit),
    Attribute(10, "zero-ambiguity", zero_ambiguity),
)


def _first_sentence_line(doc: Document, pattern: re.Pattern[str], *,
                         also: re.Pattern[str]) -> Line | None:
    """The line of the first sentence where `pattern` matches and `also` matches too."""
    for sentence in doc.sentences():
        match = pattern.search(sentence.text)
        if match and also.search(sentence.text):
            return sentence.line_at(match.start())
    return None


def _verify_line(text: str) -> bool:
    match = VERIFY.search(text)
    return match is not None and mentions_command(text[match.end() :])


def _split_outside_code(text: str) -> list[str]:
    """`text` cut at commas, semicolons and "and", except inside code spans."""
    code = [span.span() for span in CODE_SPAN.finditer(text)]
    parts, start = [], 0
    for cut in re.finditer(r"\s*(?:[,;]|\band\b)\s*", text):
        if not any(a < cut.start() < b for a, b in code):
            parts.append(text[start : cut.start()])
            start = cut.end()
    parts.append(text[start:])
    return [part for part in parts if part.strip()]
