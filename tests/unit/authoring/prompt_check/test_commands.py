"""The commands a prompt gives, their programs and their names; Markdown tables."""
from __future__ import annotations

import pytest

from finesse.authoring.prompt_check.commands import command_names, invocation, programs
from finesse.authoring.prompt_check.document import Document
from finesse.authoring.prompt_check.tables import tables

PROMPT = """\
You are iterating on the thesis. First run `latexmk -pdf main.tex` and `git status`.

Tests:

    hugo --gc --minify && htmltest

| Name | Command |
|------|---------|
| tidy | `run-clang-tidy -p build 'src/.*'` |
| grep \\| count | `grep -c x log \\| wc -l` |

- Lint: `npm run lint`
- Only: `src/app.py`
- `GET /orders` returns 200; `isStale = true` after a failure.
"""


@pytest.mark.parametrize(("text", "runs"), [
    ("pytest -q", True), ("./gradlew assembleDebug", True), ("latexmk -pdf main.tex", True),
    ("dune build @all", True), ("Rscript -e 'devtools::test()'", True),
    ("relay", False), ("src/app.py", False), ("GET /orders", False), ("isStale = true", False),
])
def test_what_runs_a_program(text: str, runs: bool) -> None:
    assert invocation(text) is runs


def test_the_programs_a_prompt_runs_from_spans_code_and_tables() -> None:
    assert programs(Document.parse(PROMPT)) == {
        "latexmk", "git", "hugo", "htmltest", "run-clang-tidy", "grep", "wc", "npm"}


def test_the_names_a_prompt_gives_its_commands() -> None:
    assert command_names(Document.parse(PROMPT)) == {"tests", "tidy", "grep | count", "lint"}


def test_a_table_splits_into_header_and_rows_with_their_lines() -> None:
    [table] = tables(Document.parse(PROMPT))
    assert table.header == ("Name", "Command")
    assert [(line.number, row) for line, row in table.rows] == [
        (9, ("tidy", "`run-clang-tidy -p build 'src/.*'`")),
        (10, ("grep | count", "`grep -c x log | wc -l`"))]
