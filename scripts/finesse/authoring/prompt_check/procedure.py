"""The procedure of each iteration as ordered work: a list, or a paragraph of imperatives,
that picks the next unit of work and then does it ("1. Read the plan and pick the highest
priority incomplete item. 2. Implement it. 3. Run the tests. 4. Commit."; "Read POLISH.md.
Pick the FIRST item with status pending. Implement it fully. Test it."). The loop re-runs
it each iteration, so its steps from the pick on are the order the work goes in.
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import ITEM_MARKER, Document
from finesse.authoring.prompt_check.phase_model import Phase, Phases
from finesse.authoring.prompt_check.words import DO_VERBS, RUN_VERBS, alternation, imperative

_I = re.IGNORECASE
# Picking the next unit of work: "pick the highest-priority incomplete item", "choose the
# most important task", "find the first backlog story", "select ONE unchecked item".
PICKS = re.compile(
    r"\b(?:pick|choose|select|find|take|identify|grab)\b[^.;]{0,40}?\b(?:first|next|"
    r"highest[- ]priority|most\s+important|top|single|one)\b[^.;]{0,60}?\b(?:items?|tasks?|"
    r"stor(?:y|ies)|features?|todos?|tickets?|issues?|steps?|specs?|entr(?:y|ies)|work)\b|"
    # "Decide which task to work on next"
    r"\b(?:decide|choose|pick|select)\s+which\s+(?:[\w-]+\s+)?(?:items?|tasks?|stor(?:y|ies)|"
    r"features?|tickets?|issues?)\s+to\s+(?:work\s+on|do|tackle|implement|address)\b", _I)
# Doing it, as the step's own verb; or after the clause that says when: "After implementing
# functionality or resolving problems, run the tests for that unit of code".
DOES_IT = imperative(DO_VERBS)
DOES_IT_WHEN = re.compile(
    rf"^[\W\d]{{0,8}}(?:after|when|once)\b[^,.;]{{0,80}},\s*(?:then\s+)?(?:immediately\s+)?"
    rf"{alternation((*DO_VERBS, *RUN_VERBS))}\b", _I)


def procedure_phases(doc: Document) -> Phases:
    """The steps, from the pick on, of the first list or paragraph that picks the next unit
    of work and then does it (at least two steps)."""
    for index, block in doc.prose():
        if block.kind == "item":
            if index and doc.list_starts[index] != index:
                continue  # each list is read once, from its first item
            items = [doc.blocks[index], *doc.list_after(index)]
            units = [(ITEM_MARKER.sub("", item.text), item.first, item.lines, "")
                     for item in items]
        elif block.kind == "paragraph":
            units = [(sentence.text, sentence.line_at(), (sentence.line_at(),), sentence.text)
                     for sentence in block.sentences()]
        else:
            continue
        picked = next((at for at, (text, *_) in enumerate(units) if PICKS.search(text)), None)
        if picked is None:
            continue
        # The pick and the doing may share a step: "pick ONE, finish it, commit".
        steps = units[picked:]
        if len(steps) >= 2 and any(DOES_IT.search(text) or DOES_IT_WHEN.search(text)
                                   for text, *_ in steps[1:]):
            return Phases(tuple(Phase(number, line, tuple(lines), told)
                                for number, (_, line, lines, told) in enumerate(steps, 1)),
                          per_iteration=True)
    return Phases(())
