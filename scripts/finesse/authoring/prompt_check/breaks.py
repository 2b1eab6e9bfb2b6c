"""Where a block's text breaks into sentences: after ".", "!" or "?" (and any emphasis
closing there: "**Rules.** Never ..."), not inside a code span nor after an abbreviation
("e.g."); and before each line that opens with a label ("Out of scope:", "**Verify:**").
Each answer is kept per distinct text (`memo.per_text`): prompts repeat their blocks.
"""

from __future__ import annotations

import bisect
import re

from finesse.authoring.prompt_check.memo import per_text

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[*_]*\s+")  # "**Rules.** Never ..." breaks too
# A line opening with "Label:" ("Out of scope:", "**Verify:**") starts a new sentence.
_LABELLED = re.compile(r"^[*_]*[A-Z][\w()/'-]*(?: [\w()/'-]+){0,3}:[*_]*(?:\s|$)")
_CODE_SPAN = re.compile(r"`[^`]*`")
_ABBREVIATION = re.compile(r"(?:\be\.g|\bi\.e|\betc|\bvs|\bcf)\.$", re.IGNORECASE)


@per_text
def sentence_breaks(text: str) -> tuple[tuple[int, int], ...]:
    """Where `text`'s sentences break (the gap's start and end), outside code spans and
    abbreviations."""
    spans = [span.span() for span in _CODE_SPAN.finditer(text)] if "`" in text else []
    span_starts = [start for start, _ in spans]

    def in_code(position: int) -> bool:
        at = bisect.bisect_right(span_starts, position) - 1
        return at >= 0 and spans[at][0] < position < spans[at][1]

    return tuple((gap.start(), gap.end()) for gap in _SENTENCE_BREAK.finditer(text)
                 if not _ABBREVIATION.search(text, max(0, gap.start() - 5), gap.start())
                 and not in_code(gap.start()))


@per_text
def labelled(line: str) -> bool:
    return bool(_LABELLED.match(line))
