"""What attribute 1 judges a criterion by: words that judge quality without a measure
("clean", "properly structured", "good": the seed's NO examples), and results that only a
command can show ("All tests pass", "Coverage > 80%": its YES examples)."""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import ITEM_MARKER
from finesse.authoring.prompt_check.vocabulary import (
    CODE_SPAN,
    looks_like_command,
    mentions_command,
)

_I = re.IGNORECASE

# Words that judge quality without saying how to measure it: "Code is clean", "Make it good",
# "Properly structured" (the seed's own NO examples), and their kin. A hyphenated compound
# ("machine-readable", "well-known") is not one, nor a task ("clean up the parser").
_NOT_IN_COMPOUND = r"(?<![\w-])"
VAGUE = re.compile(
    _NOT_IN_COMPOUND
    + r"(?:clean(?:ly|er)?(?![\s-]*(?:up|out)\b)|good|better|nice(?:r|ly)?|elegant(?:ly)?|"
    r"idiomatic(?:ally)?|ergonomic(?:ally)?|graceful(?:ly)?|thorough(?:ly)?|"
    r"robust(?:ly)?|proper(?:ly)?|well[- ](?:written|structured|organi[sz]ed|designed|"
    r"documented|tested|named|factored)|organi[sz]ed|readable|maintainable|polish(?:ed)?|"
    r"professional(?:ly)?|production[- ](?:ready|quality|grade)|high[- ]quality|"
    r"looks?\s+(?:right|good|fine|nice|clean|better|professional|polished)|"
    r"easy\s+to\s+(?:read|follow|understand|maintain|use)|sensible|friendl(?:y|ier)|helpful|"
    r"(?:is|are|be)\s+clear|tid(?:y|ier)|messy|beautiful(?:ly)?|intuitive(?:ly)?|"
    r"as\s+appropriate|appropriate(?:ly)?|reasonabl[ey]|sufficient(?:ly)?|correctly|"
    r"as\s+expected|as\s+needed|where\s+necessary|proud|flows?\s+well|works?\s+well|"
    r"feels?|feeling|reads?\s+(?:well|nicely|smoothly|naturally))\b",
    _I,
)
# A quality word that a command's result pins down is not vague: "the commands pass
# cleanly", "RuboCop clean", "lint-clean", "a clean build", `make clean`.
MEASURED_QUALITY = re.compile(
    r"\b(?:pass\w*|exit\w*|run\w*|build\w*|compil\w*)\s+cleanly\b|"
    r"\b(?:lint|\w*cop|\w*lint|tree|build)[- ]clean\b|"
    r"\bclean\s+(?:build|checkout|working\s+tree|tree|install|exit)\b|\bmake\s+clean\b|"
    # "all five checks are clean", "the scans come back clean", "mypy is clean": a check's
    # output (the prompt's own programs read as "check": `vague_word`).
    r"\b(?:checks?|commands?|linters?|lints?|scans?|builds?|gates?|\w*lint|\w*cop|\w*check(?:er)?|"
    r"clippy|mypy|pyright|tsc|vet|analy[sz]ers?|type[- ]?check\w*|static\s+analysis|fmt|"
    r"format(?:ter|ting)?|suite|(?:working\s+)?tree|ci|"
    r"pipeline)\s+(?:(?:all|both)\s+)?(?:(?:are|is|comes?\s+back|stays?|runs?|returns?|exits?|"
    r"reports?)\s+)?(?:(?:all|both|completely|fully)\s+)?clean\b|"
    # "when you're reasonably confident the phases are complete": how sure, not how good
    # (leave to finish on a hunch is attribute 10's concern).
    r"\b(?:reasonabl[ey]|fairly|pretty|quite|sufficiently)\s+(?:confident|sure|certain)\b",
    _I,
)
# A quality word that a check right after it measures: "parsed correctly — `pytest -k
# quoted` passes", "behaves as expected (`pytest -k conflict` passes)", "readable: `make
# lint` checks it" (a command reads "check" by then: `vague_word`).
MEASURED_BY = re.compile(
    r"[^;.]{0,60}?(?:[:(=\u2014\u2013\u2192]|->|\s-\s|\b(?:by|via|per)\b)[^;.]{0,30}?"
    r"(?:\bcheck\b|\b(?:returns?|exits?|prints?)\s+(?:HTTP\s+|status\s+|code\s+)?\d+\b|"
    r"\b\d{3}\b|\bpass(?:es|ed)?\b)", _I)
# A criterion about a file the work leaves behind: "`README.md` documents the flag",
# "CHANGELOG entry added".
ARTEFACT = re.compile(
    r"\b[\w./-]*[\w-]\.(?:md|rst|txt|toml|ya?ml|json|cfg|ini|lock|py|ts|js|go|rs|rb|java|"
    r"kt|cs|php|sql|sh|html|css)\b|\b(?:README|CHANGELOG|CHANGES|LICENSE|CONTRIBUTING)\b")
