"""`finesse validate DIR` on a multi-workflow plan folder."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from finesse.authoring.workflows.folder import WorkflowResult
from finesse.cli.finesse import cli
from tests.unit.authoring.workflows.plans import (  # noqa: F401
    CORPUS,
    NESTED_RESULTS,
    PLAN_DIR,
    PROMPTS,
    expected_result,
    graph,
    write_folder,
)

# ---------------------------------------------------------------- finesse validate DIR




def folder_json(path: str, results: list[WorkflowResult], errors: list[str]) -> object:
    return {
        "path": path,
        "passed": not errors,
        "workflows": [{"path": f"{path}/{result.prompt}", "passed": result.report.passed,
                       "attributes": [a.model_dump() for a in result.report.attributes],
                       "prompt_only": result.report.prompt_only.model_dump()}
                      for result in results],
        "errors": errors,
    }


def test_validate_a_valid_folder_exits_0_with_the_whole_json(
        runner: CliRunner, tmp_path: Path) -> None:
    folder = str(write_folder(tmp_path, graph()))
    result = runner.invoke(cli, ["validate", folder, "--json"], prog_name="finesse")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == folder_json(folder, NESTED_RESULTS, [])


def test_validate_a_failing_folder_exits_1_with_the_whole_json_and_a_table(
        runner: CliRunner, tmp_path: Path) -> None:
    folder = str(write_folder(tmp_path, graph(), prompts={"billing": "no-rules"}))
    weak = expected_result("billing", 2, "wave-2/billing/prompt.md", "no-rules")
    result = runner.invoke(cli, ["validate", folder, "--json"], prog_name="finesse")
    assert (result.exit_code, result.stderr) == (1, "")
    errors = ["wave-2/billing/prompt.md: fails 1 of 10 attributes: guardrails"]
    assert json.loads(result.stdout) == folder_json(folder, [*NESTED_RESULTS[:2], weak], errors)
    table = runner.invoke(cli, ["validate", folder], prog_name="finesse")
    assert (table.exit_code, table.stderr) == (1, "")
    assert table.stdout.splitlines() == [
        "PASS wave-1/csv-export/prompt.md",
        "PASS wave-1/dst-fix/prompt.md",
        "FAIL wave-2/billing/prompt.md",
        f"error: {errors[0]}",
        f"{folder}: 1 problems; fix them and run `finesse validate` again (on a prompt file "
        "for its details)",
    ]


@pytest.mark.parametrize(("args", "message"), [
    (["validate", "{tmp}"],
     "finesse validate: {tmp}: no execution-graph.md and no wave-N/ folders; give a prompt "
     "file or a multi-workflow plan folder"),
    (["validate", "{tmp}/" + PLAN_DIR, "--promise-file", "{tmp}/p.txt"],
     "finesse validate: --promise-file is for one prompt; each sub-workflow of a plan folder "
     "has its own promise file"),
])
def test_validate_a_folder_usage_errors_exit_2_with_one_line(
        runner: CliRunner, tmp_path: Path, args: list[str], message: str) -> None:
    write_folder(tmp_path, graph())
    plain = tmp_path / "plain"
    plain.mkdir()
    args = [arg.format(tmp=plain if arg == "{tmp}" else tmp_path) for arg in args]
    result = runner.invoke(cli, args, prog_name="finesse")
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", message.format(tmp=plain) + "\n")
