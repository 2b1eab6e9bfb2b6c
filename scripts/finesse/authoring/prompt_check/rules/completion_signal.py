"""Attribute 2, an explicit completion signal: the prompt says exactly what to output and
when, and that output is what the loop will detect.

The loop's Stop hook ends the loop on `<promise>TEXT</promise>` in the reply's prose, TEXT
(whitespace collapsed) being the loop's --completion-promise, and on nothing else: a plain
`RALPH_COMPLETE` line never ends it. So the rule judges the prompt as the loop will run it:
- with the loop's promise known (`Prompt.promise`), a tag the prompt gives must be that
  promise; a prompt that gives none is told the promise by the loop itself (every
  iteration's header says "output <promise>TEXT</promise> only when it is completely
  true"), unless it tells the agent to print that text bare, which the loop would not see;
- without it, the prompt must tell the agent to output one promise tag on a condition; a
  bare completion token ("print RALPH_COMPLETE when ...") is named in the fix, wrapped.
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import Line
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict, failed, passed
from finesse.authoring.prompt_check.vocabulary import EMIT_WORDS, PROMISE_TAG
from finesse.authoring.prompt_check.words import (
    COMPLETION_TOKENS,
    GIVING_UP_TOKENS,
    alternation,
)

# An all-caps token with an underscore ("RALPH_COMPLETE"), or a completion word in capitals.
_TOKEN = rf"(?-i:(?!{alternation(GIVING_UP_TOKENS)}\b)(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|" \
         rf"{alternation(COMPLETION_TOKENS)}))\b"
# "Output RALPH_COMPLETE when ...", "print the word `DONE`", "reply with exactly: ALL_DONE".
_TOLD_TOKEN = re.compile(
    rf"\b{EMIT_WORDS}\s+(?:exactly\s+|only\s+)?(?:the\s+(?:word|line|text|token|string)\s+)?"
    rf":?\s?[`*_\"']{{0,3}}(?P<token>{_TOKEN})", re.IGNORECASE)
# A line that is only the token, under the instruction to print it.
_TOKEN_LINE = re.compile(rf"[\s>*_`\"'-]{{0,8}}(?P<token>{_TOKEN})[\s*_`\"'.]{{0,8}}",
                         re.IGNORECASE)
_EMIT = re.compile(rf"\b{EMIT_WORDS}\b", re.IGNORECASE)


def bare_token(prompt: Prompt, wanted: str | None = None) -> tuple[str, Line] | None:
    """The first completion token the prompt tells the agent to print without the promise
    tag (`wanted` only, when given), and its line."""
    doc = prompt.doc
    previous = ""
    for line in doc.lines:
        text = PROMISE_TAG.sub(" ", line.text)
        told = _TOLD_TOKEN.search(text)
        alone = _TOKEN_LINE.fullmatch(text) if _EMIT.search(previous) else None
        found = told or alone
        if found and (wanted is None or found.group("token") == wanted):
            return found.group("token"), line
        if line.text.strip():
            previous = line.text
    return None


def _wrap(token: str) -> str:
    return f"<promise>{token}</promise>"


def check(prompt: Prompt) -> Verdict:
    signals = prompt.signals
    expected = prompt.promise
    flag = "" if expected is None else f"--completion-promise {expected}"
    texts = list(dict.fromkeys(tag.text for tag in signals))
    if len(texts) > 1:
        return failed(signals[1].line, f"use one completion promise, not {len(texts)}: "
                                       + ", ".join(texts))
    if texts and expected is not None and texts[0] != expected:
        return failed(signals[0].line, f"the loop ({flag}) ends only on {_wrap(expected)}, "
                                       f"not {_wrap(texts[0])}: promise {_wrap(expected)} "
                                       f"or run the loop with --completion-promise {texts[0]}")
    if texts:
        return passed(signals[0].line)
    bare = bare_token(prompt, expected)
    if bare is not None:
        token, line = bare
        return failed(line, f"the loop detects only {_wrap(expected or token)} in the reply, "
                            f"not a plain {token}: wrap it as {_wrap(token)}"
                            + ("" if expected else f" and run the loop with "
                                                   f"--completion-promise {token}"))
    if expected is not None:
        # Every iteration's header tells the agent to output the loop's promise.
        return Verdict(True, None, flag=flag)
    tags = [tag for tag in prompt.tags if not tag.blocked]
    return failed(tags[0].line if tags else None,
                  "add 'Output <promise>DONE</promise> when ALL of the following are "
                  "true:' above the criteria")


RULE = Rule(
    id=2,
    key="completion-signal",
    definition=("The prompt must state exactly what to output and when: \"Output "
                "<promise>COMPLETE</promise> when ALL of the following are true: [list].\" "
                "Never leave this implicit."),
    check=check,
    passes=(
        "Output <promise>DONE</promise> when ALL of the following are true:\n"
        "- `pytest -q` exits 0\n",
        "When every phase verifies, print <promise>SHIPPED</promise>.\n",
    ),
    fails=(
        "When you are done, write a summary of what you changed.\n",
        "Output <promise>DONE</promise> when the tests pass.\n"
        "Output <promise>FINISHED</promise> when the linter is clean.\n",
        "When every check passes, output RALPH_COMPLETE on its own line.\n",
    ),
)
