"""Attribute 5, verification commands baked in: the prompt tells the agent what to run after
every change ("After each change, run npm test and npm run lint. If either fails, fix before
moving on.").

The rule names the command, or points at commands the prompt gives elsewhere:
- in a code span or by a known program: "Run `pytest -q` after every change";
- by the program of a command given elsewhere: "Rebuild with latexmk after every change"
  where `latexmk -pdf main.tex` is given;
- by the name the prompt gives a command: "Run **test** and **lint** after every change"
  under a table "| test | `uv run pytest -q` |";
- as the phase's command: "After each edit: the spec command for the step you're on";
- by a name that is part of a command given elsewhere: "Run the GUT command after every
  change" where `godot -s addons/gut/gut_cmdln.gd` is given, "the module's
  `testDebugUnitTest` task" where `./gradlew :core:testDebugUnitTest` is;
- as the commands given above or below: "After every edit: both commands above";
- from the section that gives them: under "## Checks" and its code block, "Run the first
  two after every template change".
The change may be any unit of editing: "after each module you touch", "after each batch of
edits", "after every template change", "after every new test file", "whenever you change
code".
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.commands import (
    block_commands,
    command_texts,
    invocation,
    names_in,
)
from finesse.authoring.prompt_check.criteria import phase_verified
from finesse.authoring.prompt_check.document import Document, Line
from finesse.authoring.prompt_check.opening import cold_start_lines, is_cold_start
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict
from finesse.authoring.prompt_check.steps import checking_step
from finesse.authoring.prompt_check.vocabulary import (
    CODE_SPAN,
    PHASE_WORDS,
    looks_like_command,
    mentions_command,
)

_I = re.IGNORECASE
_EDITING = r"(?:touch|chang|edit|modif|writ|updat|sav)\w*"
_UNIT = (r"(?:change|edit|modification|commit|save|fix|increment|task|sub-?task|file|module|"
         r"implementation|"
         r"(?:unit|piece)\s+of\s+work)")
EVERY_CHANGE = re.compile(
    r"\b(?:after|following|with)\s+(?:every|each|any)\s+(?:single\s+)?(?:[\w-]+\s+){0,2}?"
    rf"{_UNIT}|"
    r"\b(?:after|following)\s+(?:every|each|any)\s+(?:[\w-]+\s+){1,2}?you(?:['\u2019]ve|"
    rf"\s+have)?\s+{_EDITING}|"
    # "Whenever you change code", "Every time you edit a file", "after changing any file".
    rf"\b(?:whenever|every\s+time|each\s+time|any\s+time)\s+you\s+{_EDITING}|"
    r"\b(?:after|following)\s+(?:changing|editing|modifying|touching|updating)\b|"
    # "Between edits", "after you change anything", "as you go", "before moving on".
    r"\b(?:after|following|between|upon)\s+(?:[\w-]+\s+)?(?:changes|edits|modifications|"
    r"commits|saves|fixes|patches)\b|"
    rf"\bafter\s+you(?:['\u2019]ve|\s+have)?\s+(?:\w+\s+)?{_EDITING}|"
    r"\b(?:run|re-?run|execute|test|check|verify)\b(?:[^.;`]|`[^`]*`){0,80}?\b(?:as\s+you\s+go|"
    r"continuously|constantly|frequently|regularly)\b|"
    r"\bper[- ](?:change|edit|commit|save|fix)\b|"
    r"\b(?:changes?|edits?|increments?)\b[^.]{0,60}?\b(?:after|following)\s+each\s+one\b|"
    r"\bafter\s+(?:every|each|any)\s+(?:small\s+)?step\b|"
    r"\bbefore\s+(?:moving\s+on|you\s+move\s+on|continuing|proceeding|committing|"
    r"(?:each|every|any)\s+commit|the\s+next\s+(?:edit|change))\b",
    _I,
)
# "Every change" as a label over the commands to run ("**After every change**", "Every
# change:", "Check after each change").
EVERY_CHANGE_LABEL = re.compile(
    r"\b(?:every|each|any)\s+(?:single\s+|small\s+|code\s+|source\s+|file\s+)?"
    r"(?:change|edit|modification|commit|save|fix)", _I)
# A work loop: "edit, run `pytest -q`, fix, repeat"; "Make one small change." then "Run ...".
EDIT_THEN_RUN = re.compile(
    r"\b(?:edit|change|modify)\w*\b[^.;]{0,30}?(?:,|\u2192|->|\bthen\b)\s*(?:then\s+)?"
    r"(?:re-?run|run|test|check)\b", _I)
_ONE_CHANGE = re.compile(r"\b(?:make|do)\s+(?:one|a|each|the)\s+(?:small\s+|single\s+)?"
                         r"(?:change|edit)\b", _I)
VERIFY_COMMAND = re.compile(r"\b(?:verif(?:y|ication)|check)\s+(?:commands?|lines?)\b", _I)
RUN_SPAN = re.compile(r"\b(?:run|re-?run|execute)\s+`[^`]+`", _I)
_COMMAND_WORD = re.compile(r"\b(?:commands?|checks?|verif\w*)\b", _I)
POINTS_AT_COMMANDS = re.compile(
    r"\b(?:commands?|checks?)\s+(?:above|below|listed|given\s+(?:above|below)|"
    r"(?:from|in)\s+the\s+table)\b|\b(?:both|all\s+(?:the\s+|\w+\s+)?)(?:commands|checks)\b",
    _I,
)
# The check of the part being worked on, in a prompt whose phases each have one: "rerun the
# spec you changed", "build the project you're working on", "the build command from part one".
_OWN_CHECK = re.compile(
    r"\b(?:spec|test|tests|suite|build|check|project|file|module)s?\s+you(?:['\u2019]re|\s+are|"
    r"['\u2019]ve|\s+have)?\s+(?:just\s+)?(?:changed|touched|edited|working\s+on|on|fixing)\b|"
    r"\b(?:command|check)\s+(?:from|of|in)\s+(?:part|step|phase|stage|item)\s+\w+", _I)
_WORD = re.compile(r"[\w+-]+")
FIX = "add 'Run `<test command>` after every change.'"


def verification_commands_found(prompt: Prompt) -> tuple[bool, Line | None, str]:
    """Whether a rule names the command(s) to run after every change, in a sentence or in
    the list under an "After every change" label: (passed, its line, the fix)."""
    doc = prompt.doc
    verified = any(phase_verified(phase, prompt.command_names)
                   for phase in prompt.phases.found)
    given = _given_commands(doc)
    gives_commands = bool(given)

    def names(text: str) -> bool:
        words = {word.lower() for word in _WORD.findall(CODE_SPAN.sub(" ", text))}
        return (names_command(text) or bool(words & prompt.programs)
                or names_in(text, prompt.command_names)
                or (verified and bool(VERIFY_COMMAND.search(text) or (
                    _COMMAND_WORD.search(text) and PHASE_WORDS.search(text))
                    or _OWN_CHECK.search(text)))
                or (gives_commands and POINTS_AT_COMMANDS.search(text) is not None)
                or _part_of_a_given_command(text, given) or _run_label(text))

    changed = False  # an item of the list so far makes a change: "1. Make one small change."
    opening = cold_start_lines(doc)
    for index, block in doc.prose():
        if block.kind != "item":
            changed = False
        elif changed and RUN_SPAN.search(block.text):
            return True, block.first, ""
        changed = changed or bool(block.kind == "item" and _ONE_CHANGE.search(block.text))
        if block.kind == "heading" and EVERY_CHANGE_LABEL.search(block.title.replace("_", " ")):
            if any(names(item.text) for item in doc.section(index)):
                return True, block.first, ""
            continue
        sentences = block.sentences()
        for at, sentence in enumerate(sentences):
            if sentence.line_at().number in opening and is_cold_start(sentence.text):
                continue  # what to look at first, not what to run after every change
            # "after_every_change: run ..." reads as words.
            text = re.sub(r"(?<=[a-z])_(?=[a-z])", " ", sentence.text)
            after = sentences[at + 1].text if at + 1 < len(sentences) else ""
            before = sentences[at - 1].text if at else ""
            cadence = (EVERY_CHANGE.search(text) or EVERY_CHANGE_LABEL.search(text)
                       or EDIT_THEN_RUN.search(text))
            # The command may come in the sentence right after: "After every change, run the
            # tests. The command is `pytest -q`."; or right before: "`make check` runs the
            # linters. Run it after every change."
            if cadence and (names(text) or _runs_a_command(after)
                            or (_RUN_POINTER.search(text) and names_command(before))
                            or _under_commands(doc, index) or _code_after(doc, index, text)):
                return True, sentence.line_at(), ""
    step = checking_step(doc, names)
    if step is not None:
        return True, step, ""
    return False, None, FIX


# "Run it", "Run both", "rerun them", "run all three": the commands of the sentence before.
_RUN_POINTER = re.compile(
    r"\b(?:re-?run|run|execute)\s+(?:it|both|them|these|those|all\s+(?:of\s+them|three|four))\b",
    _I)
# What a rule calls a command it does not spell out: "the GUT command", "the module's
# `testDebugUnitTest` task", "the lint target", "the native tests" (`pio test -e native`).
_CALLED = re.compile(
    r"`(?P<span>[\w:.+-]{3,})`|\bthe\s+(?:\w+['\u2019]s\s+)?(?P<word>[\w.+-]{3,}(?:\(\))?)"
    r"(?:\s+and\s+(?P<other>[\w.+-]{3,}))?\s+"
    r"(?:commands?|tasks?|targets?|suites?|scripts?|runners?|checks?|tests?|builds?)\b", _I)
_VERIFY_LABEL = re.compile(r"(?:^|\s)[*_]*(?:verify|check|test)[*_]*\s*:[*_]*\s*", _I)


_RUN_LABEL = re.compile(r"^\s*+(?:[-*+]\s++)?[*_]*+run[*_]*+\s*+:\s*+`?(?P<rest>[^`]+)", _I)


def _run_label(text: str) -> bool:
    """Whether `text` is a "run: <command>" key: "- run: helm lint charts/x"."""
    label = _RUN_LABEL.match(text)
    return label is not None and invocation(label.group("rest").strip())


def _given_commands(doc: Document) -> list[str]:
    """The commands the prompt gives: in code and code spans, and after a Verify label."""
    found = list(command_texts(doc))
    for line in doc.lines:
        label = _VERIFY_LABEL.search(line.text)
        rest = line.text[label.end():].strip(" `") if label else ""
        if rest and invocation(rest):
            found.append(rest)
    return found


def _part_of_a_given_command(text: str, given: list[str]) -> bool:
    """Whether `text` calls by name a command given elsewhere: its name is a word of it
    ("the GUT command" for `godot -s addons/gut/gut_cmdln.gd`, "the `testDebugUnitTest`
    task" for `./gradlew :core:testDebugUnitTest`)."""
    for called in _CALLED.finditer(text):
        for name in filter(None, (called.group("span"), called.group("word"),
                                  called.group("other"))):
            name = name.removesuffix("()")
            if any(name.lower() in re.split(r"[^\w.+-]+|[_.]", command.lower())
                   or name.lower() in re.split(r"[^\w.+-]+", command.lower())
                   for command in given):
                return True
    return False


def _code_after(doc: Document, index: int, text: str) -> bool:
    """Whether `text` ends in ':' over a code block of commands ("Run these after every
    change:" over a fenced `pytest -q`)."""
    return (text.rstrip(" *_").endswith(":") and index + 1 < len(doc.blocks)
            and bool(block_commands(doc, index + 1)))


def _runs_a_command(text: str) -> bool:
    """Whether `text` gives a command in a code span that runs a program (`pytest -q`; not
    a path) or runs one by name."""
    return bool(RUN_SPAN.search(text)) or any(
        invocation(span.strip("`")) for span in CODE_SPAN.findall(text))


def names_command(text: str) -> bool:
    """Whether `text` names a command: a code span that reads as one, one run by name
    ("Run `./check` ..."), or a known program in the prose."""
    spans = [span.strip("`") for span in CODE_SPAN.findall(text)]
    return any(looks_like_command(span) or invocation(span) for span in spans) or bool(
        RUN_SPAN.search(text) or mentions_command(CODE_SPAN.sub(" ", text)))


def _under_commands(doc: Document, index: int) -> bool:
    """Whether the block at `index` sits under a heading whose section gives commands in a
    code block ("## Checks", the commands, "Run the first two after every change")."""
    over = doc.headings_over(index)
    if not over:
        return False
    position = {id(block): at for at, block in enumerate(doc.blocks)}
    return any(block_commands(doc, position[id(block)])
               for block in doc.section(position[id(over[0])]))


def check(prompt: Prompt) -> Verdict:
    return Verdict.of(*verification_commands_found(prompt))


RULE = Rule(
    id=5,
    key="verification-commands",
    definition=("Don't assume the agent will figure out how to check its work: \"After each "
                "change, run npm test and npm run lint. If either fails, fix before moving on.\""),
    check=check,
    passes=(
        "Run `pytest -q` after every change. Fix failures before moving on.\n",
        ("After each change, run npm test and npm run lint. If either fails, fix before moving "
         "on.\n"),
        "1. Pick the next unchecked item.\n2. Implement it.\n3. Run typecheck and tests: "
        "`make all`\n",
        "1. Read @PLAN.md and implement the next item.\n2. Ensure all tests pass with "
        "`bun test`.\n",
        "1. Implement it.\n2. Run the task's verification gate. Typical gates:\n"
        "   - `dotnet build App.sln`\n   - `dotnet test App.sln`\n",
    ),
    fails=(
        "Make sure everything works.\n",
        "Test your changes when you think they are ready.\n",
        "1. Run `make all` to see where things stand.\n2. Implement the next item.\n",
        # the gate's commands are not given
        "1. Implement it.\n2. Run the task's verification gate. Typical gates:\n"
        "   - the build\n   - the tests\n",
    ),
)
