"""What the agent's last reply says, read once from its prose (code never counts): the
completion promise, the protocol's terminal result line, the blocker, and the iteration
record lines (`Approach:`, `Evidence:`, `Learning:`, `Next:`).

The terminal-line rule (seed 001: "exactly one result line, then the promise"):

1. Only prose counts: fenced code, indented code and inline code spans are removed first
   (`finesse.support.markdown`), so a tag or a line quoted as code never ends a loop.
2. A result line is a line whose text, after Markdown decoration (indentation, `>` quote
   markers, list bullets, `#` heading marks, `*`/`_` emphasis), starts with `RESULT:` and
   then the word `VERIFIED_COMPLETE` or `BLOCKED` (upper case, a whole word:
   `BLOCKED_BY_X` is not it). The terminal result line is the LAST one in the prose.
3. A terminal `RESULT: BLOCKED` makes the reply **blocked**, whatever else it holds: the
   promise after it is the seed's transport-level stop signal, never a claim of success.
   The blocker is the rest of that line and the lines after it (at most 20), less any
   promise tag.
4. Otherwise the reply **claims completion** when its prose holds the promise tag
   `<promise>TEXT</promise>` (the tag exactly as seed 001 writes it, lower case;
   TEXT trimmed and whitespace-collapsed, equal to the loop's promise), or when its
   terminal result line is `RESULT: VERIFIED_COMPLETE`. A bare `DONE` never counts.
"""

from __future__ import annotations

import re
from typing import Literal

from finesse.record import Record, field
from finesse.support.fingerprint import fingerprint
from finesse.support.markdown import strip_code

Terminal = Literal["VERIFIED_COMPLETE", "BLOCKED"]

OPEN_TAG, CLOSE_TAG = "<promise>", "</promise>"
# Markdown decoration a line may carry around a label: indentation, quotes, bullets,
# heading marks, emphasis.
_DECORATION = r"[ \t>*_+#-]*"
_RESULT_LINE = re.compile(
    rf"^{_DECORATION}RESULT:[*_ \t]*(VERIFIED_COMPLETE|BLOCKED)"
    r"(?:[*_]+(?![A-Za-z0-9])|(?![A-Za-z0-9_]))(.*)$",  # the rest: `_blocker` trims it
    re.MULTILINE,
)
_RECORD_LINE = re.compile(
    rf"^{_DECORATION}(approach|evidence|learnings?|next(?: action| step)?)[*_]*[ \t]*:[*_]*"
    r"[ \t]*(.*)$",  # the value's trailing blanks are stripped in code: `(.*?)[ \t]*$` is quadratic
    re.IGNORECASE | re.MULTILINE,
)
MAX_BLOCKER_LINES = 20


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


def promise_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each `<promise>...</promise>` tag in `text`, left to right, as the
    shortest match from each opening tag (an opening tag inside a tag's text is text). A scan
    with `str.find`, linear in `text`: once no closing tag follows, none will."""
    spans: list[tuple[int, int]] = []
    position = 0
    while (opening := text.find(OPEN_TAG, position)) >= 0:
        closing = text.find(CLOSE_TAG, opening + len(OPEN_TAG))
        if closing < 0:
            break
        position = closing + len(CLOSE_TAG)
        spans.append((opening, position))
    return spans


def _promise_bodies(text: str) -> list[str]:
    return [text[start + len(OPEN_TAG):end - len(CLOSE_TAG)]
            for start, end in promise_spans(text)]


def _without_promises(text: str) -> str:
    kept, position = [], 0
    for start, end in promise_spans(text):
        kept.append(text[position:start])
        position = end
    kept.append(text[position:])
    return "".join(kept)


class Reading(Record):
    """The reply read once: see the module docstring for the rule."""

    terminal: Terminal | None = None
    promised: bool = False  # the prose holds the loop's promise tag
    blocker: str | None = None  # set when terminal is BLOCKED
    fields: dict[str, str] = field(default_factory=dict)  # approach, evidence, learning, next

    @property
    def blocked(self) -> bool:
        return self.terminal == "BLOCKED"

    @property
    def claims_completion(self) -> bool:
        return not self.blocked and (self.promised or self.terminal == "VERIFIED_COMPLETE")


def read_reply(reply: str, promise: str) -> Reading:
    prose = strip_code(reply)
    wanted = collapse_whitespace(promise)
    promised = bool(wanted) and wanted in (
        collapse_whitespace(text) for text in _promise_bodies(prose))
    matches = list(_RESULT_LINE.finditer(prose)) if "RESULT:" in prose else []
    last = matches[-1] if matches else None
    terminal: Terminal | None = None
    blocker = None
    if last is not None:
        terminal = "BLOCKED" if last.group(1) == "BLOCKED" else "VERIFIED_COMPLETE"
        if terminal == "BLOCKED":
            blocker = _blocker(prose, last)
    return Reading(terminal, promised, blocker, _record_fields(prose))


def _blocker(prose: str, marker: re.Match[str]) -> str:
    on_marker = marker.group(2).lstrip("*_ \t.").strip(" \t:-")
    lines = ([on_marker] if on_marker else []) + prose[marker.end():].splitlines()[1:]
    text = "\n".join(line.rstrip() for line in lines[:MAX_BLOCKER_LINES])
    text = _without_promises(text).strip()  # the stop signal after it is no reason
    return re.sub(r"\n{3,}", "\n\n", text) or "(no reason given)"


def _record_fields(prose: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for label, rest in _RECORD_LINE.findall(prose) if ":" in prose else []:
        value = rest.rstrip(" \t")
        word = label.lower().split()[0]
        key = word.rstrip("s") if word.startswith("learning") else word
        if value and key not in fields:
            fields[key] = value
    return fields


def promise_texts(reply: str) -> list[str]:
    """Every promise tag's text in the prose of the reply, whitespace-collapsed."""
    return [collapse_whitespace(match) for match in _promise_bodies(strip_code(reply))]


def has_promise(reply: str, promise: str) -> bool:
    return read_reply(reply, promise).promised


def result_line(reply: str) -> Terminal | None:
    """The terminal result line of the prose: VERIFIED_COMPLETE, BLOCKED, or None."""
    return read_reply(reply, "").terminal


def claims_completion(reply: str, promise: str) -> bool:
    return read_reply(reply, promise).claims_completion


def blocker(reply: str) -> str | None:
    """What blocks, when the terminal result line is `RESULT: BLOCKED`; else None."""
    return read_reply(reply, "").blocker


def record_fields(reply: str) -> dict[str, str]:
    """The iteration record lines of the prose, by field: approach, evidence, learning, next.
    The first line of each kind counts."""
    return read_reply(reply, "").fields


def digest(reply: str) -> str:
    """Identifies a reply up to whitespace: two identical replies have the same digest. A
    lone surrogate (Claude Code's JSON may carry one) is hashed as it is, never an error."""
    text = collapse_whitespace(reply).encode("utf-8", errors="surrogatepass")
    return fingerprint(text)
