"""Attribute 4, ordered phases: the work comes in an order the agent can follow with no
memory of what it was planning. The phases themselves are read once, for every rule, by
`finesse.authoring.prompt_check.phases`.
"""

from __future__ import annotations

from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict, failed, passed


def check(prompt: Prompt) -> Verdict:
    phases = prompt.phases
    if phases.problem is not None:
        return failed(phases.problem, phases.problem_fix)
    if len(phases.found) < 2:
        return failed(phases.found[0].line if phases.found else None,
                     "split the work into ordered phases ('Phase 1: ...', 'Phase 2: ...') or "
                     "a numbered list under a 'Steps' heading")
    return passed(phases.found[0].line)


RULE = Rule(
    id=4,
    key="ordered-phases",
    definition=("\"Build auth, then products, then cart\" gives clear progression. A flat "
                "list of 20 unordered requirements is ambiguous about what to tackle next "
                "when the agent has no memory of what it was planning."),
    check=check,
    passes=(
        "Phase 1: parse the flag. Verify: `pytest -q -k parse`\n"
        "Phase 2: print debug lines. Verify: `pytest -q`\n",
        "## Steps\n\n1. Add the model.\n2. Add the endpoint.\n3. Add the tests.\n",
        "1. Read the plan and pick the highest-priority incomplete item.\n2. Implement it.\n"
        "3. Run the tests.\n4. Commit.\n",
        "Read POLISH.md. Pick the first item with status pending. Implement it fully. Test it "
        "in the browser.\n",
        "1. Decide which task to work on next.\n2. Work only on that task.\n"
        "3. Make a git commit of that task.\n",
        "1. Follow @PLAN.md and choose the most important item to address.\n"
        "2. After implementing it, run the tests for that unit of code.\n",
    ),
    fails=(
        "Add the model, the endpoint and the tests.\n",
        "Phase 1: do everything. Verify: `pytest -q`\n",
        "Pick the first pending item.\n",
        # the step after the pick only says when, and does nothing
        "1. Choose the most important item to address.\n2. After that, the day is over.\n",
    ),
)
