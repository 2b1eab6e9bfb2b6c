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
# Tokens for giving up, not for completion.
GIVING_UP_TOKENS = ("BLOCKED", "STUCK", "FAILED", "FAILURE", "ERROR", "ABORT", "ABORTED")


def alternation(words: Iterable[str]) -> str:
    """A regular-expression alternation of `words`, longest first, each escaped; spaces in a
    phrase match any run of white space."""
    ordered = sorted(set(words), key=len, reverse=True)
    return "(?:" + "|".join(re.escape(word).replace(r"\ ", r"\s+") for word in ordered) + ")"
