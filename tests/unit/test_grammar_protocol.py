"""The protocol's flags: --plan, --quiesce-after, --timeout-minutes; and /ralph-resume's."""

from __future__ import annotations

from pathlib import Path

import pytest

from finesse.errors import UsageError
from finesse.loop.grammar import (
    LOOP_USAGE,
    RESUME_USAGE,
    ResumeRequest,
    parse_resume_args,
)
from finesse.loop.request import StartRequest, start_request

ROOT = Path("/nonexistent-finesse-root")
PLAN = """\
# Make the tests pass

## Goal
All unit tests pass.

## Acceptance Criteria
- `pytest -q` exits 0

## Plan
1. Fix the parser.

## Verification Commands
- `pytest -q`
- `ruff check .`

## Attempts

## Review
"""


def refusal(args: str, root: Path = ROOT) -> str:
    with pytest.raises(UsageError) as caught:
        start_request(args, root)
    message = str(caught.value)
    assert "\n" not in message and message.strip() == message and message
    return message


def resume_refusal(args: str) -> str:
    with pytest.raises(UsageError) as caught:
        parse_resume_args(args)
    message = str(caught.value)
    assert "\n" not in message and message.strip() == message and message
    return message


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "todo.md").write_text(PLAN, encoding="utf-8")
    return tmp_path


def test_usage_names_the_protocol_flags() -> None:
    for flag in ("[--plan PATH]", "[--quiesce-after N]", "[--timeout-minutes N]"):
        assert flag in LOOP_USAGE
    assert RESUME_USAGE == "/ralph-resume [--max-iterations N] [--timeout-minutes N]"


def test_protocol_defaults() -> None:
    request = start_request("go", ROOT)
    assert (request.plan_file, request.quiesce_after, request.timeout_minutes) == (None, 2, None)


@pytest.mark.parametrize(
    ("args", "quiesce_after", "timeout"),
    [
        ("go --quiesce-after 3", 3, None),
        ("go --quiesce-after=1", 1, None),
        ("go --quiesce-after 7", 7, None),
        ("go --timeout-minutes 30", 2, 30),
        ("--timeout-minutes=10080 go --quiesce-after 007", 7, 10080),
    ],
)
def test_quiesce_after_and_timeout(args: str, quiesce_after: int, timeout: int | None) -> None:
    assert start_request(args, ROOT) == StartRequest(
        prompt="go", quiesce_after=quiesce_after, timeout_minutes=timeout
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("go --quiesce-after 0", "--quiesce-after needs a whole number from 1 to 7, not '0': "
                                 "for example --quiesce-after 2"),
        ("go --quiesce-after 8", "--quiesce-after needs a whole number from 1 to 7, not "
                                   "'8': for example --quiesce-after 2"),
        ("go --quiesce-after -1", "--quiesce-after needs a whole number from 1 to 7, not "
                                  "'-1': for example --quiesce-after 2"),
        ("go --quiesce-after two", "--quiesce-after needs a whole number from 1 to 7, not "
                                   "'two': for example --quiesce-after 2"),
        ("go --timeout-minutes 0", "--timeout-minutes needs a whole number from 1 to 10080, not "
                                   "'0': for example --timeout-minutes 2"),
        ("go --timeout-minutes 10081", "--timeout-minutes needs a whole number from 1 to 10080, "
                                       "not '10081': for example --timeout-minutes 2"),
        ("go --timeout-minutes 1.5", "--timeout-minutes needs a whole number from 1 to 10080, "
                                     "not '1.5': for example --timeout-minutes 2"),
        ("go --timeout-minutes ''", "--timeout-minutes needs a whole number from 1 to 10080, "
                                    "not '': for example --timeout-minutes 2"),
        ("go --timeout-minutes 5 --timeout-minutes 6",
         "--timeout-minutes was given 2 times: give it once"),
        ("go --quiesce-after 2 --quiesce-after=2",
         "--quiesce-after was given 2 times: give it once"),
        ("go --plan a.md --plan b.md", "--plan was given 2 times: give it once"),
    ],
)
def test_protocol_flag_refusals(args: str, message: str) -> None:
    assert refusal(args) == message


@pytest.mark.parametrize("flag", ["--plan", "--quiesce-after", "--timeout-minutes"])
def test_protocol_flags_need_a_value(flag: str) -> None:
    assert refusal(f"go {flag}") == f"{flag} needs a value: type {LOOP_USAGE}"