# Results that only a command can show ("All tests pass", "Coverage > 80%", "No linter
# errors", "API returns 200 for GET /users": the seed's YES examples).
CHECKABLE = re.compile(
    r"\b(?:pass(?:es|ed|ing)?|green|succeed(?:s|ed)?|exit(?:s|ed)?|"
    r"fail(?:s|ed)?\s+(?:with|for|on)|return(?:s|ed)?\s+(?:HTTP\s+|status\s+)?\d{3}|"
    r"(?:HTTP|status)\s+\d{3}|print(?:s|ed)?|reports?|emits?|logged|compiles?|builds?|"
    r"(?:warning|error|lint)[- ]free|(?:without|with\s+no|free\s+of)\s+(?:any\s+)?(?:warnings?|"
    r"errors?|failures?|diffs?|findings?)|"
    r"(?:no|zero|0)\s+(?:[\w-]+\s+){0,2}(?:errors?|warnings?|violations?|failures?|issues?|"
    r"leaks?|offen[cs]es?|diffs?|changes?|matches|regressions?|crash\w*|panics?)|coverage|"
    r"exists?|contains?|raises?|"
    r"matches|equals?|(?:is|are)\s+(?:at\s+least|at\s+most|exactly|below|above|under|over|"
    r"between)|(?:under|below|above|over|at\s+least|at\s+most)\s+\d)\b|\d\s*%|[<>]=?\s*\d",
    _I,
)

# Nothing of a kind left, which a search shows: "no `Untyped*` imports left in it", "no
# hard-coded strings remain in the file", "none of the old calls survive".
ABSENT = re.compile(
    r"\b(?:no|zero|none\s+of\s+the)\b[^.;:]{0,60}?\b(?:left|remain(?:s|ing)?|survives?|"
    r"anywhere)\b", _I)

# "The task is finished only when ...", "Done = every check passes", in a prompt without a
# signal.
DONE_WHEN = re.compile(
    r"\b(?:finished|complete|completed|done|completion)\b[^.]{0,40}?\b(?:only\s+)?"
    r"(?:when|once|if)\b|\b(?:done|finished|complete)\s*(?:=|means\b)", _I)
# A completion condition that points at checks given elsewhere: "when ALL phases are
# complete", "when all four steps hold", "when every item above holds".
NAMES_THE_WORK = re.compile(
    r"\b(?:phases?|steps?|stages?|milestones?|parts?|checks?|criteria|criterion|items?|points?|bullets?|"
    r"requirements?|tasks?|verifications?|verif(?:y|ies|ied)|gates?|commands?|tests?|"
    r"conditions?|box(?:es)?|rows?|tables?|deliverables?|goals?|acceptance|sections?|"
    r"(?:check)?lists?|definition\s+of\s+done)\b|"
    r"\b(?:everything|all(?:\s+of)?\s+(?:the\s+)?)\s*(?:above|below|listed|in|on|from)\b|"
    r"\ball\s+(?:of\s+)?(?:that|this|these|those|them)\b|\b(?:these|those)\s+(?:all\s+)?"
    r"(?:hold|pass|are\s+(?:true|met|green))\b", _I)


def vague_word(text: str, names: frozenset[str] = frozenset()) -> str | None:
    """The first word of `text`, outside code, that judges quality without a measure. The
    `names` of the prompt's commands stand for checks: "tidy and format are clean" reads
    "check and check are clean"."""
    # A command in a code span is a check too: "`bats test/` and `shellcheck x` are clean".
    prose = CODE_SPAN.sub(
        lambda span: " check " if looks_like_command(span.group(0).strip("`")) else " ", text)
    for name in sorted(names, key=len, reverse=True):
        prose = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", "check", prose, flags=_I)
    prose = MEASURED_QUALITY.sub(" ", prose)
    for found in VAGUE.finditer(prose):
        if not MEASURED_BY.match(prose, found.end()):
            return found.group(0)
    return None


def checkable(text: str) -> bool:
    """Whether `text` names a command, or a result only a command can show. A criterion
    that opens with a code span ("- `make check` prints OK") names its command."""
    prose = CODE_SPAN.sub(" x ", text)
    if (CHECKABLE.search(prose) or ITEM_MARKER.sub("", text).startswith("`")
            or ARTEFACT.search(text) or ABSENT.search(prose) or MEASURED_QUALITY.search(prose)):
        return True
    spans = [span.strip("`") for span in CODE_SPAN.findall(text)]
    return any(looks_like_command(span) for span in spans) or bool(
        mentions_command(CODE_SPAN.sub(" ", text)))
