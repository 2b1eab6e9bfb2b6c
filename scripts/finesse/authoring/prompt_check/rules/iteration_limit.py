"""Attribute 9, a conservative iteration limit: a cap on the loop, stated in the prompt
("Max iterations: 12", "--max-iterations 12", "If unable to make progress after 10
iterations, ... <promise>BLOCKED</promise>"), every number stated that way at most 25.

Saying that there is no cap ("There's no iteration cap on this one", "unlimited
iterations", "keep looping forever") fails the attribute whatever else the prompt says: a
rule for giving up when stuck is no cap on a loop told to run on. So does "take as many
passes as you need" or "keep looping as long as it takes", unless a cap is stated outright
("Max iterations: 12"), in that sentence or another: then it speaks of the passes within
the cap. Loose wordings of a cap count too (`_loose_caps`).
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import Line
from finesse.authoring.prompt_check.memo import per_text
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict
from finesse.authoring.prompt_check.vocabulary import (
    LIMITS,
    NUMBER,
    number_value,
    without_emphasis,
)

MAX_ITERATIONS = 25
_TURNS = r"(?:iterations|loops|passes|rounds|runs)"
NO_LIMIT = re.compile(
    r"\bno\s+(?:fixed\s+|hard\s+|set\s+)?(?:iteration|loop)s?\s+(?:cap|limit|budget|"
    r"maximum|max|ceiling)\b|"
    rf"\bno\s+(?:cap|limit|maximum|ceiling)\s+on\s+(?:the\s+)?(?:number\s+of\s+)?{_TURNS}\b|"
    rf"\bunlimited\s+{_TURNS}\b|"
    r"\b(?:keep|continue)\s+(?:looping|iterating|going)\s+(?:for\s+)?(?:indefinitely|forever)\b",
    re.IGNORECASE,
)
# Softer: "take as many passes as you need", "keep looping as long as it takes". Beside an
# explicit cap ("Max iterations: 12"), they speak of the passes within it.
AS_MANY_AS_NEEDED = re.compile(
    rf"\b(?:as|however)\s+many\s+(?:of\s+(?:those|these|them)\s+)?{_TURNS}?\s*as\s+(?:you\s+"
    r"(?:need|like|want)|needed|necessary|it\s+takes)\b|"
    r"\b(?:keep|continue)\s+(?:looping|iterating|going)\s+(?:for\s+)?as\s+long\s+as\s+"
    r"(?:it\s+takes|needed|necessary)\b",
    re.IGNORECASE,
)
# Iterations of something other than the loop: a fuzzer, property tests, a benchmark.
OTHER_ITERATIONS = re.compile(
    r"\b(?:fuzz\w*|propert(?:y|ies)|bench\w*|epochs?|retr(?:y|ies)|requests?|hypothesis|"
    r"quickcheck|proptest|per\s+(?:target|test|case|request))\b", re.IGNORECASE)
# The caps a prompt states outright (all of `LIMITS` but the BLOCKED-after-N rule).
_EXPLICIT = LIMITS[:-1]
_MENTIONS_NUMBER = re.compile(rf"\b{NUMBER}", re.IGNORECASE)
# (after a letter-less boundary: "max_iterations: 12" names its turns too)
_MENTIONS_TURN = re.compile(r"(?<![^\W_])(?:iter\w*|loops?|pass(?:es)?|rounds?|runs?|cycles?|"
                            r"restarts?|go-?rounds?|attempts?)\b", re.IGNORECASE)
# What every wording of "no cap" holds (NO_LIMIT, AS_MANY_AS_NEEDED).
_MAY_BE_UNCAPPED = re.compile(r"\b(?:unlimited|many|caps?|limits?|budget|maximum|max|ceiling|"
                              r"indefinitely|forever|long)\b", re.IGNORECASE)


@per_text
def _may_cap(text: str) -> bool:
    return bool(_MENTIONS_NUMBER.search(text) and _MENTIONS_TURN.search(text))


def iteration_limit_found(prompt: Prompt) -> tuple[bool, Line | None, str]:
    """Whether the prompt caps the loop at most 25 iterations: (passed, the line that shows
    it or what is wrong, the fix)."""
    doc = prompt.doc
    # Every cap has a number and a word for the loop's turns: the texts without both are read
    # for "no cap" alone.
    numbered = [(line.text, line) for line in doc.lines if _may_cap(line.text)]
    numbered += [(sentence.text, sentence.line_at()) for sentence in doc.sentences()
                 if _may_cap(sentence.text)]
    explicit = any(_states_cap(text) for text, _ in numbered)
    for sentence in doc.sentences():
        unlimited = _uncapped(sentence.text, explicit)
        if unlimited:
            return False, sentence.line_at(), (
                f"remove '{unlimited}' and state a conservative cap, e.g. "
                f"'Max iterations: 12' (at most {MAX_ITERATIONS})")
    found: dict[int, tuple[int, Line]] = {}
    for text, line in numbered:
        for value in _caps_in(text):
            found.setdefault(line.number * 1000 + value, (value, line))
    if not found:
        found = _loose_caps(numbered) or _under_a_limit_heading(prompt)
    if not found:
        return False, None, (f"state a conservative cap, e.g. 'Max iterations: 12' "
                             f"(at most {MAX_ITERATIONS})")
    ordered = [found[key] for key in sorted(found)]
    for value, line in ordered:
        if not 1 <= value <= MAX_ITERATIONS:
            return False, line, (f"set the iteration limit to at most {MAX_ITERATIONS}, "
                                 f"not {value}")
    return True, ordered[0][1], ""


@per_text
def _caps_in(text: str) -> tuple[int, ...]:
    """The caps `text` states, in the order its patterns find them."""
    plain = without_emphasis(text)
    found = []
    for pattern in LIMITS:
        for match in pattern.finditer(plain):
            value = number_value(match.group(1))
            if value > MAX_ITERATIONS and OTHER_ITERATIONS.search(plain):
                continue  # "the property tests run up to 200 iterations each"
            found.append(value)
    return tuple(found)


@per_text
def _states_cap(text: str) -> bool:
    plain = without_emphasis(text)
    return any(pattern.search(plain) for pattern in _EXPLICIT)


def _uncapped(sentence: str, explicit: bool) -> str:
    """The words of `sentence` that let the loop run without a cap, or "": "as many passes
    as you need" counts only when no cap is stated explicitly."""
    no_limit, as_many = _no_cap_words(sentence)
    return no_limit or ("" if explicit else as_many)


