"""Prompt-only files: a prompt file holds the prompt and nothing else.

Seed 000: the file "must contain ONLY the prompt text — no metadata, no YAML frontmatter, no
markdown headers describing the plan" and "starts directly with the cold start paragraph";
the plan's metadata goes in `<name>-plan.md`. `prompt_only` finds what comes before the
cold-start paragraph: front matter, a heading, `Key: value` metadata, or a title line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from finesse.authoring.prompt_check.document import Block, Document, Line
from finesse.authoring.prompt_check.opening import is_cold_start

FIX = ("start the file with the cold-start paragraph (\"You are iterating on ...\"); "
       "metadata belongs in <name>-plan.md")
_METADATA = re.compile(r"^\s*+[*_]*+[A-Za-z][\w -]{0,30}[*_]*\s*:[*_]*\s+\S")


@dataclass(frozen=True)
class LayoutVerdict:
    passed: bool
    line: Line | None
    fix: str = ""  # one line; empty when passed


def prompt_only(doc: Document) -> LayoutVerdict:
    """Whether the file opens with its cold-start paragraph, and if not, what comes first."""
    if not doc.blocks:
        return LayoutVerdict(True, None)
    first = doc.blocks[0]
    if first.kind == "code" and first.first.number == 1 and first.first.text.strip() == "---":
        return LayoutVerdict(False, first.first, f"the file starts with YAML front matter: {FIX}")
    if first.kind == "heading":
        return LayoutVerdict(False, first.first, f"the file starts with a heading: {FIX}")
    cold = _cold_start_block(doc)
    if cold is None or cold is first:
        return LayoutVerdict(True, first.first)
    what = "metadata" if _METADATA.match(first.first.text) else "text"
    return LayoutVerdict(False, first.first,
                         f"{what} comes before the cold-start paragraph (line "
                         f"{cold.first.number}): {FIX}")


def _cold_start_block(doc: Document) -> Block | None:
    for _, block in doc.prose():
        if block.kind != "heading" and is_cold_start(block.text):
            return block
    return None
