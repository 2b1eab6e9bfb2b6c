"""The ten attribute rules, one module each: `rules/<key>.py` exports `RULE`.

A rule is the attribute's id and key, seed 000's definition of it, a pure `check` on the
prompt as read once (`finesse.authoring.prompt_check.reading.Prompt`), and examples: short
prompts it must pass and prompts it must fail (one parametrised test runs them all). The
rules are listed, in the seed's order, by `finesse.authoring.prompt_check.registry`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from finesse.authoring.prompt_check.document import Line

if TYPE_CHECKING:
    from finesse.authoring.prompt_check.reading import Prompt


@dataclass(frozen=True)
class Verdict:
    """Whether the attribute is there, the line read for it (what shows it, or what is
    wrong), and one line saying how to fix it (empty when it passed)."""

    passed: bool
    line: Line | None
    fix: str = ""
    flag: str = ""  # the loop's flag read instead of a line: "--max-iterations 12"

    @property
    def evidence(self) -> str | None:
        """What the verdict read: "line N: <that line, trimmed>", or the loop's flag."""
        if self.line is not None:
            return self.line.evidence()
        return f"the loop's flag {self.flag}" if self.flag else None

    @classmethod
    def of(cls, passed: bool, line: Line | None, fix: str) -> Verdict:
        return cls(passed, line, "" if passed else fix)


def passed(line: Line | None) -> Verdict:
    return Verdict(True, line)


def failed(line: Line | None, fix: str) -> Verdict:
    return Verdict(False, line, fix)


@dataclass(frozen=True)
class Rule:
    id: int  # the attribute's number in seed 000
    key: str  # the name reports and labels use
    definition: str  # seed 000's words for the attribute
    check: Callable[[Prompt], Verdict]
    passes: tuple[str, ...]  # prompts (or parts of one) the rule must pass
    fails: tuple[str, ...]  # prompts the rule must fail
