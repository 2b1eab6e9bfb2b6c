"""A loop's start request: the files the arguments name (the prompt file, the promise file,
the written plan) read relative to the project root, and their refusals."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from finesse.errors import UsageError
from finesse.loop.request import StartRequest, start_request
from finesse.results import Price
from finesse.spend import DEFAULT_PRICES
from tests.helpers.repo import write
from tests.helpers.requests import ROOT, parse, refusal

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
GATE_PLAN = """\
# Add the feature

## Goal
The feature exists.

## Acceptance Criteria
- feature.txt is there

## Verification Commands
- `test -f feature.txt`

## Gate
- `make lint`
- `pytest -q`
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "todo.md").write_text(PLAN, encoding="utf-8")
    return tmp_path


# --- --prompt-file and --completion-promise-file --------------------------------------------------


def test_prompt_file_relative_to_root(tmp_path: Path) -> None:
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "task.md").write_text("\n  Do the thing.\nThen the other.\n\n")
    assert parse("--prompt-file plans/task.md --max-iterations 4", tmp_path) == StartRequest(
        prompt="Do the thing.\nThen the other.", max_iterations=4, prompt_file="plans/task.md",
    )


def test_prompt_file_absolute(tmp_path: Path) -> None:
    task = tmp_path / "task.md"
    task.write_text("Absolute task")
    assert parse(f"--prompt-file={shlex.quote(str(task))}", ROOT) == StartRequest(
        prompt="Absolute task", prompt_file=str(task),
    )


def test_completion_promise_file(tmp_path: Path) -> None:
    (tmp_path / "promise.txt").write_text("  ALL\n  TESTS   PASS\n")
    assert parse("go --completion-promise-file promise.txt", tmp_path) == StartRequest(
        prompt="go", promise="ALL TESTS PASS", promise_file="promise.txt",
    )


