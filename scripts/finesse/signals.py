"""What the agent's last reply says: the completion promise, found only where it was meant.

A promise counts only as a `<promise>...</promise>` tag whose trimmed, whitespace-collapsed
text equals the configured promise, outside fenced code blocks and inline code. A bare
`DONE`, or a tag quoted as code while the agent explains the protocol, never ends a loop.
"""

from __future__ import annotations

import re

# Any indentation and `>` quote markers: a fence nested in a list item or a quote is code too.
_FENCE_OPEN = re.compile(r"^[ \t>]*(`{3,}|~{3,})")
_PROMISE_TAG = re.compile(r"<promise>(.*?)</promise>", re.DOTALL | re.IGNORECASE)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


def strip_code(text: str) -> str:
    """The prose of a Markdown reply: fenced blocks and inline code spans removed.

    An unclosed fence hides the rest of the reply, as a Markdown renderer would show it.
    """
    prose: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        if fence is None:
            opened = _FENCE_OPEN.match(line)
            if opened:
                fence = opened.group(1)
                continue
            prose.append(line)
        else:
            stripped = line.lstrip(" \t>").rstrip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
                fence = None
    return _CODE_SPAN.sub(" ", "\n".join(prose))


def promise_texts(reply: str) -> list[str]:
    """Every promise tag's text in the prose of the reply, whitespace-collapsed."""
    return [collapse_whitespace(match) for match in _PROMISE_TAG.findall(strip_code(reply))]


def has_promise(reply: str, promise: str) -> bool:
    wanted = collapse_whitespace(promise)
    return bool(wanted) and wanted in promise_texts(reply)
