"""Word lists the rules read, as data: each is a tuple of words or phrases, and the patterns
that need one are built from it (`alternation`), so a list is changed here and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# A completion token a prompt may tell the agent to print bare, without the promise tag.
COMPLETION_TOKENS = ("COMPLETE", "COMPLETED", "DONE", "FINISHED", "SUCCESS", "ALL_DONE",
                     "TASK_COMPLETE", "EXIT_SIGNAL")
# Words between "output" and the token it names: "output the exact string `DONE`".
TOKEN_INTRO_WORDS = ("exactly", "only", "the", "exact", "following", "word", "line", "text",
                     "token", "string", "phrase", "signal", "marker")
# What "No ..." names when it states an outcome ("No regressions", "No errors or warnings"),
# not a rule ("No new dependencies").
OUTCOME_NOUNS = ("errors", "error", "warnings", "warning", "regressions", "regression",
                 "failures", "failing tests", "failed tests", "crashes", "bugs", "type errors",
                 "lint errors", "console errors", "TODOs", "TODO", "flaky tests")
# What a "Do NOT ..." that only urges care forbids ("Do NOT rush", "don't take any
# shortcuts"): a pace, not a failure mode the seed's guardrails name.
PACE_WORDS = ("rush", "hurry", "take shortcuts", "take any shortcuts", "cut corners",
              "be lazy")
# Tokens for giving up, not for completion.
GIVING_UP_TOKENS = ("BLOCKED", "STUCK", "FAILED", "FAILURE", "ERROR", "ABORT", "ABORTED")


# The verbs of a step that runs the checks, makes the change, or does the picked work.
RUN_VERBS = ("run", "execute", "ensure", "make sure", "verify", "validate", "confirm")
CHANGE_VERBS = ("implement", "make", "fix", "edit", "change", "write", "add", "update", "build",
                "code")
DO_VERBS = ("implement", "build", "complete", "do", "fix", "make", "write", "code", "work on",
            "execute")
# Words that may come before a step's own verb: "then run", "and fix", "now implement".
STEP_LEADS = ("then", "and", "also", "now", "finally")


def alternation(words: Iterable[str]) -> str:
    """A regular-expression alternation of `words`, longest first, each escaped; spaces in a
    phrase match any run of white space."""
    ordered = sorted(set(words), key=len, reverse=True)
    return "(?:" + "|".join(re.escape(word).replace(r"\ ", r"\s+") for word in ordered) + ")"


def imperative(verbs: Iterable[str]) -> re.Pattern[str]:
    """A step whose own verb, first (after its marker or number and any lead word of
    STEP_LEADS), is one of `verbs`: "5. Run the tests", "- then fix it"."""
    return re.compile(rf"^[\W\d]{{0,8}}(?:{alternation(STEP_LEADS)}\W+)?{alternation(verbs)}\b",
                      re.IGNORECASE)
