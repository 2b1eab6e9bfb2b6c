"""The written plan read: sections found where Markdown puts them, the verification commands,
and whether it can drive a loop."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from finesse.errors import UsageError
from finesse.loop.todo.sections import (
    Section,
    check_plan,
    parse_sections,
    verification_commands,
)
from tests.helpers.todo import DOCUMENTS, ENDING, PLAIN_LINE, PLAN

# --- parse_sections -------------------------------------------------------------------------------


def test_parse_sections_of_a_plan() -> None:
    sections = parse_sections(PLAN)
    assert list(sections) == [
        "goal", "acceptance criteria", "plan", "verification commands", "attempts", "review"]
    goal = sections["goal"]
    assert goal == Section("Goal", 2, PLAN.index("## Goal"), PLAN.index("All unit"),
                           PLAN.index("## Acceptance"))
    assert goal.body(PLAN) == "All unit tests pass.\n\n"
    assert sections["review"].body(PLAN) == ""


@pytest.mark.parametrize(("text", "found"), [
    ("## attempts:\nx\n", {"attempts": "x\n"}),
    ("  ## ATTEMPTS  :  ##\nx", {"attempts": "x"}),
    ("##Attempts\nx\n", {}),
    ("### Attempts\nx\n", {}),
    ("    ## Attempts\nx\n", {}),
    ("> ## Attempts\nx\n", {}),
    ("```\n## Attempts\n```\n## Review\nr\n", {"review": "r\n"}),
    ("~~~~\n## Attempts\n~~~\n## still code\n~~~~\n", {}),
    ("``` `x` ```\n## Attempts\n", {"attempts": ""}),
    ("- a\n\n  ```\n## Attempts\n  ```\n", {}),
    ("## Attempts\r\nx\r\n## Review\r\n", {"attempts": "x\r\n", "review": ""}),
    ("## Attempts\rx\r# Other\ry\r", {"attempts": "x\r"}),
    ("## Attempts\n### Iteration 1\n## Attempts\nsecond\n", {"attempts": "### Iteration 1\n"}),
    ("\ufeff## Goal\ng\n", {"goal": "g\n"}),
    ("## Acceptance   Criteria\nc\n", {"acceptance criteria": "c\n"}),
])
def test_headings_are_found_as_markdown_finds_them(text: str, found: dict[str, str]) -> None:
    assert {key: s.body(text) for key, s in parse_sections(text).items()} == found


# --- verification_commands and check_plan ---------------------------------------------------------


@pytest.mark.parametrize(("section", "commands"), [
    ("- `pytest -q`\n- `ruff check .`\n", ["pytest -q", "ruff check ."]),
    ("Run `pytest -q` then `pytest -q` again.\n", ["pytest -q"]),
    ("``echo `date` ``\n", ["echo `date`"]),
    ("`make\ntest`\n", ["make test"]),
    ("`a\n\nb`\n", []),
    ("```sh\n# lint first\nruff check .\n\n$ pytest -q\n```\n", ["ruff check .", "pytest -q"]),
    ("~~~\nmypy --strict \\\n    scripts\n~~~\n", ["mypy --strict scripts"]),
    ("- `first`\n\n    ```\n    second\n    ```\n- `third`\n", ["first", "second", "third"]),
    ("> ```\n> pytest -q\n> ```\n", ["pytest -q"]),
    ("<!-- e.g. `pytest -q` -->\n`make test`\n", ["make test"]),
    ("<!--\n`hidden`\n-->\n`shown`\n", ["shown"]),
    ("```\n## Attempts\npytest -q\n```\n`make`\n", ["pytest -q", "make"]),
    ("nothing here\n", []),
    ("", []),
])
def test_verification_commands(section: str, commands: list[str]) -> None:
    text = f"## Goal\n`not this`\n\n## Verification Commands\n{section}\n## Review\n`nor this`\n"
    assert verification_commands(text) == commands


def test_verification_commands_with_crlf_and_no_section() -> None:
    text = "## Verification Commands\r\n```\r\npytest -q\r\nruff check .\r\n```\r\n- `mypy .`"
    assert verification_commands(text) == ["pytest -q", "ruff check .", "mypy ."]
    assert verification_commands("## Goal\n`pytest`\n") == []


COMMAND = PLAIN_LINE.filter(lambda c: not c.startswith("$ ") and "<!--" not in c)


@given(st.lists(st.tuples(COMMAND, st.booleans()), max_size=8), ENDING)
def test_commands_in_spans_and_fences_come_back_in_order(
    items: list[tuple[str, bool]], ending: str
) -> None:
    lines: list[str] = []
    for command, fenced in items:
        lines += ["```", command, "```"] if fenced else [f"- `{command}`"]
    text = ending.join(["## Verification Commands", *lines, "## Review", "`x`"])
    assert verification_commands(text) == list(dict.fromkeys(c for c, _ in items))


GOOD = "## Goal\ng\n## Acceptance Criteria\na\n## Verification Commands\n`pytest -q`\n"


def test_check_plan_returns_the_commands() -> None:
    assert check_plan(PLAN, path="tasks/todo.md") == ["pytest -q", "ruff check ."]
    assert check_plan(GOOD, path="tasks/todo.md", extra_verify=["make"]) == ["pytest -q"]


@pytest.mark.parametrize(("text", "message"), [
    (GOOD.replace("## Goal", "## Aim"),
     'tasks/todo.md has no "## Goal" section: add one saying what the loop must achieve'),
    (GOOD.replace("## Acceptance Criteria", "### Acceptance Criteria"),
     'tasks/todo.md has no "## Acceptance Criteria" section: add one listing what must be '
     "true when it is done"),
    (GOOD.replace("## Verification", "##Verification"),
     'tasks/todo.md has no "## Verification Commands" section: add one listing each command '
     "in backticks"),
    (GOOD.replace("\ng\n", "\n \n<!-- what must the loop achieve? -->\n"),
     'tasks/todo.md has an empty "## Goal" section: add a few lines saying what the loop must '
     "achieve"),
    (GOOD.replace("\na\n", "\n"),
     'tasks/todo.md has an empty "## Acceptance Criteria" section: add a few lines listing '
     "what must be true when it is done"),
    (GOOD.replace("`pytest -q`", "pytest -q"),
     'tasks/todo.md has no command under "## Verification Commands": list each in backticks, '
     "e.g. `pytest -q`, or pass --verify CMD"),
    ("## Acceptance Criteria\na\n",
     'tasks/todo.md is missing "## Goal" and "## Verification Commands": add each as a '
     "level-2 heading with its content below it"),
    ("",
     'tasks/todo.md is missing "## Goal", "## Acceptance Criteria" and "## Verification '
     'Commands": add each as a level-2 heading with its content below it'),
    ("```\n" + GOOD + "```\n",
     'tasks/todo.md is missing "## Goal", "## Acceptance Criteria" and "## Verification '
     'Commands": add each as a level-2 heading with its content below it'),
])
def test_check_plan_refusals(text: str, message: str) -> None:
    with pytest.raises(UsageError) as raised:
        check_plan(text, path="tasks/todo.md")
    assert str(raised.value) == message


def test_check_plan_accepts_no_commands_with_extra_verify() -> None:
    text = GOOD.replace("`pytest -q`", "see --verify")
    assert check_plan(text, path="tasks/todo.md", extra_verify=["pytest -q"]) == []


@given(DOCUMENTS, st.text(max_size=20), st.lists(st.text(max_size=5), max_size=2))
def test_check_plan_messages_are_one_line(text: str, path: str, extra: list[str]) -> None:
    try:
        commands = check_plan(text, path=path, extra_verify=extra)
    except UsageError as err:
        message = str(err)
        assert message and message.isprintable()
    else:
        assert commands == verification_commands(text)
        assert commands or extra
