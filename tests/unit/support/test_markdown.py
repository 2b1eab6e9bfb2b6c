"""The one Markdown scanner: what is code and what is prose."""

from __future__ import annotations

from finesse.support.markdown import HeadingSection, heading_sections, section_ends, strip_code


def test_strip_code_keeps_prose_only() -> None:
    reply = "before\n```python\nx = 1\n```\nmiddle `y` after\n~~~\nz\n~~~\nend"
    assert strip_code(reply) == "before\nmiddle   after\nend"


def test_section_ends_close_each_heading_at_the_next_of_its_level_or_above() -> None:
    #           h1  text  h2  text  h3  h2  h1  text
    levels = [1, None, 2, None, 3, 2, 1, None]
    assert section_ends(levels) == [6, 2, 5, 4, 5, 6, 8, 8]
    assert section_ends([]) == []


def test_heading_sections_skip_fenced_code_and_span_their_lines() -> None:
    text = "# Plan\nintro\n## Phase 1\n```\n# not a heading\n```\n## Phase 2 ##\ntext\n# End\n"
    assert heading_sections(text) == [
        HeadingSection(1, "Plan", 0, 8), HeadingSection(2, "Phase 1", 2, 6),
        HeadingSection(2, "Phase 2", 6, 8), HeadingSection(1, "End", 8, 9)]
