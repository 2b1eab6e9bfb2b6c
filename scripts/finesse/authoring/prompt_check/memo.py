"""Reading a text once: a rule's verdict on a sentence, clause or line is a pure function of
its words, and prompts repeat their words (a checklist of like items, a template pasted per
task, a 1 MiB log of the same lines), so each distinct short text is read once per process.

`per_text` keeps the answers of a function of one string for texts of at most `_LONGEST`
characters, the most recent `_KEPT` of them; a
longer text is read each time, so the cache never holds more than a bounded amount and no
answer depends on what was read before. Only pure functions whose answer is immutable (a
bool, an int, a tuple, a frozen value) may use it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, TypeVar, cast

_LONGEST = 4_000  # characters: a long paragraph; beyond it the text is read each time
_KEPT = 8_192  # distinct texts per function

Answer = TypeVar("Answer")
_KEPT_ANSWERS: list[Callable[[], None]] = []  # each cache's clear, for `forget`


def per_text(function: Callable[[str], Answer]) -> Callable[[str], Answer]:
    """`function`, answering again from memory for a short text it has read before."""
    kept = lru_cache(maxsize=_KEPT)(function)
    _KEPT_ANSWERS.append(kept.cache_clear)

    @wraps(function)
    def read(text: str) -> Answer:
        return kept(text) if len(text) <= _LONGEST else function(text)

    return read


def per_document(function: Callable[[Any], Answer]) -> Callable[[Any], Answer]:
    """`function` of a parsed document, read once per document: the answer is kept on the
    document itself (a frozen dataclass's own `__dict__`, as `cached_property` keeps it), so
    it goes with the document. The answer must be immutable."""
    key = f"_per_document_{function.__module__}.{function.__qualname__}"

    @wraps(function)
    def read(doc: Any) -> Answer:
        kept = doc.__dict__
        if key not in kept:
            kept[key] = function(doc)
        return cast(Answer, kept[key])

    return read


def forget() -> None:
    """Drop every kept answer: a benchmark times a prompt read cold, as a new process would."""
    for clear in _KEPT_ANSWERS:
        clear()
