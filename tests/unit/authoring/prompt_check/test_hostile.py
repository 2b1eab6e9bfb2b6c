"""The prompt checker on text nobody would write: generated text (a hypothesis property
suite) and the hostile shapes (a run of spaces, unclosed tags, code spans, list items...).

No test here times anything: speed is the benchmark's (bench/validate_bench.py prints the
growth ratio and the 1 MiB figure). What is held here is untimed: every input gets a whole
report whose evidence names a line of the prompt as the reader numbers it, and the work the
checker's own code does (the lines of it that run, counted by a tracer) grows linearly
with the prompt, so no rule walks back over the document for each item.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finesse.authoring.prompt_check.document import Document
from finesse.authoring.prompt_check.validate import validate_prompt
from finesse.support.markdown import split_lines
from tests.helpers.hostile_text import SHAPES

PACKAGE = Path(__file__).resolve().parents[4] / "scripts" / "finesse" / "authoring" / "prompt_check"
EVIDENCE = re.compile(r"line (\d+): (.*)", re.DOTALL)

# Pieces of the Markdown and the words the rules read, so generated prompts reach them.
_PIECES = st.sampled_from([
    " ", "  ", "\n", "\n\n", "\t", "\r\n", "- ", "* ", "1. ", "2) ", "## ", "# ", "> ", "```",
    "~~~", "`", "**", "__", "*", "_", ":", ". ", "; ", " \u2014 ", "|", "<promise>",
    "</promise>", "DONE", "BLOCKED", "RALPH_COMPLETE", "Phase 1:", "Phase 2:", "Step 3",
    "Verify: `pytest -q`", "`npm test`", "src/app/", "Out of scope:", "In scope:",
    "Do not ", "Never ", "If stuck ", "3 times", "Max iterations: ", "12", "40",
    "You are iterating on ", "check the current state", "git status", "after every change",
    "when ALL of the following are true", "unless every criterion is met", "output ",
    "x", "tests", "\u2028", "\f", "\u00e9", "\x00",
])
PROMPTS = st.lists(_PIECES, max_size=120).map("".join)


def _check_report(text: str, **flags: Any) -> None:
    report = validate_prompt(text, **flags)
    assert [result.id for result in report.attributes] == list(range(1, 11))
    lines = Document.parse(text).lines
    assert len(lines) == len(split_lines(text))  # numbered as an editor numbers them
    for result in [*report.attributes, report.prompt_only]:
        assert bool(result.fix) is not result.passed  # a failure says how to fix it
        if result.evidence is None or result.evidence.startswith("the loop's flag "):
            continue
        found = EVIDENCE.fullmatch(result.evidence)
        assert found, result.evidence
        number = int(found.group(1))
        assert 1 <= number <= len(lines)
        assert found.group(2) == lines[number - 1].text.strip()
    assert report.passed == (all(r.passed for r in report.attributes)
                             and report.prompt_only.passed)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROMPTS)
def test_any_text_gets_a_whole_report_whose_evidence_names_a_line_of_it(text: str) -> None:
    _check_report(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROMPTS, st.sampled_from(["DONE", "RALPH_COMPLETE", "ALL  DONE"]),
       st.integers(min_value=1, max_value=1000))
def test_the_loops_flags_never_break_the_report(text: str, promise: str, cap: int) -> None:
    _check_report(text, promise=promise, max_iterations=cap)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROMPTS)
def test_validation_is_deterministic_on_any_text(text: str) -> None:
    assert validate_prompt(text) == validate_prompt(text)


def lines_run(text: str) -> int:
    """How many lines of the checker's own code run while it checks `text`."""
    count = 0

    def local(frame: FrameType, event: str, arg: object) -> Callable[..., object] | None:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame: FrameType, event: str, arg: object) -> Callable[..., object] | None:
        return local if frame.f_code.co_filename.startswith(str(PACKAGE)) else None

    sys.settrace(calls)
    try:
        validate_prompt(text)
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_checkers_work_grows_linearly_with_the_prompt(shape: str) -> None:
    """Ten times the text runs at most twelve times the lines of the checker's code: a rule
    that walked back over the document (or the list) for each item would run a hundred
    times as many."""
    small, large = (lines_run(SHAPES[shape](size)) for size in (2_000, 20_000))
    assert large <= 12 * max(small, 1), (shape, small, large)
