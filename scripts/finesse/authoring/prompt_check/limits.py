"""Attribute 9, a conservative iteration limit: a cap on the loop, stated in the prompt
("Max iterations: 12", "--max-iterations 12", "If unable to make progress after 10
iterations, ... <promise>BLOCKED</promise>"), every number stated that way at most 25.

Saying that there is no cap ("There's no iteration cap on this one", "take as many passes
as you need", "Keep looping for as long as it takes") fails the attribute whatever else
the prompt says: a rule for giving up when stuck is no cap on a loop told to run on. Not
when the same sentence states the cap ("as many passes as you need within the 12-iteration
cap").
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import Line
from finesse.authoring.prompt_check.structure import Prompt
from finesse.authoring.prompt_check.vocabulary import LIMITS, number_value, without_emphasis

MAX_ITERATIONS = 25
_TURNS = r"(?:iterations|loops|passes|rounds|runs)"
NO_LIMIT = re.compile(
    r"\bno\s+(?:fixed\s+|hard\s+|set\s+)?(?:iteration|loop)s?\s+(?:cap|limit|budget|"
    r"maximum|max|ceiling)\b|"
    rf"\bno\s+(?:cap|limit|maximum|ceiling)\s+on\s+(?:the\s+)?(?:number\s+of\s+)?{_TURNS}\b|"
    rf"\b(?:as|however)\s+many\s+(?:of\s+(?:those|these|them)\s+)?{_TURNS}?\s*as\s+(?:you\s+"
    r"(?:need|like|want)|needed|necessary|it\s+takes)\b|"
    rf"\bunlimited\s+{_TURNS}\b|"
    r"\b(?:keep|continue)\s+(?:looping|iterating|going)\s+(?:for\s+)?(?:as\s+long\s+as\s+"
    r"(?:it\s+takes|needed|necessary)|indefinitely|forever)\b",
    re.IGNORECASE,
)


def iteration_limit(prompt: Prompt) -> tuple[bool, Line | None, str]:
    """Whether the prompt caps the loop at most 25 iterations: (passed, the line that shows
    it or what is wrong, the fix)."""
    doc = prompt.doc
    for sentence in doc.sentences():
        plain = without_emphasis(sentence.text)
        unlimited = NO_LIMIT.search(plain)
        # "as many passes as you need within the 12-iteration cap" states a cap.
        if unlimited and not any(pattern.search(plain) for pattern in LIMITS):
            return False, sentence.line_at(), (
                f"remove '{unlimited.group(0)}' and state a conservative cap, e.g. "
                f"'Max iterations: 12' (at most {MAX_ITERATIONS})")
    found: dict[int, tuple[int, Line]] = {}
    texts = [(line.text, line) for line in doc.lines]
    texts += [(sentence.text, sentence.line_at()) for sentence in doc.sentences()]
    for text, line in texts:
        plain = without_emphasis(text)
        for pattern in LIMITS:
            for match in pattern.finditer(plain):
                value = number_value(match.group(1))
                found.setdefault(line.number * 1000 + value, (value, line))
    if not found:
        return False, None, (f"state a conservative cap, e.g. 'Max iterations: 12' "
                             f"(at most {MAX_ITERATIONS})")
    ordered = [found[key] for key in sorted(found)]
    for value, line in ordered:
        if not 1 <= value <= MAX_ITERATIONS:
            return False, line, (f"set the iteration limit to at most {MAX_ITERATIONS}, "
                                 f"not {value}")
    return True, ordered[0][1], ""
