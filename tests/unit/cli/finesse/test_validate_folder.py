"""`finesse validate finesse-plans/<session>/` on a decomposed plan's folder."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from finesse.authoring.workflows.folder import validate_workflow_folder
from finesse.cli.finesse import cli
from tests.unit.authoring.workflows.plans import write_folder


def invoke(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, list(args), prog_name="finesse")


def test_validate_a_valid_folder_exits_0_with_the_whole_json(
        runner: CliRunner, tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    result = invoke(runner, "validate", str(folder), "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    report = validate_workflow_folder(folder)
    assert json.loads(result.stdout) == {
        "path": str(folder),
        "passed": True,
        "workflows": [{"path": f"{folder}/{w.prompt}", "passed": True,
                       "attributes": [a.model_dump() for a in w.report.attributes],
                       "prompt_only": w.report.prompt_only.model_dump()}
                      for w in report.workflows],
        "errors": [],
    }


def test_validate_a_failing_folder_exits_1_with_a_line_per_problem(
        runner: CliRunner, tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    (folder / "wave-1" / "todo-store" / "promise.txt").write_text("OTHER PROMISE\n")
    (folder / "notes.md").write_text("You are iterating on notes.\n")
    result = invoke(runner, "validate", str(folder))
    assert (result.exit_code, result.stderr) == (1, "")
    assert result.stdout.splitlines() == [
        "PASS wave-1/auth-endpoints/prompt.md",
        "FAIL wave-1/todo-store/prompt.md",
        "PASS wave-2/todo-routes/prompt.md",
        "error: holds flat-format plan files (notes.md) beside the nested layout: the two are "
        "never mixed; keep wave-N/<task>/ here and put a single plan's files in finesse-plans/ "
        "itself",
        "error: wave-1/todo-store/prompt.md: fails 1 of 10 attributes: completion-signal",
        f"{folder}: 2 problems; fix them and run `finesse validate` again (on a prompt file "
        "for its details)",
    ]
    (folder / "notes.md").unlink()  # one problem left: said in the singular
    result = invoke(runner, "validate", str(folder))
    assert result.stdout.splitlines()[-1] == (
        f"{folder}: 1 problem; fix it and run `finesse validate` again (on a prompt file "
        "for its details)")


def test_a_promise_file_is_for_one_prompt_not_a_folder(runner: CliRunner, tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    result = invoke(runner, "validate", str(folder), "--promise-file", "x.txt")
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "finesse validate: --promise-file is for one prompt; each sub-workflow of a plan "
               "folder has its own promise file\n")


def test_each_prompt_is_checked_with_the_graphs_cap_as_ralph_run_graph_runs_it(
        tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    prompt = folder / "wave-1" / "todo-store" / "prompt.md"
    text = prompt.read_text()
    capped = next(line for line in text.splitlines() if "iterations" in line)
    prompt.write_text(text.replace(capped, "- If unable to make progress, document blockers "
                                           "and"))
    report = validate_workflow_folder(folder)
    limit = next(result for result in report.workflows if result.name == "todo-store"
                 ).report.attributes[8]
    assert (report.errors, limit.passed, limit.evidence) == (
        [], True, "the loop's flag --max-iterations 6")
