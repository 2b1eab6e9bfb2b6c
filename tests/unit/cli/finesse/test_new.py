"""`finesse new` end to end: the files written, the summary, the refusals."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import git
import pytest
import yaml
from click.testing import CliRunner, Result

from finesse.authoring import plan as plan_module
from finesse.authoring.prompt_check.validate import (
    AttributeResult,
    ValidationReport,
    validate_prompt,
)
from finesse.authoring.render import (
    render_prompt,
)
from finesse.authoring.spec import parse_spec
from finesse.cli.finesse import cli
from finesse.loop.grammar import check_promise
from tests.unit.authoring.test_render import JSON_SPEC, YAML_SPEC, base_data, check_golden, failing  # noqa: F401

# ---- the command ------------------------------------------------------------------------




@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project the YAML example can measure: app/reports/models.py, 300 lines."""
    root = tmp_path / "project"
    (root / "app" / "reports").mkdir(parents=True)
    (root / "app" / "reports" / "models.py").write_text("x = 1\n" * 300)
    return root


def new(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(cli, ["new", *map(str, args)], prog_name="finesse")


def plan_files(root: Path, name: str) -> dict[str, str]:
    out = root / "finesse-plans"
    return {path.name: path.read_text() for path in sorted(out.iterdir())
            if path.name.startswith(name)}


CSV_WARNINGS = (
    "warning: context pressure is moderate (35% of the window at peak): proceed, and keep "
    "phases small\n"
    "warning: checkpointing is on but the project is not a git repository: run `git init` "
    "and commit before the loop starts\n"
)


def test_new_writes_the_three_files_and_says_how_to_run_them(
        runner: CliRunner, project: Path) -> None:
    result = new(runner, YAML_SPEC, "--project", project)
    assert (result.exit_code, result.stderr) == (0, CSV_WARNINGS)
    assert result.stdout.splitlines() == [
        "Wrote finesse-plans/csv-export.md, finesse-plans/csv-export-promise.txt, "
        "finesse-plans/csv-export-plan.md.",
        "All 10 attributes pass (finesse validate).",
        "Peak context 70,000 tokens, 35% of the window (moderate pressure); cost for 12 "
        "iterations: $5-20.",
        "Run the plan in Claude Code with:",
        "  /finesse:finesse-execute --prompt-file finesse-plans/csv-export.md "
        "--completion-promise-file finesse-plans/csv-export-promise.txt --max-iterations 12",
    ]
    files = plan_files(project, "csv-export")
    assert sorted(files) == ["csv-export-plan.md", "csv-export-promise.txt", "csv-export.md"]
    for name, text in files.items():
        check_golden(name, text)


def test_new_on_the_json_example(runner: CliRunner, tmp_path: Path) -> None:
    result = new(runner, JSON_SPEC, "--project", tmp_path)
    assert (result.exit_code, result.stderr) == (
        0, "warning: checkpointing is on but the project is not a git repository: run "
           "`git init` and commit before the loop starts\n")
    for name, text in plan_files(tmp_path, "flaky-retry").items():
        check_golden(name, text)


def test_the_plan_front_matter_reads_back_as_yaml(runner: CliRunner, project: Path) -> None:
    assert new(runner, YAML_SPEC, "--project", project).exit_code == 0
    plan = (project / "finesse-plans" / "csv-export-plan.md").read_text()
    front = plan.split("---\n")[1]
    assert yaml.safe_load(front) == {
        "prompt_file": "finesse-plans/csv-export.md",
        "promise_file": "finesse-plans/csv-export-promise.txt",
        "task_type": "feature",
        "max_iterations": 12,
        "baseline_commit": "none (not a git repository)",
        "git_config": {"checkpointing": True, "granularity": "per-phase", "custom": None,
                       "push": False},
        "subagent_enabled": True,
        "phases": [
            {"name": "CSV serializer", "verify": "pytest tests/reports/test_csv_export.py -q"},
            {"name": "Export endpoint",
             "verify": "pytest tests/reports/test_views.py -q -k export"},
            {"name": "Streaming for large reports", "verify": "pytest tests/reports -q"},
        ],
    }
    headings = re.findall(r"^## (.+)$", plan, re.MULTILINE)
    assert headings == ["Task Type", "Summary", "Codebase Context", "Chosen Approach",
                        "Recommended --max-iterations", "Context Budget Estimate",
                        "Validation Results", "Unresolved Warnings"]


def test_the_promise_file_is_the_promise_and_one_newline(
        runner: CliRunner, project: Path) -> None:
    assert new(runner, YAML_SPEC, "--project", project).exit_code == 0
    out = project / "finesse-plans"
    assert (out / "csv-export-promise.txt").read_bytes() == b"EXPORT DONE\n"
    assert check_promise((out / "csv-export-promise.txt").read_text(), "file") == "EXPORT DONE"
    result = runner.invoke(cli, ["validate", str(out / "csv-export.md"), "--promise-file",
                                 str(out / "csv-export-promise.txt")])
    assert result.exit_code == 0, result.output


def test_the_prompt_file_is_the_prompt_only(runner: CliRunner, project: Path) -> None:
    assert new(runner, YAML_SPEC, "--project", project).exit_code == 0
    prompt = (project / "finesse-plans" / "csv-export.md").read_text()
    assert prompt == render_prompt(parse_spec(yaml.safe_load(YAML_SPEC.read_text())))
    assert prompt.startswith("You are iterating on ")


def test_baseline_commit_is_the_project_head(runner: CliRunner, git_repo: Path) -> None:
    with git.Repo(git_repo) as repo:
        head = repo.head.commit.hexsha
    result = new(runner, JSON_SPEC, "--project", git_repo)
    assert (result.exit_code, result.stderr) == (0, "")
    plan = (git_repo / "finesse-plans" / "flaky-retry-plan.md").read_text()
    assert f'baseline_commit: "{head}"\n' in plan


def test_baseline_commit_of_a_repository_without_commits(
        runner: CliRunner, tmp_path: Path) -> None:
    git.Repo.init(tmp_path).close()
    assert new(runner, JSON_SPEC, "--project", tmp_path).exit_code == 0
    plan = (tmp_path / "finesse-plans" / "flaky-retry-plan.md").read_text()
    assert 'baseline_commit: "none (no commit yet)"\n' in plan


def test_new_refuses_to_overwrite_without_force(runner: CliRunner, tmp_path: Path) -> None:
    assert new(runner, JSON_SPEC, "--project", tmp_path).exit_code == 0
    (tmp_path / "finesse-plans" / "flaky-retry.md").write_text("edited by hand\n")
    result = new(runner, JSON_SPEC, "--project", tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "finesse new: finesse-plans/flaky-retry.md already exists (and 2 more); pass "
               "--force to overwrite, or --name to write a new plan\n")
    assert (tmp_path / "finesse-plans" / "flaky-retry.md").read_text() == "edited by hand\n"
    assert new(runner, JSON_SPEC, "--project", tmp_path, "--force").exit_code == 0
    assert (tmp_path / "finesse-plans" / "flaky-retry.md").read_text().startswith("You are")


def test_name_and_out_dir(runner: CliRunner, tmp_path: Path) -> None:
    result = new(runner, JSON_SPEC, "--project", tmp_path, "--name", "retry.v2",
                 "--out-dir", "plans/q3")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "plans" / "q3").iterdir()) == [
        "retry.v2-plan.md", "retry.v2-promise.txt", "retry.v2.md"]
    assert result.stdout.splitlines()[-1] == (
        "  /finesse:finesse-execute --prompt-file plans/q3/retry.v2.md "
        "--completion-promise-file plans/q3/retry.v2-promise.txt --max-iterations 8")


