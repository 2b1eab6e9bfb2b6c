"""Prompt-only files: nothing before the cold-start paragraph (seed 000's File Output
Format)."""

from __future__ import annotations

from pathlib import Path

import pytest

from finesse.authoring.prompt_check.validate import LayoutResult, validate_file, validate_prompt
from tests.unit.authoring.prompt_check.test_validate import BASE

FIX = ("start the file with the cold-start paragraph (\"You are iterating on ...\"); metadata "
       "belongs in <name>-plan.md")


def test_a_file_that_opens_with_its_cold_start_is_prompt_only() -> None:
    report = validate_prompt(BASE)
    assert (report.passed, report.prompt_only.passed) == (True, True)


@pytest.mark.parametrize(("before", "evidence", "what"), [
    ("---\nname: verbose\nmax_iterations: 10\n---\n", "line 1: ---",
     "the file starts with YAML front matter"),
    ("# Plan: add `--verbose`\n\n", "line 1: # Plan: add `--verbose`",
     "the file starts with a heading"),
    ("**Task type**: feature\n\n", "line 1: **Task type**: feature",
     "metadata comes before the cold-start paragraph (line 3)"),
    ("Loop prompt for the verbose flag\n\n", "line 1: Loop prompt for the verbose flag",
     "text comes before the cold-start paragraph (line 3)"),
])
def test_anything_before_the_cold_start_is_not_prompt_only(
        before: str, evidence: str, what: str) -> None:
    report = validate_prompt(before + BASE)
    assert report.prompt_only == LayoutResult(passed=False, evidence=evidence,
                                              fix=f"{what}: {FIX}")
    assert report.passed is False
    assert [r.key for r in report.attributes if not r.passed] == []


def test_the_plan_file_written_by_finesse_new_is_not_a_prompt(tmp_path: Path) -> None:
    golden = Path(__file__).parents[1] / "golden" / "csv-export-plan.md"
    assert validate_file(golden).prompt_only.passed is False


def test_the_old_corpus_task_first_prompt_meets_cold_start_but_is_not_prompt_only() -> None:
    # Its label was cold-start until the attribute and the layout were told apart
    # (corpus/LABEL_FIXES.md): the file is still refused, by the check that owns the defect.
    report = validate_file(Path(__file__).parent / "corpus" / "missing-cold-start-task-first.md")
    assert [r.key for r in report.attributes if not r.passed] == []
    assert (report.passed, report.prompt_only.passed) == (False, False)
    assert report.prompt_only.fix.startswith("the file starts with a heading")
