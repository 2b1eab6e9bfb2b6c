"""The one Markdown scanner: what is code and what is prose."""

from __future__ import annotations

from finesse.support.markdown import strip_code


def test_strip_code_keeps_prose_only() -> None:
    reply = "before\n```python\nx = 1\n```\nmiddle `y` after\n~~~\nz\n~~~\nend"
    assert strip_code(reply) == "before\nmiddle   after\nend"
