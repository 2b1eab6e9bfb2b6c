"""Written plans (`tasks/todo.md`) and the Markdown strategies the plan tests draw from."""

from __future__ import annotations

from hypothesis import strategies as st

from finesse.loop.todo.sections import REVIEW_MARKER

PLAN = """\
# Plan: make the tests pass

## Goal
All unit tests pass.

## Acceptance Criteria
- `pytest -q` exits 0

## Plan
1. Fix the parser.

## Verification Commands
- `pytest -q`
- `ruff check .`

## Attempts

### Iteration 1 (2026-11-30 07:00 UTC)
- Approach: read the failing test.

## Review
"""

# Lines a plan may hold: every heading, fence and comment shape, and random text.
FRAGMENTS = [
    "## Goal", "## Acceptance Criteria", "## Plan", "## Verification Commands", "## Attempts",
    "## Review", "##Attempts", "### Attempts", "## attempts:", "  ## ATTEMPTS ##", "## Review:",
    "#### Review", "# Title", "\ufeff## Goal", "```", "````", "~~~", "```python", "``` `x` ```",
    "> ```", "    ```", "- `pytest -q`", "```sh", "pytest -q", "### Iteration 1", REVIEW_MARKER,
    "", "   ", "\t", "<!-- hint -->", "<!--", "-->", "Ünïcödé ✓ 🚀 ∑", "- item", "\\## Review",
]
LINE = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12))
ENDING = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = draw(st.lists(LINE, max_size=24))
    if draw(st.booleans()):
        endings = [draw(ENDING)] * len(lines)
    else:
        endings = draw(st.lists(ENDING, min_size=len(lines), max_size=len(lines)))
    text = "".join(line + ending for line, ending in zip(lines, endings, strict=True))
    if text and draw(st.booleans()):
        text = text.rstrip("\r\n")  # no trailing newline
    return text


DOCUMENTS = st.one_of(documents(), st.text(max_size=60), st.just(""), st.just(PLAN))
# Markdown the loop writes: anything, headings and open fences included.
MARKDOWN = st.one_of(
    st.lists(LINE, max_size=6).map("\n".join),
    st.text(max_size=40),
)
# Plain lines: no heading, fence, comment or blank line to be reshaped.
PLAIN_LINE = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="#`~<\\"),
    min_size=1, max_size=15,
).map(str.strip).filter(bool)
