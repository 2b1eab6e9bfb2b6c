"""Attribute 2, an explicit completion signal: the prompt says exactly what to output and
when, and that output is what the loop will detect (its --completion-promise).
"""

from __future__ import annotations

from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict, failed, passed
from finesse.signals import collapse_whitespace


def check(prompt: Prompt) -> Verdict:
    signals = prompt.signals
    if not signals:
        tags = [tag for tag in prompt.tags if not tag.blocked]
        return failed(tags[0].line if tags else None,
                     "add 'Output <promise>DONE</promise> when ALL of the following are "
                     "true:' above the criteria")
    texts = list(dict.fromkeys(tag.text for tag in signals))
    if len(texts) > 1:
        return failed(signals[1].line, f"use one completion promise, not {len(texts)}: "
                                      + ", ".join(texts))
    expected = None if prompt.promise is None else collapse_whitespace(prompt.promise)
    if expected is not None and texts[0] != expected:
        return failed(signals[0].line, f"the prompt promises {texts[0]!r} but the loop expects "
                                      f"{expected!r}: make them the same")
    return passed(signals[0].line)


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
    ),
)
