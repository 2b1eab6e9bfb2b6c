"""Which paths a prompt puts in scope and which it puts off limits.

A path is a code span holding one path-shaped word (`src/app/`, `models.py`, `*.sql`) or a
bare word that is plainly a path (ends in `/`, has a known extension, or two slashes).
Commands in code spans (`pytest tests/ -q`) are not paths. A path is out of scope when its
clause says so ("out of scope", "leave ... alone", "do not touch", "read-only") or when it
sits under a heading that says so; every other path the prompt names is one that matters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from finesse.authoring.prompt_check.document import Document, Line

_I = re.IGNORECASE
_EXTENSIONS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|go|rs|rb|java|kt|swift|c|h|cc|cpp|hpp|cs|php|md|rst|txt|"
    "json|toml|yaml|yml|ini|cfg|lock|sql|sh|html|css|scss|proto|xml|csv|env|example|gradle"
)
_CODE_SPAN = re.compile(r"`([^`]+)`")
_HAS_EXTENSION = re.compile(rf"\.(?:{_EXTENSIONS})$", _I)
_BARE_PATH = re.compile(
    # The lookbehind keeps a match from starting inside a word: without it a run of "*"
    # or "." would be tried from every position, which takes quadratic time.
    rf"(?<![\w/.*`-])(?:\.{{0,2}}/)?(?:[\w.*-]+/)+(?:[\w.*-]+)?|"
    rf"(?<![\w/.*`-])[\w*-]+\.(?:{_EXTENSIONS})\b",
    _I,
)
_CLAUSE_BREAK = re.compile(r";\s+|\s+—\s+")
_OUT = re.compile(
    r"\bout[- ]of[- ]scope\b|\bnot\s+in\s+scope\b|\boff[- ]limits\b|\bread[- ]only\b|"
    r"\bhands\s+off\b|\bleave\b.{0,80}?\b(?:alone|untouched|as[- ]is)\b|"
    r"\b(?:not|never|don['\u2019]?t|mustn['\u2019]?t)\b[^.;:]{0,25}?\b(?:touch|chang|modif|edit|updat|delet|"
    r"remov|renam|rewrit|reformat|push|commit)\w*",
    _I,
)
_IN = re.compile(
    r"\bin[- ]scope\b|\bonly\s+(?:touch|edit|change|modify|work|write)|"
    r"\b(?:touch|edit|change|modify|work|write)\w*\s+only\b|\bwork(?:ing)?\s+(?:only\s+)?in\b|"
    r"\byou\s+may\s+(?:edit|change|touch|modify|write)|\brelevant\b|\bmatters?\b|\bfocus\s+on\b",
    _I,
)
_EVERYTHING_ELSE = re.compile(
    r"\b(?:everything|anything|nothing|all\s+other|any\s+other)\s+(?:else|files?|paths?)\b", _I
)


@dataclass(frozen=True)
class Scope:
    in_scope: tuple[tuple[str, Line], ...]
    out_of_scope: tuple[tuple[str, Line], ...]
    rest_is_out: Line | None  # "... and nothing else": out of scope without naming paths


def find_scope(doc: Document) -> Scope:
    in_scope: list[tuple[str, Line]] = []
    out_of_scope: list[tuple[str, Line]] = []
    rest_is_out: Line | None = None
    for index, block in doc.prose():
        under_out = any(_OUT.search(h.title) and not _IN.search(h.title)
                        for h in doc.headings_over(index))
        for sentence in block.sentences():
            position = 0
            for clause in _CLAUSE_BREAK.split(sentence.text):
                offset = sentence.text.find(clause, position)
                position = offset + len(clause)
                line = sentence.line_at(offset)
                said_out = bool(_OUT.search(clause)) and not _IN.search(clause)
                paths = _paths(clause)
                if said_out and not paths and _EVERYTHING_ELSE.search(clause):
                    rest_is_out = rest_is_out or line
                target = out_of_scope if (said_out or under_out) else in_scope
                target += [(path, line) for path in paths]
    return Scope(tuple(in_scope), tuple(out_of_scope), rest_is_out)


def _paths(clause: str) -> list[str]:
    found = [span for span in _CODE_SPAN.findall(clause) if _is_path(span)]
    prose = _CODE_SPAN.sub(" ", clause)
    for match in _BARE_PATH.finditer(prose):
        word = match.group(0).rstrip(".,:")
        if _is_path(word) and (word.endswith("/") or word.count("/") >= 2
                               or _HAS_EXTENSION.search(word)):
            found.append(word)
    return found


def _is_path(word: str) -> bool:
    word = word.strip()
    if not word or any(c.isspace() for c in word) or "://" in word or word.startswith("-"):
        return False
    if not re.search(r"[A-Za-z]", word):
        return False
    return "/" in word or bool(_HAS_EXTENSION.search(word.rstrip("/")))