def test_plan_adds_its_verification_commands(project: Path) -> None:
    request = start_request("--plan tasks/todo.md --verify 'make lint' --verify 'pytest -q'",
                              project)
    assert request == StartRequest(
        prompt="Work through the plan in tasks/todo.md: read it, take the first incomplete, "
               "unblocked task, do it (test first for behaviour changes), run its verification, "
               "and tick it off in the plan.",
        verify=["make lint", "pytest -q", "ruff check ."],
        plan_file="tasks/todo.md",
    )


def test_plan_with_a_prompt_of_its_own(project: Path) -> None:
    request = start_request("'Fix the parser first' --plan=tasks/todo.md --max-iterations 5",
                              project)
    assert request == StartRequest(
        prompt="Fix the parser first", max_iterations=5, verify=["pytest -q", "ruff check ."],
        plan_file="tasks/todo.md",
    )


def test_plan_by_absolute_path(project: Path) -> None:
    path = project / "tasks" / "todo.md"
    assert start_request(f"go --plan '{path}'", ROOT).plan_file == str(path)


@pytest.mark.parametrize(
    ("remove", "message"),
    [
        ("## Verification Commands\n- `pytest -q`\n- `ruff check .`\n",
         'tasks/todo.md has no "## Verification Commands" section: add one listing each '
         "command in backticks"),
        ("## Goal\nAll unit tests pass.\n",
         'tasks/todo.md has no "## Goal" section: add one saying what the loop must achieve'),
        ("- `pytest -q`\n- `ruff check .`\n",
         'tasks/todo.md has no command under "## Verification Commands": list each in '
         "backticks, e.g. `pytest -q`, or pass --verify CMD"),
    ],
)
def test_plan_that_cannot_drive_a_loop_is_refused(project: Path, remove: str,
                                                  message: str) -> None:
    path = project / "tasks" / "todo.md"
    path.write_text(PLAN.replace(remove, ""), encoding="utf-8")
    assert refusal("go --plan tasks/todo.md", project) == message


def test_plan_without_commands_is_accepted_with_verify(project: Path) -> None:
    path = project / "tasks" / "todo.md"
    path.write_text(PLAN.replace("- `pytest -q`\n- `ruff check .`\n", ""), encoding="utf-8")
    request = start_request("go --plan tasks/todo.md --verify 'make check'", project)
    assert (request.verify, request.plan_file) == (["make check"], "tasks/todo.md")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing.md", "--plan missing.md: no such file under {root}; give a path relative to "
                       "the project root"),
        ("tasks", "--plan tasks: that is a directory; give a file"),
    ],
)
def test_plan_file_problems(project: Path, name: str, message: str) -> None:
    assert refusal(f"go --plan {name}", project) == message.format(root=project)


# --- /ralph-resume ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "request_"),
    [
        ("", ResumeRequest()),
        ("   ", ResumeRequest()),
        ("--max-iterations 12", ResumeRequest(max_iterations=12)),
        ("--timeout-minutes 30", ResumeRequest(timeout_minutes=30)),
        ("--timeout-minutes=30 --max-iterations=9", ResumeRequest(9, 30)),
    ],
)
def test_parse_resume_args(args: str, request_: ResumeRequest) -> None:
    assert parse_resume_args(args) == request_


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("go", f"/ralph-resume takes only options: type {RESUME_USAGE}"),
        ("-- --max-iterations 3", f"/ralph-resume takes only options: type {RESUME_USAGE}"),
        ("--max-iterations 9 please", f"/ralph-resume takes only options: type {RESUME_USAGE}"),
        ("--verify 'pytest -q'", f"unknown option --verify: type {RESUME_USAGE}"),
        ("--quiesce-after 3", f"unknown option --quiesce-after: type {RESUME_USAGE}"),
        ("--max-iterations", f"--max-iterations needs a value: type {RESUME_USAGE}"),
        ("--timeout-minutes", f"--timeout-minutes needs a value: type {RESUME_USAGE}"),
        ("--max-iterations 0", "--max-iterations must be from 1 to 1000, not 0: a loop always "
                               "has a cap; for example --max-iterations 8"),
        ("--max-iterations lots", "--max-iterations needs a whole number from 1 to 1000, not "
                                  "'lots': for example --max-iterations 8"),
        ("--timeout-minutes 0", "--timeout-minutes needs a whole number from 1 to 10080, not "
                                "'0': for example --timeout-minutes 2"),
        ("--max-iterations 3 --max-iterations 4",
         "--max-iterations was given 2 times: give it once"),
        ("'unclosed", "could not read the arguments (No closing quotation): close the quote, or "
                      "put the prompt in a file and pass --prompt-file PATH"),
    ],
)
def test_parse_resume_args_refusals(args: str, message: str) -> None:
    assert resume_refusal(args) == message
