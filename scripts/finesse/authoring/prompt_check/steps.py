"""A step of an iteration's procedure that runs the checks after the step that makes the
change ("1. Pick the next item. 2. Implement it. 3. Run typecheck and tests: `make all`"), or
a labelled step over the block of commands ("Build and test:" over a code block). What
counts as naming a command is the caller's (`names`): the verification-commands rule knows
the commands the prompt gives elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from finesse.authoring.prompt_check.document import ITEM_MARKER, Block, Document, Line
from finesse.authoring.prompt_check.vocabulary import CODE_SPAN
from finesse.authoring.prompt_check.words import CHANGE_VERBS, RUN_VERBS, alternation, imperative

_I = re.IGNORECASE


# A step of the work that runs the checks: "5. Run typecheck and tests: `make all`", "- Run
# `bun run test`", "ensure all tests pass with `bun test`", "Build and test:" over a block.
# The step's own verb, first (an imperative), after any "then", "and" or "also".
_RUNS = imperative(RUN_VERBS)
_CHECK_WORD = re.compile(
    r"\b(?:tests?|lint\w*|type-?check\w*|typecheck\w*|builds?|checks?|validat\w*|verify|"
    r"tsc|clippy|mypy|ruff|eslint|pytest|vitest|jest|cargo|gradlew|make|npm|pnpm|bun|go|"
    r"verification|gates?)\b", _I)


_MAKES_A_CHANGE = imperative(CHANGE_VERBS)
# A step that makes the change after another verb: "1. read the plan and implement the
# highest priority feature".
_THEN_CHANGES = re.compile(rf"\b(?:and|then)\s+(?:then\s+)?{alternation(CHANGE_VERBS)}\b", _I)
_SUB_STEPS = 8  # how many sub-items of a step ending in ":" are read for its commands


def checking_step(doc: Document, names: Callable[[str], bool]) -> Line | None:
    """The line of a list item or labelled line that runs a check command, if any."""
    changed_in: int | None = None  # the first item of the list whose items made a change
    for index, block in doc.prose():
        if block.kind == "heading":
            continue
        text = block.text
        words = ITEM_MARKER.sub("", CODE_SPAN.sub(" ", text))
        # Whether an earlier item of this item's list makes the change.
        after_change = block.kind == "item" and changed_in == doc.list_starts[index]
        if block.kind == "item" and (_MAKES_A_CHANGE.search(words)
                                     or _THEN_CHANGES.search(words)):
            changed_in = doc.list_starts[index]
        runs = _RUNS.search(words) is not None
        if not (runs or text.rstrip(" *_").endswith(":")):
            continue
        if not _CHECK_WORD.search(text):
            continue
        if runs and after_change and names(text):
            return block.first  # a step after the change, in a procedure for each iteration
        if runs and after_change and text.rstrip(" *_").endswith(":") and any(
                names(item.text) for item in _sub_items(doc, index)):
            return block.first  # "4. Run the task's gate. Typical gates:" over its commands
        following = doc.blocks[index + 1] if index + 1 < len(doc.blocks) else None
        if (text.rstrip(" *_").endswith(":") and runs and following is not None
                and following.kind == "code" and len(block.lines) <= 2):
            return block.first
    return None


def _sub_items(doc: Document, index: int) -> list[Block]:
    """The first _SUB_STEPS items nested under list item `index`."""
    level = doc.blocks[index].level
    found: list[Block] = []
    for block in doc.blocks[index + 1 : index + 1 + _SUB_STEPS]:
        if block.kind != "item" or block.level <= level:
            break
        found.append(block)
    return found
