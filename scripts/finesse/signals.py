"""What the agent's last reply says: the completion promise, found only where it was meant.

Also the protocol's terminal lines (`RESULT: VERIFIED_COMPLETE`, `RESULT: BLOCKED` and the
blocker after it) and the iteration record lines (`Approach:`, `Evidence:`, `Learning:`,
`Next:`), all read from the prose only.

A promise counts only as a `<promise>...</promise>` tag whose trimmed, whitespace-collapsed
text equals the configured promise, outside fenced code blocks and inline code. A bare
`DONE`, or a tag quoted as code while the agent explains the protocol, never ends a loop.
"""

from __future__ import annotations

import hashlib
import re

from finesse.support.markdown import strip_code

_PROMISE_TAG = re.compile(r"<promise>(.*?)</promise>", re.DOTALL | re.IGNORECASE)
# Markdown decoration a line may carry around a label: indentation, bullets, quotes, bold.
_DECORATION = r"[ \t>*_+-]*"
_RESULT_LINE = re.compile(
    rf"^{_DECORATION}RESULT:[*_ \t]*(VERIFIED_COMPLETE|BLOCKED)\b[*_ \t.]*(.*)$", re.MULTILINE
)
_RECORD_LINE = re.compile(
    rf"^{_DECORATION}(approach|evidence|learnings?|next(?: action| step)?)[*_]*[ \t]*:[*_]*"
    r"[ \t]*(.*?)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
MAX_BLOCKER_LINES = 20


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


def promise_texts(reply: str) -> list[str]:
    """Every promise tag's text in the prose of the reply, whitespace-collapsed."""
    return [collapse_whitespace(match) for match in _PROMISE_TAG.findall(strip_code(reply))]


def has_promise(reply: str, promise: str) -> bool:
    wanted = collapse_whitespace(promise)
    return bool(wanted) and wanted in promise_texts(reply)


def result_line(reply: str) -> str | None:
    """The last terminal line of the prose: VERIFIED_COMPLETE, BLOCKED, or None."""
    found = _RESULT_LINE.findall(strip_code(reply))
    return found[-1][0] if found else None


def claims_completion(reply: str, promise: str) -> bool:
    """The agent says it is done: the promise, or `RESULT: VERIFIED_COMPLETE`."""
    return has_promise(reply, promise) or result_line(reply) == "VERIFIED_COMPLETE"


def blocker(reply: str) -> str | None:
    """What blocks, when the prose has a `RESULT: BLOCKED` line: the text on that line after
    the marker and the lines after it (up to 20). None without such a line."""
    prose = strip_code(reply)
    matches = [m for m in _RESULT_LINE.finditer(prose) if m.group(1) == "BLOCKED"]
    if not matches:
        return None
    last = matches[-1]
    on_marker = last.group(2).strip(" \t:-")
    lines = ([on_marker] if on_marker else []) + prose[last.end():].splitlines()[1:]
    text = "\n".join(line.rstrip() for line in lines[:MAX_BLOCKER_LINES]).strip()
    return text or "(no reason given)"


def record_fields(reply: str) -> dict[str, str]:
    """The iteration record lines of the prose, by field: approach, evidence, learning, next.
    The first line of each kind counts."""
    fields: dict[str, str] = {}
    for label, value in _RECORD_LINE.findall(strip_code(reply)):
        key = label.lower().split()[0].rstrip("s") if label.lower().startswith("learning") \
            else label.lower().split()[0]
        if value and key not in fields:
            fields[key] = value
    return fields


def digest(reply: str) -> str:
    """Identifies a reply up to whitespace: two identical replies have the same digest."""
    return hashlib.sha256(collapse_whitespace(reply).encode()).hexdigest()[:16]