@per_text
def _no_cap_words(sentence: str) -> tuple[str, str]:
    """The words of `sentence` that say "no cap" and "as many as needed" ("" for none),
    unless it states a cap too: "as many passes as you need within the 12-iteration cap"."""
    if not _MAY_BE_UNCAPPED.search(sentence):
        return "", ""
    plain = without_emphasis(sentence)
    no_limit, as_many = NO_LIMIT.search(plain), AS_MANY_AS_NEEDED.search(plain)
    if not (no_limit or as_many) or any(pattern.search(plain) for pattern in LIMITS):
        return "", ""
    return (no_limit.group(0) if no_limit else "", as_many.group(0) if as_many else "")


# A number of iterations with a word that caps it, in any order: "Iteration ceiling: 10",
# "Hard stop at iteration 12", "You get 12 passes", "Twelve iterations, no more", "Limit
# yourself to 12 iterations"; or a bare "Iterations: 10". Not a streak ("three iterations
# in a row at most" caps one phase's tries, not the loop) unless it is the BLOCKED-after-N
# rule.
_TURN = r"(?:iterations?|iters?|loops?|passes|rounds|cycles|runs|restarts|go-?rounds)"
_COUNTED = re.compile(
    rf"\b{NUMBER}(?:st|nd|rd|th)?[\s-]+(?:loop\s+)?(?:{_TURN}|pass|iteration)\b|"
    rf"\b(?:iteration|iter|loop|pass|round|cycle)\s*(?:#\s*|no\.?\s*)?{NUMBER}\b|"
    rf"\b{_TURN}\s*(?:[:=]|ceiling|allowance|quota|cap|limit)\s*:?\s*{NUMBER}\b", re.IGNORECASE)
_CAPS = re.compile(
    r"\b(?:max\w*|cap\w*|limit\w*|budget\w*|ceiling|allowance|allott?ed|quota|at\s+most|"
    r"no\s+more|up\s+to|stop|halt|give\s+up|hard|exceed\w*|past|beyond|within|only|total|"
    r"last|final|tops|you\s+(?:get|have)|reach\w*|end|stuck|blocked|progress)\b",
    re.IGNORECASE)