@pytest.mark.parametrize(("args", "message"), [
    (["{spec}", "--name", "../x"],
     "finesse new: --name '../x' cannot name the plan files: use letters, digits, '.', '_' "
     "and '-' (up to 80), e.g. --name csv-export"),
    (["{tmp}/nope.yaml"],
     "finesse new: the spec {tmp}/nope.yaml: no such file; give a YAML or JSON file"),
    (["{tmp}/spec.txt"], "finesse new: the spec {tmp}/spec.txt must end in .yaml, .yml or .json"),
    (["{tmp}/broken.yaml"], "finesse new: the spec {tmp}/broken.yaml is not valid YAML at "
                            "line 3"),
    (["{tmp}/broken.json"], "finesse new: the spec {tmp}/broken.json is not valid JSON "
                            "(Expecting value: line 1 column 1 (char 0))"),
    (["{tmp}/list.yaml"], "finesse new: the spec {tmp}/list.yaml: invalid spec: the top "
                          "level: Input should be a valid dictionary or instance of Spec"),
    (["{tmp}/bad.json"], "finesse new: the spec {tmp}/bad.json: invalid spec: promise: "
                         "BLOCKED is the stuck signal; pick another, e.g. TASK_COMPLETE; "
                         "iteration_limit: Input should be less than or equal to 25"),
    (["{tmp}/missing-file.json"], "finesse new: no file lib/gone.py; give a file that exists, "
                                  "or small / medium / large for one not read yet"),
    ([], "finesse new: Missing argument 'SPEC'. (see 'finesse new --help')"),
])
def test_usage_errors_exit_2_with_one_line(runner: CliRunner, tmp_path: Path,
                                           args: list[str], message: str) -> None:
    data = json.loads(JSON_SPEC.read_text())
    (tmp_path / "spec.txt").write_text("{}")
    (tmp_path / "broken.yaml").write_text("project:\n  - [unclosed\n")
    (tmp_path / "broken.json").write_text("")
    (tmp_path / "list.yaml").write_text("- a\n")
    (tmp_path / "bad.json").write_text(json.dumps({**data, "promise": "BLOCKED",
                                                   "iteration_limit": 40}))
    data["phases"][1]["files"] = ["lib/gone.py"]
    (tmp_path / "missing-file.json").write_text(json.dumps(data))
    argv = [arg.format(tmp=tmp_path, spec=JSON_SPEC) for arg in args]
    result = new(runner, *argv, "--project", tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", message.format(tmp=tmp_path) + "\n")
    assert not (tmp_path / "finesse-plans").exists()


def test_a_prompt_that_fails_the_checker_is_not_written(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def checker_disagrees(text: str, *, promise: str | None = None) -> ValidationReport:
        report = validate_prompt(text, promise=promise)
        broken = AttributeResult(id=6, key="guardrails", passed=False, evidence=None,
                                 fix="add explicit rules")
        return ValidationReport(passed=False, attributes=[
            broken if r.id == 6 else r for r in report.attributes])

    monkeypatch.setattr(plan_module, "validate_prompt", checker_disagrees)
    result = new(runner, JSON_SPEC, "--project", tmp_path)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "finesse new: the rendered prompt fails guardrails (add explicit rules); nothing was "
        "written. This is a finesse bug: please report it with the spec\n")
    assert not (tmp_path / "finesse-plans").exists()


def test_warnings_for_tight_limits_and_unused_subagent_opportunities(
        runner: CliRunner, project: Path) -> None:
    data = {**base_data(), "iteration_limit": 2, "blocked_after": 2, "subagents": False,
            "warnings": ["the streaming threshold is a guess; confirm it with the team"]}
    spec_path = project / "tight.json"
    spec_path.write_text(json.dumps(data))
    with git.Repo.init(project) as repo:
        repo.index.add(["app/reports/models.py"])
        repo.index.commit("initial")
    result = new(runner, spec_path, "--project", project)
    assert (result.exit_code, result.stderr.splitlines()) == (0, [
        "warning: the streaming threshold is a guess; confirm it with the team",
        "warning: context pressure is moderate (35% of the window at peak): proceed, and "
        "keep phases small",
        "warning: the iteration limit (2) is below the number of phases (3): the loop may "
        "stop before the last phase",
        "warning: subagents are off, so the prompt leaves out the subagent opportunities of "
        "phases 1 and 3",
    ])
    plan = (project / "finesse-plans" / "tight-plan.md").read_text()
    assert plan.split("## Unresolved Warnings\n\n")[1] == "\n".join(
        f"- {line.removeprefix('warning: ')}" for line in result.stderr.splitlines()) + "\n"




# ---- a decomposed task: finesse-plans/<session>/ ------------------------------------------

TODO_SPEC = YAML_SPEC.with_name("todo-api.yaml")
SESSION = "finesse-plans/build-todo-api-with-auth"


def test_a_decomposed_spec_writes_the_nested_layout_that_validate_passes(
        runner: CliRunner, git_repo: Path) -> None:
    result = new(runner, TODO_SPEC, "--project", git_repo)
    assert (result.exit_code, result.stderr) == (0, "")
    execute = "/finesse:finesse-execute --prompt-file"
    assert result.stdout.splitlines() == [
        f"Wrote {SESSION}/execution-graph.md and 3 sub-workflows in 2 waves (prompt.md, "
        "promise.txt and plan.md each).",
        f"All 10 attributes pass in every sub-workflow prompt (finesse validate {SESSION}/).",
        "Total estimated iterations: 22.",
        "Run the waves in Claude Code, in order:",
        "## Wave 1 (run in parallel)",
        f"  {execute} {SESSION}/wave-1/auth-endpoints/prompt.md --completion-promise-file "
        f"{SESSION}/wave-1/auth-endpoints/promise.txt --max-iterations 8",
        f"  {execute} {SESSION}/wave-1/todo-store/prompt.md --completion-promise-file "
        f"{SESSION}/wave-1/todo-store/promise.txt --max-iterations 6",
        "## Wave 2 (run after Wave 1 completes)",
        f"  {execute} {SESSION}/wave-2/todo-routes/prompt.md --completion-promise-file "
        f"{SESSION}/wave-2/todo-routes/promise.txt --max-iterations 8",
    ]
    folder = git_repo / SESSION
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == [
        "execution-graph.md",
        *(f"{task}/{name}" for task in ("wave-1/auth-endpoints", "wave-1/todo-store",
                                        "wave-2/todo-routes")
          for name in ("plan.md", "promise.txt", "prompt.md"))]
    check_golden("execution-graph.md", (folder / "execution-graph.md").read_text())
    check_golden("todo-routes-prompt.md", (folder / "wave-2/todo-routes/prompt.md").read_text())
    plan = (folder / "wave-2/todo-routes/plan.md").read_text()
    assert f'prompt_file: "{SESSION}/wave-2/todo-routes/prompt.md"\n' in plan
    validated = runner.invoke(cli, ["validate", str(folder)], prog_name="finesse")
    assert (validated.exit_code, validated.stdout.splitlines()[-1]) == (
        0, f"{folder}: 3 sub-workflows, all pass")


def test_a_session_folder_that_already_holds_flat_files_is_never_mixed(
        runner: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / SESSION
    folder.mkdir(parents=True)
    (folder / "old-plan.md").write_text("# Plan\n")
    (folder / "old.md").write_text("You are iterating on old.\n")
    for args in ([], ["--force"]):
        result = new(runner, TODO_SPEC, "--project", tmp_path, *args)
        assert (result.exit_code, result.stdout, result.stderr) == (
            2, "", f"finesse new: {SESSION} already holds flat-format plan files "
                   "(old-plan.md, old.md): the flat and nested formats are never mixed; give "
                   "the session another --name\n")
    assert sorted(p.name for p in folder.iterdir()) == ["old-plan.md", "old.md"]


def test_a_flat_plan_is_never_written_into_a_session_folder(
        runner: CliRunner, tmp_path: Path) -> None:
    assert new(runner, TODO_SPEC, "--project", tmp_path).exit_code == 0
    result = new(runner, JSON_SPEC, "--project", tmp_path, "--out-dir", SESSION)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"finesse new: {SESSION} holds a decomposed plan (execution-graph.md): the flat "
               "and nested formats are never mixed; write this plan to another --out-dir\n")


def test_a_session_is_overwritten_only_with_force_and_named_in_kebab_case(
        runner: CliRunner, tmp_path: Path) -> None:
    assert new(runner, TODO_SPEC, "--project", tmp_path).exit_code == 0
    result = new(runner, TODO_SPEC, "--project", tmp_path)
    assert (result.exit_code, result.stderr) == (
        2, f"finesse new: {SESSION} already holds a decomposed plan; pass --force to "
           "overwrite, or --name to write a new session\n")
    assert new(runner, TODO_SPEC, "--project", tmp_path, "--force").exit_code == 0
    renamed = new(runner, TODO_SPEC, "--project", tmp_path, "--name", "todo-api-v2")
    assert renamed.exit_code == 0
    assert (tmp_path / "finesse-plans/todo-api-v2/execution-graph.md").is_file()
    bad = new(runner, TODO_SPEC, "--project", tmp_path, "--name", "Todo API")
    assert (bad.exit_code, bad.stderr) == (
        2, "finesse new: --name 'Todo API' cannot name a session folder: use kebab-case, e.g. "
           "--name build-todo-api-with-auth\n")


def test_a_fifo_given_as_the_spec_is_refused_without_blocking(
        runner: CliRunner, tmp_path: Path) -> None:
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)  # nothing ever writes to it: a blocking read would hang the test
    result = new(runner, fifo, "--project", tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"finesse new: the spec {fifo}: not a regular file (a FIFO, device or socket); "
               "give a plain file\n")