def test_both_files(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("Task from file")
    (tmp_path / "done.txt").write_text("SHIPPED")
    request = parse(
        "--prompt-file p.md --completion-promise-file done.txt --verify 'pytest -q'", tmp_path
    )
    assert request == StartRequest(
        prompt="Task from file", promise="SHIPPED", verify=["pytest -q"],
        prompt_file="p.md", promise_file="done.txt",
    )


@pytest.mark.parametrize("flag", ["--prompt-file", "--completion-promise-file"])
def test_missing_file_refused(tmp_path: Path, flag: str) -> None:
    words = "" if flag == "--prompt-file" else "go "
    assert refusal(f"{words}{flag} nope.md", tmp_path) == (
        f"{flag} nope.md: no such file under {tmp_path}; "
        "give a path relative to the project root"
    )


@pytest.mark.parametrize("flag", ["--prompt-file", "--completion-promise-file"])
def test_directory_refused(tmp_path: Path, flag: str) -> None:
    (tmp_path / "plans").mkdir()
    words = "" if flag == "--prompt-file" else "go "
    assert refusal(f"{words}{flag} plans", tmp_path) == (
        f"{flag} plans: that is a directory; give a file"
    )


def test_empty_prompt_file_refused(tmp_path: Path) -> None:
    (tmp_path / "empty.md").write_text(" \n\t\n")
    assert refusal("--prompt-file empty.md", tmp_path) == (
        "--prompt-file empty.md is empty: write the task in it"
    )


def test_empty_promise_file_refused(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("\n")
    assert refusal("go --completion-promise-file empty.txt", tmp_path) == (
        "--completion-promise-file empty.txt is empty: "
        "give the text the agent must output, e.g. DONE"
    )


def test_non_utf8_file_refused(tmp_path: Path) -> None:
    (tmp_path / "latin1.md").write_bytes(b"caf\xe9")
    assert refusal("--prompt-file latin1.md", tmp_path) == (
        "--prompt-file latin1.md: not UTF-8 text; save it as UTF-8"
    )


def test_huge_file_refused(tmp_path: Path) -> None:
    (tmp_path / "big.md").write_bytes(b"x" * (1024 * 1024 + 1))
    assert refusal("--prompt-file big.md", tmp_path) == (
        "--prompt-file big.md: over 1 MiB; point at a smaller file"
    )


def test_endless_device_refused_without_reading_it() -> None:
    assert refusal("--prompt-file /dev/zero") == (
        "--prompt-file /dev/zero: not a regular file (a FIFO, device or socket); give a plain file"
    )


@pytest.mark.parametrize("flag", ["--prompt-file", "--completion-promise-file"])
@pytest.mark.parametrize("name", ["a\nb.md", "a\rb.md", "a\x00b.md", "\x00"])
def test_unprintable_file_names_refused_on_one_line(flag: str, name: str) -> None:
    words = "" if flag == "--prompt-file" else "go "
    message = refusal(f"{words}{flag} {shlex.quote(name)}")
    assert message.startswith(f"{flag} {name!r}: ")


def test_existing_file_with_newline_in_name_refused_on_one_line(tmp_path: Path) -> None:
    (tmp_path / "a\nb.md").write_text("\n")
    quoted = shlex.quote("a\nb.md")
    assert refusal(f"--prompt-file {quoted}", tmp_path) == (
        "--prompt-file 'a\\nb.md' is empty: write the task in it"
    )
    assert refusal(f"go --completion-promise-file {quoted}", tmp_path) == (
        "--completion-promise-file 'a\\nb.md' is empty: "
        "give the text the agent must output, e.g. DONE"
    )


# --- --plan ---------------------------------------------------------------------------------------


def test_plan_adds_its_verification_commands(project: Path) -> None:
    request = start_request("--plan tasks/todo.md --verify 'make lint' --verify 'pytest -q'",
                              project)
    assert request == StartRequest(
        prompt="Work through the plan in tasks/todo.md: read it, take the first incomplete, "
               "unblocked task, do it (test first for behaviour changes), run its verification, "
               "and tick it off in the plan.",
        verify=["make lint", "pytest -q", "ruff check ."],
        plan_file="tasks/todo.md", notebook="tasks/todo.md",
    )


def test_plan_with_a_prompt_of_its_own(project: Path) -> None:
    request = start_request("'Fix the parser first' --plan=tasks/todo.md --max-iterations 5",
                              project)
    assert request == StartRequest(
        prompt="Fix the parser first", max_iterations=5, verify=["pytest -q", "ruff check ."],
        plan_file="tasks/todo.md", notebook="tasks/todo.md",
    )


def test_plan_by_absolute_path(project: Path) -> None:
    path = project / "tasks" / "todo.md"
    assert start_request(f"go --plan '{path}'", project).plan_file == str(path)


def test_a_plan_outside_the_project_is_refused_since_the_loop_writes_to_it(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "elsewhere"
    (project / "tasks").mkdir(parents=True)
    outside.mkdir()
    (outside / "todo.md").write_text(PLAN, encoding="utf-8")
    (project / "tasks" / "linked.md").symlink_to(outside / "todo.md")
    (project / "tasks" / "todo.md").write_text(PLAN, encoding="utf-8")
    for name in (str(outside / "todo.md"), "../elsewhere/todo.md", "tasks/linked.md"):
        assert refusal(f"go --plan '{name}'", project) == (
            f"--plan {name} is outside the project, and the loop writes to its plan: copy it "
            f"under {project} (tasks/todo.md, say)")
    # Out of the project and back in by the path is still the project's file.
    assert start_request("go --plan ../project/tasks/todo.md", project).plan_file \
        == "../project/tasks/todo.md"


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


def test_a_plans_gate_section_adds_its_commands(tmp_path: Path) -> None:
    write(tmp_path, "tasks/todo.md", GATE_PLAN)
    request = start_request('--plan tasks/todo.md --gate "pytest -q" --gate "true"', tmp_path)
    assert request == StartRequest(
        prompt=("Work through the plan in tasks/todo.md: read it, take the first incomplete, "
                "unblocked task, do it (test first for behaviour changes), run its "
                "verification, and tick it off in the plan."),
        plan_file="tasks/todo.md", notebook="tasks/todo.md",
        verify=["test -f feature.txt"],
        gate=["pytest -q", "true", "make lint"],
    )


# --- tasks/todo.md as the loop's notebook ----------------------------------------------------

NOTEBOOK_PLAN = "# Work\n\n## Goal\nShip it.\n\n## Attempts\n\n## Review\n"


def test_a_todo_with_the_seeds_attempts_heading_becomes_the_notebook(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "todo.md").write_text(NOTEBOOK_PLAN)
    assert start_request("Do the work", tmp_path).notebook == "tasks/todo.md"
    assert start_request("Do the work --no-plan", tmp_path).notebook is None


@pytest.mark.parametrize("text", ["# Notes\n\nMy own list.\n", "## attempt\n",
                                  "```\n## Attempts\n```\n"])
def test_a_todo_without_the_heading_is_never_the_notebook(tmp_path: Path, text: str) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "todo.md").write_text(text)
    assert start_request("Do the work", tmp_path).notebook is None


def test_a_fifo_at_tasks_todo_is_never_opened(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    os.mkfifo(tmp_path / "tasks" / "todo.md")  # opening it for reading would block
    assert start_request("Do the work", tmp_path).notebook is None


def test_a_todo_that_is_not_utf8_is_never_the_notebook_and_stays_as_it_is(
        tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    latin1 = NOTEBOOK_PLAN.replace("Ship it.", "Caf\xe9 menu.").encode("latin-1")
    (tmp_path / "tasks" / "todo.md").write_bytes(latin1)
    assert start_request("Do the work", tmp_path).notebook is None
    assert (tmp_path / "tasks" / "todo.md").read_bytes() == latin1


def test_plan_and_no_plan_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as refused:
        start_request("--plan tasks/todo.md --no-plan", tmp_path)
    assert str(refused.value) == "give --plan PATH or --no-plan, not both"


def test_a_prompt_over_a_megabyte_is_refused_with_its_size(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as refused:
        start_request("x" * (1024 * 1024 + 1), tmp_path)
    assert str(refused.value) == (
        "the prompt is 1,048,577 bytes, over the 1 MiB a loop carries into every iteration: "
        "shorten it, or point at the long part from a file"
    )


@pytest.mark.parametrize("name", ["prompt.md", "promise.txt", "todo.md"])
def test_a_fifo_named_by_an_option_is_refused_in_one_line(tmp_path: Path, name: str) -> None:
    os.mkfifo(tmp_path / name)
    flag = {"prompt.md": "--prompt-file", "promise.txt": "--completion-promise-file",
            "todo.md": "--plan"}[name]
    with pytest.raises(UsageError) as refused:
        start_request(f"go {flag} {name}" if flag != "--prompt-file" else f"{flag} {name}",
                      tmp_path)
    assert str(refused.value) == (
        f"{flag} {name}: not a regular file (a FIFO, device or socket); give a plain file"
    )


# --- budgets and prices -------------------------------------------------------------------------


def test_budgets_are_parsed_and_the_package_prices_used(tmp_path: Path) -> None:
    request = start_request("go --max-tokens 2_000_000 --max-cost $12.50 --stop-at-quota 80",
                            tmp_path)
    assert (request.budgets.max_tokens, request.budgets.max_cost,
            request.budgets.stop_at_quota) == (2_000_000, 12.5, 80)
    assert request.prices == list(DEFAULT_PRICES)


def test_a_projects_prices_lie_over_the_packages(tmp_path: Path) -> None:
    (tmp_path / ".finesse").mkdir()
    (tmp_path / ".finesse" / "config.json").write_text(json.dumps({"prices": {
        "claude-sonnet": {"input": 1, "output": 2, "cache_write": 3, "cache_read": 4}}}))
    prices = start_request("go --max-cost 5", tmp_path).prices
    assert prices[0] == Price("claude-sonnet", 1.0, 2.0, 3.0, 4.0)
    assert [p.family for p in prices[1:]] == [
        p.family for p in DEFAULT_PRICES if p.family != "claude-sonnet"]


@pytest.mark.parametrize(("args", "message"), [
    ("go --max-cost 0", "--max-cost needs an amount in US dollars above 0, not '0': for example "
                        "--max-cost 5 or --max-cost 12.50"),
    ("go --max-cost lots", "--max-cost needs an amount in US dollars above 0, not 'lots': for "
                           "example --max-cost 5 or --max-cost 12.50"),
    ("go --stop-at-quota 101", "--stop-at-quota needs a whole number from 1 to 100, not '101': "
                               "for example --stop-at-quota 80"),
    ("go --max-tokens -5", "--max-tokens needs a whole number from 1 to 1000000000000, not "
                           "'-5': for example --max-tokens 2000000"),
])
def test_budget_refusals(tmp_path: Path, args: str, message: str) -> None:
    with pytest.raises(UsageError) as refused:
        start_request(args, tmp_path)
    assert str(refused.value) == message


# --- judge mode ---------------------------------------------------------------------------------


def test_judge_mode_refuses_to_start_without_a_criterion(tmp_path: Path) -> None:
    assert refusal('go --judge --verify "pytest -q"', tmp_path) == (
        'judge mode needs at least one acceptance criterion: add --criteria "TEXT", or a plan '
        "(--plan) with items under ## Acceptance Criteria")


def test_judge_mode_refuses_to_start_without_a_verifier(tmp_path: Path) -> None:
    assert refusal('go --judge --criteria "it works"', tmp_path) == (
        'judge mode needs at least one verifier: add --verify "CMD", or a plan (--plan) with '
        "commands under ## Verification Commands")


def test_judge_mode_takes_criteria_and_verifiers_from_the_plan(project: Path) -> None:
    write(project, "tasks/todo.md", GATE_PLAN.replace("\n## Gate\n- `make lint`\n- `pytest -q`\n",
                                                      "").replace(
        "- feature.txt is there", "- [ ] feature.txt is there\n- [x] it says hello\n"
                                  "<!-- - a comment is not a criterion -->"))
    request = parse('--judge --plan tasks/todo.md --criteria "no warnings"', project)
    assert (request.criteria, request.verify, request.max_iterations) == (
        ["no warnings", "feature.txt is there", "it says hello"], ["test -f feature.txt"], 100)


def test_protect_paths_are_checked_and_normalised(project: Path) -> None:
    write(project, "src/billing/rates.py", "RATE = 1\n")
    request = parse('go --judge --criteria a --verify x --protect src/billing/ '
                    f"--protect {project}/src/billing --protect ./tasks/todo.md", project)
    assert request.protect == ["src/billing", "tasks/todo.md"]


@pytest.mark.parametrize(("path", "message"), [
    ("src/biling", "--protect src/biling: no such file or folder under {root}; a path that does "
                   "not exist would protect nothing"),
    ("../elsewhere", "--protect ../elsewhere is outside the project {root}: protect paths "
                     "inside it"),
    (".", "--protect cannot name the whole project: the worker would have nothing it may "
          "change; name the paths to keep as they are"),
    (".claude/ralph", "--protect .claude/ralph is the plugin's own folder, which the loop "
                      "itself writes: protect project paths"),
])
def test_protect_paths_refused(project: Path, path: str, message: str) -> None:
    assert refusal(f"go --judge --criteria a --verify x --protect {path}", project) == (
        message.format(root=project.resolve()))
