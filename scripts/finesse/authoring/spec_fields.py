"""The text fields of a plan spec: each refuses text the prompt could not say as meant.

Prompt text is one line with paired backticks and no promise tag; commands carry no
backticks and name a program; nothing but `iteration_limit` states an iteration limit;
criteria and deliverables name results a command shows (no "clean", "properly", "good");
text the prompt puts at the start of a line never opens like a phase.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from finesse.authoring.prompt_check.criteria import vague_word
from finesse.authoring.prompt_check.vocabulary import LIMITS, PHASE_MARKER

DEFAULT_PROMISE = "TASK_COMPLETE"
_PROMISE = re.compile(r"[A-Z][A-Z0-9_-]*(?: [A-Z0-9_-]+)*")
_PROMISE_TAG = re.compile(r"</?promise>", re.IGNORECASE)


def _one_line(text: str) -> str:
    collapsed = " ".join(text.split())
    if not collapsed:
        raise ValueError("is empty; write some text")
    if not collapsed.isprintable():
        raise ValueError("holds a control character; use plain text")
    return collapsed


def _no_limit(text: str) -> str:
    if any(pattern.search(text) for pattern in LIMITS):
        raise ValueError("states an iteration limit; say it once, in iteration_limit")
    return text


def _prompt_text(text: str) -> str:
    text = _one_line(text)
    if _PROMISE_TAG.search(text):
        raise ValueError("holds a <promise> tag; the prompt says the promise once, from "
                         "`promise`")
    if text.count("`") % 2:
        raise ValueError("has an unpaired backtick; close every `code span`")
    return _no_limit(text)


def _command(text: str) -> str:
    if "\n" in text or "\r" in text:
        raise ValueError("spans several lines; give one shell command line (join them with &&)")
    text = text.strip()
    if not text or not text.isprintable():
        raise ValueError("must be a printable shell command, e.g. `pytest -q`")
    if "`" in text:
        raise ValueError("holds a backtick; write the command without backticks ($(...) "
                         "instead of `...`)")
    if not any(char.isalnum() for char in text):
        raise ValueError("names no program; give a shell command, e.g. `pytest -q`")
    return _no_limit(text)


def _expectation(text: str) -> str:
    text = _prompt_text(text)
    vague = vague_word(text)
    if vague:
        raise ValueError(f"says {vague!r}, which no command can check; name the result, e.g. "
                         "'exits 0' or 'prints 0 lines'")
    return text


def _line_start(text: str) -> str:
    """Text the prompt puts at the start of a rule or criterion line."""
    text = _prompt_text(text)
    if PHASE_MARKER.match(f"- {text}"):
        raise ValueError("opens like a phase ('Phase 2: ...'), which would renumber the "
                         "phases; say it another way")
    return text


def _criterion_text(text: str) -> str:
    return _line_start(_expectation(text))


def _prose(text: str) -> str:
    text = text.strip()
    if not text:
        raise ValueError("is empty; write some text")
    return text


def _scope_path(text: str) -> str:
    text = text.strip()
    if not text or any(c.isspace() for c in text) or "`" in text:
        raise ValueError("must be one path or glob, without spaces or backticks")
    if text.startswith(("-", "/", "~")) or "://" in text:
        raise ValueError("must be relative to the project root, e.g. src/app/")
    if not re.search(r"[A-Za-z]", text):
        raise ValueError("must hold a letter, e.g. src/ or tests/test_app.py")
    return _no_limit(text)


def _promise(text: str) -> str:
    text = " ".join(text.split())
    if not 4 <= len(text) <= 80 or not _PROMISE.fullmatch(text):
        raise ValueError("must be 4 to 80 capitals, digits, _ or -, words split by single "
                         f"spaces, e.g. {DEFAULT_PROMISE}")
    if text == "BLOCKED":
        raise ValueError("BLOCKED is the stuck signal; pick another, e.g. "
                         f"{DEFAULT_PROMISE}")
    return text


PromptText = Annotated[str, AfterValidator(_prompt_text)]
Name = Annotated[str, Field(max_length=120), AfterValidator(_prompt_text)]
Command = Annotated[str, AfterValidator(_command)]
Expectation = Annotated[str, AfterValidator(_expectation)]
CriterionText = Annotated[str, AfterValidator(_criterion_text)]
LineStart = Annotated[str, AfterValidator(_line_start)]
Deliverable = Annotated[str, Field(max_length=120), AfterValidator(_expectation)]
Prose = Annotated[str, AfterValidator(_prose)]
ScopePath = Annotated[str, AfterValidator(_scope_path)]
Promise = Annotated[str, AfterValidator(_promise)]


