"""`validate_prompt`: does a Ralph loop prompt carry the ten attributes a loop needs, and is
its file prompt-only (`layout`)?

Deterministic (regular expressions over the Markdown structure), no model calls; only
`validate_file` touches the disk. Each attribute's result names the line that
shows it (or shows what is wrong) and, when it fails, says in one line how to fix it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from finesse.authoring.prompt_check.layout import prompt_only
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.registry import RULES
from finesse.support.files import read_text, shown_name
from finesse.support.strict import StrictModel


class AttributeResult(StrictModel):
    id: int
    key: str
    passed: bool
    evidence: str | None  # "line N: <that line, trimmed>"
    fix: str  # one line; "" when the attribute passed


class LayoutResult(StrictModel):
    """Whether the file is prompt-only: it opens with the cold-start paragraph."""

    passed: bool
    evidence: str | None
    fix: str  # one line; "" when it passed


PROMPT_ONLY = LayoutResult(passed=True, evidence=None, fix="")


class ValidationReport(StrictModel):
    passed: bool  # every attribute passes and the file is prompt-only
    attributes: list[AttributeResult]
    prompt_only: LayoutResult = PROMPT_ONLY

    @property
    def failed(self) -> list[AttributeResult]:
        return [result for result in self.attributes if not result.passed]


def validate_prompt(text: str, *, promise: str | None = None,
                    max_iterations: int | None = None) -> ValidationReport:
    """Check a loop prompt as the loop will run it: with `promise` (its --completion-promise)
    the prompt must tell the agent to output that promise; with `max_iterations` (its
    --max-iterations) the loop's cap is that number, whatever the text says."""
    with _collection_paused():
        prompt = Prompt(text, promise, max_iterations)
        verdicts = [(rule, rule.check(prompt)) for rule in RULES]
        layout = prompt_only(prompt.doc)
    results = [AttributeResult(id=rule.id, key=rule.key, passed=verdict.passed,
                               evidence=verdict.evidence,
                               fix="" if verdict.passed else verdict.fix)
               for rule, verdict in verdicts]
    shape = LayoutResult(passed=layout.passed,
                         evidence=layout.line.evidence() if layout.line else None,
                         fix=layout.fix)
    return ValidationReport(passed=layout.passed and all(r.passed for r in results),
                            attributes=results, prompt_only=shape)


@contextmanager
def _collection_paused() -> Iterator[None]:
    """No cyclic garbage collection while a prompt is read: reading builds an object per line,
    block and sentence (a 1 MiB prompt: some 10^5), none in a cycle, and each collection would
    walk them all again (a third of the time of a 1 MiB prompt). They are freed by reference
    counting as usual; the collector's state is restored however the reading ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def validate_file(path: Path | str, *, promise: str | None = None,
                  max_iterations: int | None = None) -> ValidationReport:
    """`validate_prompt` on a file; a UsageError when the file cannot be read."""
    return validate_prompt(read_text(Path(path), subject=f"prompt file {shown_name(path)}"),
                           promise=promise, max_iterations=max_iterations)