# A window over the loop's history, not a cap: "the last 3 loops only ran tests".
_WINDOW = re.compile(rf"\b(?:last|past|previous|recent|prior)\s+{NUMBER}\s+"
                     rf"(?:{_TURN}|iterations?)\b", re.IGNORECASE)
_BARE = re.compile(rf"^\W*+(?:iterations?|loops?)\W*[:=]\s*{NUMBER}\W*$", re.IGNORECASE)
_STREAK = re.compile(r"\b(?:in\s+a\s+row|consecutive\w*|straight|each\s+phase|per\s+phase)\b",
                     re.IGNORECASE)
_GIVING_UP = re.compile(r"\b(?:progress|blocked|stuck|headway)\b", re.IGNORECASE)


def _loose_caps(texts: list[tuple[str, Line]]) -> dict[int, tuple[int, Line]]:
    found: dict[int, tuple[int, Line]] = {}
    for text, line in texts:
        plain = without_emphasis(text)
        counted = _COUNTED.search(plain)
        bare = _BARE.match(plain)
        if bare:
            value = number_value(bare.group(1))
        elif counted and _CAPS.search(plain) and not _in_a_window(plain, counted.start()) and (
                not _STREAK.search(plain) or _GIVING_UP.search(plain)):
            value = number_value(next(group for group in counted.groups() if group))
        else:
            continue
        found.setdefault(line.number * 1000 + value, (value, line))
    return found


def _in_a_window(text: str, at: int) -> bool:
    return any(window.start() <= at < window.end() for window in _WINDOW.finditer(text))


# A heading that names the loop's limit: "## Iterations", "Iteration limit", "Loop budget".
_LIMIT_TITLE = re.compile(
    r"^\W*+(?:(?:max(?:imum)?|iteration|loop|attempt|run|cycle|round|pass)\s+)?"
    r"(?:iterations?|limits?|budget|cap)\W*$",
    re.IGNORECASE)
_NUMBER_UNDER = re.compile(rf"^\W*+(?:[\w-]+\s+){{0,3}}?{NUMBER}\b[^\d]*$", re.IGNORECASE)


def _under_a_limit_heading(prompt: Prompt) -> dict[int, tuple[int, Line]]:
    """A number under such a heading, with a word that caps it ("## Iterations" over "Capped
    at 12.") or alone ("12")."""
    doc = prompt.doc
    for index, block in enumerate(doc.blocks):
        if block.kind == "paragraph" and len(block.lines) >= 2 and _LIMIT_TITLE.match(
                without_emphasis(block.first.text)):
            line = block.lines[1]  # "ATTEMPT LIMIT" with "15." on the line under it
        elif block.kind == "heading" and _LIMIT_TITLE.match(block.title):
            under = next((later for later in doc.blocks[index + 1:]
                          if later.kind != "heading"), None)
            if under is None or under.kind == "code":
                continue
            line = under.first
        else:
            continue
        plain = without_emphasis(line.text)
        number = _NUMBER_UNDER.match(plain)
        if number and (_CAPS.search(plain) or plain.strip(" .").isdigit()):
            value = number_value(number.group(1))
            return {line.number * 1000 + value: (value, line)}
    return {}


def check(prompt: Prompt) -> Verdict:
    """The prompt's cap, or, when the loop's --max-iterations is known, the loop's: the loop
    stops there whatever the text says."""
    verdict = Verdict.of(*iteration_limit_found(prompt))
    cap = prompt.max_iterations
    if cap is None:
        return verdict
    flag = f"--max-iterations {cap}"
    if cap > MAX_ITERATIONS:
        return Verdict(False, None, f"run the loop with --max-iterations {MAX_ITERATIONS} or "
                                    f"fewer: it stops only after {cap}", flag)
    return Verdict(True, verdict.line if verdict.passed else None, flag=flag)


RULE = Rule(
    id=9,
    key="iteration-limit",
    definition=("If the task can't converge in 25 iterations, it should have been decomposed "
                "during the Scope Analysis phase. If you reach plan construction with an estimate "
                "over 25, revisit scope analysis."),
    check=check,
    passes=(
        "Max iterations: 12\n",
        ("If unable to make progress after 10 iterations, document blockers and output "
         "<promise>BLOCKED</promise>.\n"),
    ),
    fails=(
        "Max iterations: 40\n",
        "Keep looping forever until it works.\n",
        "Stop if the last 3 loops only ran the tests.\n",
    ),
)
