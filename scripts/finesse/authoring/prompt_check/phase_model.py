"""A prompt's phases as the checks see them: each with its number, its first line, the
lines it spans and, for a phase told in a sentence or a table row, what it says."""

from __future__ import annotations

from dataclasses import dataclass

from finesse.authoring.prompt_check.document import Line


@dataclass(frozen=True)
class Phase:
    number: int
    line: Line
    region: tuple[Line, ...]  # its lines, up to the next phase or the next heading above it
    told: str = ""  # a phase told in a paragraph: its own sentences

    @property
    def content(self) -> str:
        """What the phase says: its sentences, or its lines joined."""
        return self.told or " ".join(line.text.strip() for line in self.region)


@dataclass(frozen=True)
class Phases:
    found: tuple[Phase, ...]
    problem: Line | None = None  # where the numbering goes wrong
    problem_fix: str = ""
    # The steps of each iteration (pick the next item, implement it, test, commit): an
    # order of work, not a list of what must hold when the whole task is done.
    per_iteration: bool = False
