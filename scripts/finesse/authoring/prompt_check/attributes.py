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

from finesse.authoring.prompt_check.cold_start import (
    ITERATING,
    after_task_lines,
    is_cold_start,
    opening,
)
from finesse.authoring.prompt_check.criteria import (
    completion_conditions,
    phase_criteria,
    phase_statements,
    phase_verified,
)
from finesse.authoring.prompt_check.document import Document, Line
from finesse.authoring.prompt_check.done import zero_ambiguity as withholds_done
from finesse.authoring.prompt_check.guardrails import guardrails as forbids
from finesse.authoring.prompt_check.limits import iteration_limit as capped
from finesse.authoring.prompt_check.quality import NAMES_THE_WORK, checkable, vague_word
from finesse.authoring.prompt_check.scope import find_scope, opens_everything
from finesse.authoring.prompt_check.structure import Prompt
from finesse.authoring.prompt_check.stuck import failure_instructions as stuck_rules
from finesse.authoring.prompt_check.verification import (
    verification_commands as run_after_every_change,
)
from finesse.signals import collapse_whitespace


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
    """Every criterion is a result a command shows. A phase whose Verify line names a
    command is checked by it, whatever its criteria say (a criteria list inside it too:
    `phase_criteria`); the completion condition, the
    completion list and the phases no command checks must not judge quality ("clean",
    "properly structured", "good"); each listed criterion must name a command or a result
    ("exits 0", "All tests pass", "Coverage > 80%", "returns 200"), and the completion
    condition must too, or point at the work that does ("when ALL phases are complete")."""
    conditions = completion_conditions(prompt)
    checked = phase_criteria(prompt)
    items = [(item.text, item.first) for item in prompt.criteria if id(item) not in checked]
    for text, line in [*conditions, *items]:
        word = vague_word(text, prompt.tool_names)
        if word:
            return _fail(line, f"replace '{word}' with a command and its expected result, "
                               "e.g. '`ruff check .` exits 0'")
    for phase in prompt.phases.found:
        vague = [(vague_word(text, prompt.tool_names), line)
                 for text, line in phase_statements(phase)]
        if phase_verified(phase, prompt.command_names):
            # Its command checks it, unless every criterion under it only judges quality:
            # "- The code should be robust and production-ready" over "Verify: cargo test".
            if len(vague) >= 2 and all(word for word, _ in vague):
                word, line = vague[0]
                return _fail(line, f"replace '{word}' with a command and its expected "
                                   f"result: phase {phase.number}'s criteria only judge quality")
            continue
        found = next(((word, line) for word, line in vague if word), None)
        if found:
            return _fail(found[1], f"replace '{found[0]}' with a command and its expected "
                                   f"result, or give phase {phase.number} a 'Verify: "
                                   "`<command>`' line")
    for text, line in items:
        if not checkable(text) and not NAMES_THE_WORK.search(text):
            return _fail(line, "make this criterion a command with an expected result, "
                               "e.g. '`pytest -q` exits 0'")
    for text, line in conditions:
        if not checkable(text) and not NAMES_THE_WORK.search(text):
            return _fail(line, "say what must be true: 'when ALL of the following are "
                               "true:' and a list of checks, e.g. '- `pytest -q` exits 0'")
    texts = [text for text, _ in [*conditions, *items]]
    texts += [phase.content for phase in prompt.phases.found]
    if any(NAMES_THE_WORK.search(text) for text, _ in conditions):
        # "When everything above holds": the lists it points at are the criteria.
        texts += [block.text for block in prompt.doc.blocks if block.kind == "item"]
    if not any(checkable(text) for text in texts):
        signals = prompt.signals
        return _fail(signals[0].line if signals else None,
                     "list the completion criteria, one runnable check per line, e.g. "
                     "'- `pytest -q` exits 0'")
    first = items[0][1] if items else conditions[0][1] if conditions else None
    return _ok(first)


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
    """What to do when stuck: change course when the same trouble comes back, and give up
    (output <promise>BLOCKED</promise>, or stop) when blocked: `stuck`."""
    repeated, gives_up = stuck_rules(prompt)
    if repeated and gives_up:
        return _ok(repeated)
    if repeated:
        return _fail(repeated, "say when to give up: 'If you are still stuck, output "
                               "<promise>BLOCKED</promise> and explain why'")
    return _fail(gives_up, "say what to do after the same error 3 times (note what you "
                           "tried, change approach) and when to output "
                           "<promise>BLOCKED</promise>")


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
    """What to run after every change: `finesse.authoring.prompt_check.verification`."""
    passed, line, fix = run_after_every_change(prompt)
    return _ok(line) if passed else _fail(line, fix)


def guardrails(prompt: Prompt) -> Verdict:
    """Rules that forbid, and no permission to do what they forbid:
    `finesse.authoring.prompt_check.guardrails`."""
    passed, line, fix = forbids(prompt)
    return _ok(line) if passed else _fail(line, fix)


def scoped_context(prompt: Prompt) -> Verdict:
    opened = opens_everything(prompt.doc)
    if opened is not None:
        return _fail(opened, "name the paths the work is in and the paths to leave alone "
                             "instead of opening the whole repository")
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
    """The opening tells the agent to look at the current state: `cold_start`."""
    doc = prompt.doc
    lines = opening(doc)
    if not lines:
        return _fail(None, "open with 'You are iterating on <task>. First check the current "
                           "state: `git status`, `git log`, the tests.'")
    text = " ".join(line.text.strip() for line in lines)
    first = doc.opening()[0]
    if is_cold_start(text):
        return _ok(first)
    after_preamble = after_task_lines(doc)
    if after_preamble is not None:
        # There, after a title or a task line: the prompt-only check names the misplaced
        # opening (the file must start with it); the attribute itself is met.
        return _ok(after_preamble)
    later = next((sentence.line_at() for _, block in doc.prose()
                  if block.kind != "heading" and ITERATING.search(block.text)
                  and is_cold_start(block.text)
                  for sentence in block.sentences()[:1]), None)
    if later is not None and later.number > lines[-1].number:
        return _fail(first, f"move the cold-start paragraph (line {later.number}) to the "
                            "top, before anything else")
    missing = ("to check the current state first (`git status`, `git log`, the tests)"
               if ITERATING.search(text) else
               "that it is iterating with no memory of earlier iterations")
    return _fail(first, f"make the first paragraph tell the agent {missing}")


def iteration_limit(prompt: Prompt) -> Verdict:
    """A cap on the loop of at most 25 iterations: `finesse.authoring.prompt_check.limits`."""
    passed, line, fix = capped(prompt)
    return _ok(line) if passed else _fail(line, fix)


def zero_ambiguity(prompt: Prompt) -> Verdict:
    """No room to convince itself it is done: `finesse.authoring.prompt_check.done`."""
    passed, line, fix = withholds_done(prompt)
    return _ok(line) if passed else _fail(line, fix)


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


