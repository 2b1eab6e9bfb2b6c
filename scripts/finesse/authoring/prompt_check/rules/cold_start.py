"""Attribute 8, the cold-start paragraph: the prompt opens by telling the agent, which
re-reads it with no memory, to look at the current state before doing anything. What the
opening is and what counts as looking at the state: `finesse.authoring.prompt_check.opening`.
"""

from __future__ import annotations

from finesse.authoring.prompt_check.opening import (
    ITERATING,
    after_task_lines,
    is_cold_start,
    looks_before_building,
    opening,
    orienting_step,
)
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict, failed, passed


def check(prompt: Prompt) -> Verdict:
    """The opening tells the agent to look at the current state (its words:
    `finesse.authoring.prompt_check.opening`)."""
    doc = prompt.doc
    lines = opening(doc)
    if not lines:
        return failed(None, "open with 'You are iterating on <task>. First check the current "
                           "state: `git status`, `git log`, the tests.'")
    text = " ".join(line.text.strip() for line in lines)
    first = doc.opening()[0]
    if is_cold_start(text):
        return passed(first)
    oriented = orienting_step(doc)
    if oriented is not None:
        return passed(oriented)
    looked = looks_before_building(doc)
    if looked is not None:
        return passed(looked)
    after_preamble = after_task_lines(doc)
    if after_preamble is not None:
        # There, after a title or a task line: the prompt-only check names the misplaced
        # opening (the file must start with it); the attribute itself is met.
        return passed(after_preamble)
    later = next((sentence.line_at() for _, block in doc.prose()
                  if block.kind != "heading" and ITERATING.search(block.text)
                  and is_cold_start(block.text)
                  for sentence in block.sentences()[:1]), None)
    if later is not None and later.number > lines[-1].number:
        return failed(first, f"move the cold-start paragraph (line {later.number}) to the "
                            "top, before anything else")
    missing = ("to check the current state first (`git status`, `git log`, the tests)"
               if ITERATING.search(text) else
               "that it is iterating with no memory of earlier iterations")
    return failed(first, f"make the first paragraph tell the agent {missing}")


RULE = Rule(
    id=8,
    key="cold-start",
    definition=("Since the agent re-reads the prompt fresh each iteration: \"You are "
                "iterating on [project]. Check the current state of tests and code before "
                "doing anything. Determine what has already been completed and what "
                "remains.\""),
    check=check,
    passes=(
        "You are iterating on the CSV export. Before doing anything, check the current "
        "state: run `pytest -q` and read `git log --oneline -5`.\n",
        "Each iteration starts with no memory of the last, so first run `make test` and "
        "see which phases are already done.\n",
        "0a. Study `specs/*` to learn the specifications.\n0b. Study @IMPLEMENTATION_PLAN.md.\n",
        "1. **Before starting a task:** Find it in @fix_plan.md and note its status.\n"
        "2. Implement it.\n",
        "You are an autonomous agent working on the CLI.\n\n- ONE task per loop.\n"
        "- Search the codebase before assuming something isn't implemented.\n"
        "- Update @fix_plan.md with your learnings.\n",
    ),
    fails=(
        "Add a `--verbose` flag to the CLI.\n",
        "You are a senior Go engineer.\n\nAdd retries to the HTTP client.\n",
        # looking before building, but no record kept between iterations
        "You are an autonomous agent working on the CLI.\n\n- ONE task per loop.\n"
        "- Search the codebase before assuming something isn't implemented.\n",
    ),
)
