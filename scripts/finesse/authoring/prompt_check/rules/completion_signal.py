"""Attribute 2, an explicit completion signal: the prompt says exactly what to output and
when.

Without the loop's flags, the seed's definition is the measure: one promise tag the agent
is told to output on a condition, or a completion token stated as plainly ("output the
exact string `LOOP_COMPLETE` on its own line when ...", "When ALL criteria are met:" over a
line holding only `COMPLETE`, "Set EXIT_SIGNAL to true when ALL of these conditions are
met"), as loops that grep for a token or read a status block have it.

With the loop's --completion-promise known (`Prompt.promise`), the prompt is judged as
that loop will run it: its Stop hook ends the loop on `<promise>TEXT</promise>` in the
reply's prose, TEXT being the loop's promise, and on nothing else. A tag with other text,
a plain token ("wrap it as <promise>RALPH_COMPLETE</promise>") and no signal at all fail,
each fix naming the tag the loop detects.
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import Line
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict, failed, passed
from finesse.authoring.prompt_check.vocabulary import (
    CONDITION,
    EMIT_WORDS,
    NEGATED_EMIT,
    PROMISE_TAG,
)
from finesse.authoring.prompt_check.words import (
    COMPLETION_TOKENS,
    GIVING_UP_TOKENS,
    TOKEN_INTRO_WORDS,
    alternation,
)

# An all-caps token with an underscore ("RALPH_COMPLETE"), or a completion word in capitals.
_TOKEN = (rf"(?-i:(?!{alternation(GIVING_UP_TOKENS)}\b)(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|"
          rf"{alternation(COMPLETION_TOKENS)}))\b")
# "Output RALPH_COMPLETE when ...", "output the exact string `DONE`", "reply with: ALL_DONE".
_TOLD_TOKEN = re.compile(
    rf"\b{EMIT_WORDS}\W{{1,3}}(?:{alternation(TOKEN_INTRO_WORDS)}\W{{1,3}}){{0,4}}?"
    rf"[`*_\"']{{0,3}}(?P<token>{_TOKEN})", re.IGNORECASE)
# A status block's flag: "Set EXIT_SIGNAL to **true** when ALL of these conditions are met".
_SET_TOKEN = re.compile(rf"\bset\s+[`*_]{{0,3}}(?P<token>{_TOKEN})[`*_]{{0,3}}"
                        r"(?:\s+to\s+|\s*[:=]\s*)[`*_]{0,3}true\b", re.IGNORECASE)
# A line that is only the token (and its decoration), under the line that asks for it.
_TOKEN_LINE = re.compile(rf"\W{{0,12}}(?P<token>{_TOKEN})\W{{0,12}}", re.IGNORECASE)
_EMIT = re.compile(rf"\b{EMIT_WORDS}\b", re.IGNORECASE)


def bare_token(prompt: Prompt) -> tuple[str, Line] | None:
    """The first completion token the prompt tells the agent to give on a condition without
    the promise tag, and its line."""
    previous = ""
    for line in prompt.doc.lines:
        text = PROMISE_TAG.sub(" ", line.text)
        told = _TOLD_TOKEN.search(text) or _SET_TOKEN.search(text)
        if told and any(negated.end() >= told.start() for negated in NEGATED_EMIT.finditer(
                text, 0, told.end())):
            told = None  # "Do not output `LOOP_COMPLETE` for partial progress"
        asked = _EMIT.search(previous) or previous.rstrip(" *_`").endswith(":")
        found = told or (_TOKEN_LINE.fullmatch(text) if asked else None)
        if found and CONDITION.search(f"{previous} {text}"):
            return found.group("token"), line
        if line.text.strip() and not line.text.lstrip().startswith(("```", "~~~")):
            previous = line.text
    return None


def _wrap(token: str) -> str:
    return f"<promise>{token}</promise>"


def check(prompt: Prompt) -> Verdict:
    signals = prompt.signals
    expected = prompt.promise
    texts = list(dict.fromkeys(tag.text for tag in signals))
    if len(texts) > 1:
        return failed(signals[1].line, f"use one completion promise, not {len(texts)}: "
                                       + ", ".join(texts))
    if texts and expected is not None and texts[0] != expected:
        return failed(signals[0].line, f"the loop (--completion-promise {expected}) ends only "
                                       f"on {_wrap(expected)}, not {_wrap(texts[0])}: promise "
                                       f"{_wrap(expected)} or run the loop with "
                                       f"--completion-promise {texts[0]}")
    if texts:
        return passed(signals[0].line)
    bare = bare_token(prompt)
    if bare is not None and expected is None:
        return passed(bare[1])
    if bare is not None and expected is not None:
        token, line = bare
        return failed(line, f"the loop (--completion-promise {expected}) detects only "
                            f"{_wrap(expected)} in the reply, not a plain {token}: wrap it "
                            f"as {_wrap(expected)}")
    tags = [tag for tag in prompt.tags if not tag.blocked]
    return failed(tags[0].line if tags else None,
                  f"add 'Output {_wrap(expected or 'DONE')} when ALL of the following are "
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
        "When every check passes, output the exact string `LOOP_COMPLETE` on its own line.\n",
        "## Completion\n\nWhen ALL acceptance criteria are met:\n\n```\nCOMPLETE\n```\n",
        "Set EXIT_SIGNAL to **true** when ALL of these conditions are met.\n",
    ),
    fails=(
        "When you are done, write a summary of what you changed.\n",
        "Output <promise>DONE</promise> when the tests pass.\n"
        "Output <promise>FINISHED</promise> when the linter is clean.\n",
        "Output RALPH_COMPLETE\n",
    ),
)
