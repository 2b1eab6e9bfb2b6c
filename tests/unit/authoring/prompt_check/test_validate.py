"""validate_prompt and validate_file: the whole report, determinism, files. (Hostile and
generated text: test_hostile.py; speed: bench/validate_bench.py.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from finesse.authoring.prompt_check.validate import (
    AttributeResult,
    LayoutResult,
    ValidationReport,
    validate_file,
    validate_prompt,
)
from finesse.errors import UsageError

BASE = """\
You are iterating on the `--verbose` flag. You have no memory of earlier iterations, so \
first check the current state: `git status`, `git log --oneline -5`, `pytest -q`.

Max iterations: 10

In scope: `cli/main.py`, `tests/test_cli.py`. Out of scope: `vendor/`.

Phase 1: parse the flag. Verify: `pytest tests/test_cli.py -q -k parse`
Phase 2: print debug lines when it is set. Verify: `pytest tests/test_cli.py -q`

Run `pytest -q` after every change.

Do not add dependencies.

If the same test fails 3 times, write what you tried in `NOTES.md` and change approach. \
If still stuck, output <promise>BLOCKED</promise>.

Output <promise>DONE</promise> when ALL of the following are true:
- `pytest -q` exits 0
- `ruff check .` exits 0

Do not output the promise unless every criterion is met.
"""


# BASE's parts, for the edits the wording tests make.
FIRST = ("You are iterating on the `--verbose` flag. You have no memory of earlier iterations, "
         "so first check the current state: `git status`, `git log --oneline -5`, `pytest -q`.")
LIMIT = "Max iterations: 10"
SCOPE = "In scope: `cli/main.py`, `tests/test_cli.py`. Out of scope: `vendor/`."
PHASES = ("Phase 1: parse the flag. Verify: `pytest tests/test_cli.py -q -k parse`\n"
          "Phase 2: print debug lines when it is set. Verify: `pytest tests/test_cli.py -q`")
AFTER = "Run `pytest -q` after every change."
RULE = "Do not add dependencies."
STUCK = ("If the same test fails 3 times, write what you tried in `NOTES.md` and change "
         "approach. If still stuck, output <promise>BLOCKED</promise>.")
SIGNAL = ("Output <promise>DONE</promise> when ALL of the following are true:\n"
          "- `pytest -q` exits 0\n- `ruff check .` exits 0")
HOLDBACK = "Do not output the promise unless every criterion is met."
assert all(part in BASE for part in (FIRST, LIMIT, SCOPE, PHASES, AFTER, RULE, STUCK, SIGNAL,
                                     HOLDBACK))


def edit(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new)


def result(text: str, key: str, promise: str | None = None) -> AttributeResult:
    report = validate_prompt(text, promise=promise)
    return next(r for r in report.attributes if r.key == key)


def failing(text: str, promise: str | None = None) -> list[str]:
    return [r.key for r in validate_prompt(text, promise=promise).attributes if not r.passed]


def test_the_base_prompt_passes_every_attribute_and_shows_each_line() -> None:
    assert validate_prompt(BASE) == ValidationReport(passed=True, attributes=[
        AttributeResult(id=1, key="binary-completion-criteria", passed=True,
                        evidence="line 17: - `pytest -q` exits 0", fix=""),
        AttributeResult(id=2, key="completion-signal", passed=True,
                        evidence="line 16: Output <promise>DONE</promise> when ALL of the "
                                 "following are true:", fix=""),
        AttributeResult(id=3, key="failure-instructions", passed=True,
                        evidence="line 14: If the same test fails 3 times, write what you "
                                 "tried in `NOTES.md` and change approach. If still stuck, "
                                 "output <promise>BLOCKED</promise>.", fix=""),
        AttributeResult(id=4, key="ordered-phases", passed=True,
                        evidence="line 7: Phase 1: parse the flag. Verify: "
                                 "`pytest tests/test_cli.py -q -k parse`", fix=""),
        AttributeResult(id=5, key="verification-commands", passed=True,
                        evidence="line 10: Run `pytest -q` after every change.", fix=""),
        AttributeResult(id=6, key="guardrails", passed=True,
                        evidence="line 12: Do not add dependencies.", fix=""),
        AttributeResult(id=7, key="scoped-context", passed=True,
                        evidence="line 5: In scope: `cli/main.py`, `tests/test_cli.py`. "
                                 "Out of scope: `vendor/`.", fix=""),
        AttributeResult(id=8, key="cold-start", passed=True,
                        evidence="line 1: You are iterating on the `--verbose` flag. You have "
                                 "no memory of earlier iterations, so first check the current "
                                 "state: `git status`, `git log --oneline -5`, `pytest -q`.",
                        fix=""),
        AttributeResult(id=9, key="iteration-limit", passed=True,
                        evidence="line 3: Max iterations: 10", fix=""),
        AttributeResult(id=10, key="zero-ambiguity", passed=True,
                        evidence="line 20: Do not output the promise unless every criterion "
                                 "is met.", fix=""),
    ], prompt_only=LayoutResult(
        passed=True, evidence="line 1: You are iterating on the `--verbose` flag. You have no "
                              "memory of earlier iterations, so first check the current "
                              "state: `git status`, `git log --oneline -5`, `pytest -q`.",
        fix=""))


def test_validation_is_deterministic() -> None:
    assert validate_prompt(BASE) == validate_prompt(BASE)


def test_validate_file_reads_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "prompt.md").write_text(BASE)
    assert validate_file(tmp_path / "prompt.md") == validate_prompt(BASE)


def test_validate_file_refuses_a_missing_file_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        validate_file(tmp_path / "nope.md")
    assert str(caught.value) == (
        f"prompt file {tmp_path / 'nope.md'}: no such file; give the path of an existing file")


BLIND = Path(__file__).parent / "corpus_blind"


def test_the_seeds_template_with_its_placeholders_filled_passes() -> None:
    report = validate_file(BLIND / "golden-template-filled.md")
    assert [r.key for r in report.attributes if not r.passed] == []


def test_the_seeds_no_examples_fail_binary_completion_criteria_only() -> None:
    report = validate_file(BLIND / "golden-no-examples.md")
    assert [(r.key, r.evidence) for r in report.attributes if not r.passed] == [
        ("binary-completion-criteria",
         "line 29: When ALL phases are complete and the code is clean, properly structured "
         "and good,")]
