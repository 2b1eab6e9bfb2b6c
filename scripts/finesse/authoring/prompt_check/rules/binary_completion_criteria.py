"""Attribute 1, binary completion criteria: every criterion is a result a command shows.

The words that judge quality and the forms of a checkable criterion are read by
`finesse.authoring.prompt_check.quality`; the completion conditions and the phases'
criteria by `finesse.authoring.prompt_check.criteria`.
"""

from __future__ import annotations

from finesse.authoring.prompt_check.criteria import (
    completion_conditions,
    phase_criteria,
    phase_statements,
    phase_verified,
)
from finesse.authoring.prompt_check.quality import NAMES_THE_WORK, checkable, vague_word
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict, failed, passed


def check(prompt: Prompt) -> Verdict:
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
            return failed(line, f"replace '{word}' with a command and its expected result, "
                               "e.g. '`ruff check .` exits 0'")
    for phase in prompt.phases.found:
        vague = [(vague_word(text, prompt.tool_names), line)
                 for text, line in phase_statements(phase)]
        if phase_verified(phase, prompt.command_names):
            # Its command checks it, unless every criterion under it only judges quality:
            # "- The code should be robust and production-ready" over "Verify: cargo test".
            if len(vague) >= 2 and all(word for word, _ in vague):
                word, line = vague[0]
                return failed(line, f"replace '{word}' with a command and its expected "
                                   f"result: phase {phase.number}'s criteria only judge quality")
            continue
        found = next(((word, line) for word, line in vague if word), None)
        if found:
            return failed(found[1], f"replace '{found[0]}' with a command and its expected "
                                   f"result, or give phase {phase.number} a 'Verify: "
                                   "`<command>`' line")
    for text, line in items:
        if not checkable(text) and not NAMES_THE_WORK.search(text):
            return failed(line, "make this criterion a command with an expected result, "
                               "e.g. '`pytest -q` exits 0'")
    for text, line in conditions:
        if not checkable(text) and not NAMES_THE_WORK.search(text):
            return failed(line, "say what must be true: 'when ALL of the following are "
                               "true:' and a list of checks, e.g. '- `pytest -q` exits 0'")
    texts = [text for text, _ in [*conditions, *items]]
    if not prompt.phases.per_iteration:
        # The steps of each iteration ("3. Run the tests") say how to work, not when the
        # whole task is done.
        texts += [phase.content for phase in prompt.phases.found]
    if any(NAMES_THE_WORK.search(text) for text, _ in conditions):
        # "When everything above holds": the lists it points at are the criteria.
        texts += [block.text for block in prompt.doc.blocks if block.kind == "item"]
    if not any(checkable(text) for text in texts):
        signals = prompt.signals
        return failed(signals[0].line if signals else None,
                     "list the completion criteria, one runnable check per line, e.g. "
                     "'- `pytest -q` exits 0'")
    first = items[0][1] if items else conditions[0][1] if conditions else None
    return passed(first)


RULE = Rule(
    id=1,
    key="binary-completion-criteria",
    definition=("Every requirement must be checkable by running a command. If the agent "
                "can't programmatically verify success, it can't know when to stop."),
    check=check,
    passes=(
        "Output <promise>DONE</promise> when ALL of the following are true:\n"
        "- `pytest -q` exits 0\n- `ruff check .` exits 0\n",
        "Phase 1: parse the flag. Verify: `pytest -q -k parse`\n"
        "Phase 2: print it. Verify: `pytest -q`\n"
        "When ALL phases are complete, output <promise>DONE</promise>.\n",
    ),
    fails=(
        "Output <promise>DONE</promise> when ALL of the following are true:\n"
        "- the code is clean\n- it is properly structured\n",
        "When the feature works well, output <promise>DONE</promise>.\n",
    ),
)
