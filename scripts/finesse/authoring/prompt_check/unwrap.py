"""A prompt pasted whole inside a block quote ("> " on every line) or a code fence (its
first line opens a fence that only its last line closes) reads as the prompt itself: the
wrapping is taken off, and the lines keep their numbers. A list written with typographic
bullets ("• No rewriting ...", as word processors and chat windows paste them) reads as a
Markdown list: outside code, such a bullet at the start of a line becomes "-"."""

from __future__ import annotations

import re

from finesse.support.markdown import Fences

_UNQUOTE = re.compile(r"^\s*+> ?")
# Typographic bullets (U+2022 and its kin, the middle dot, the en dash) that open a line.
_BULLET = re.compile(r"^(\s*)[\u2022\u25e6\u25aa\u25ab\u25cf\u25cb\u25a0\u25a1\u2023\u2043"
                     r"\u25b8\u25ba\u00b7\u2013](?=\s+\S)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^`]*$")


def _unfenced(raw_lines: list[str]) -> list[str]:
    """A prompt fenced whole (its first line opens a code fence that only its last line
    closes) reads as the prompt: the fence lines become blank, the numbering stays."""
    filled = [number for number, raw in enumerate(raw_lines) if raw.strip()]
    if len(filled) < 3:
        return raw_lines
    first, last = filled[0], filled[-1]
    opened = _FENCE.match(raw_lines[first])
    if opened is None:
        return raw_lines
    fence = opened.group(1)
    closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    inner = raw_lines[first + 1:last]
    if not closing.match(raw_lines[last]) or any(closing.match(raw) for raw in inner):
        return raw_lines
    return [*raw_lines[:first], "", *inner, "", *raw_lines[last + 1:]]


def unwrapped(raw_lines: list[str]) -> list[str]:
    if any(raw.strip() for raw in raw_lines) and all(
            raw.lstrip().startswith(">") for raw in raw_lines if raw.strip()):
        raw_lines = [_UNQUOTE.sub("", raw, count=1) for raw in raw_lines]
    return _plain_bullets(_unfenced(raw_lines))


def _plain_bullets(raw_lines: list[str]) -> list[str]:
    fences = Fences()
    return [raw if fences.step(raw) is not None else _BULLET.sub(r"\1-", raw, count=1)
            for raw in raw_lines]
