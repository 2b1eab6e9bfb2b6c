"""Plan folders on disk, checked as a whole."""
from __future__ import annotations

from pathlib import Path

import pytest

from finesse.authoring.workflows.folder import (
    FolderReport,
    folder_summary,
    validate_workflow_folder,
)
from finesse.authoring.workflows.graph import parse_execution_graph
from finesse.authoring.workflows.model import check_graph
from finesse.errors import UsageError
from tests.unit.authoring.workflows.plans import (
    NESTED_RESULTS,
    PLAN_DIR,
    PROMPTS,
    corpus_prompt,
    expected_result,
    graph,
    write_folder,
)

# ---------------------------------------------------------------- folders on disk


def test_a_valid_two_wave_nested_folder_passes(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, graph())
    report = validate_workflow_folder(folder)
    assert report == FolderReport(path=str(folder), layout="nested", workflows=NESTED_RESULTS,
                                  errors=[])
    assert report.passed
    assert folder_summary(report).splitlines() == [
        "PASS wave-1/csv-export/prompt.md",
        "PASS wave-1/dst-fix/prompt.md",
        "PASS wave-2/billing/prompt.md",
        f"{folder}: 3 sub-workflows, all pass",
    ]


def test_a_valid_flat_folder_passes(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, graph("flat"))
    (folder / "billing-plan.md").write_text("baseline_commit: abc1234\n")
    (folder / "billing-retro.md").write_text("# Retro\n")
    assert validate_workflow_folder(folder) == FolderReport(
        path=str(folder), layout="flat", errors=[], workflows=[
            expected_result("billing", None, "billing.md"),
            expected_result("csv-export", None, "csv-export.md"),
            expected_result("dst-fix", None, "dst-fix.md"),
        ])


def test_a_folder_mixing_flat_and_nested_formats_is_rejected(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, graph())
    (folder / "extra.md").write_text(corpus_prompt(PROMPTS["billing"][0]))
    (folder / "extra-promise.txt").write_text("REFACTOR COMPLETE\n")
    report = validate_workflow_folder(folder)
    assert report == FolderReport(
        path=str(folder), layout=None,
        workflows=[*NESTED_RESULTS, expected_result("extra", None, "extra.md", "billing")],
        errors=[
            "mixes the flat format (extra.md) and the nested format "
            "(wave-1/csv-export/prompt.md, wave-1/dst-fix/prompt.md, wave-2/billing/prompt.md):"
            " keep one, wave-N/<task>/prompt.md or <task>.md with <task>-promise.txt",
            "extra.md is not in execution-graph.md: add it to a wave or remove it",
        ])
    assert not report.passed


@pytest.mark.parametrize("depends", [{"csv-export": ("billing",)},
                                     {"dst-fix": ("csv-export",)}])
def test_a_folder_whose_wave_depends_on_the_same_or_a_later_wave_is_rejected(
        tmp_path: Path, depends: dict[str, tuple[str, ...]]) -> None:
    plan = graph(depends=depends)
    report = validate_workflow_folder(write_folder(tmp_path, plan))
    assert report.workflows == NESTED_RESULTS
    assert report.errors == [f"execution-graph.md: {problem}" for problem in check_graph(plan)]
    assert len(report.errors) == 1


def test_a_sub_workflow_missing_one_attribute_fails_naming_it(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, graph(), prompts={"dst-fix": "no-rules"})
    report = validate_workflow_folder(folder)
    weak = expected_result("dst-fix", 1, "wave-1/dst-fix/prompt.md", "no-rules")
    assert [result.key for result in weak.report.failed] == ["guardrails"]
    assert report == FolderReport(
        path=str(folder), layout="nested",
        workflows=[NESTED_RESULTS[0], weak, NESTED_RESULTS[2]],
        errors=["wave-1/dst-fix/prompt.md: fails 1 of 10 attributes: guardrails"])


def test_the_graph_and_the_disk_must_list_the_same_sub_workflows(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, graph())
    (folder / "wave-2" / "billing").rename(folder / "wave-1" / "billing")
    (folder / "wave-1" / "dst-fix").rename(folder / "wave-1" / "tz-fix")
    (folder / "wave-1" / "csv-export" / "plan.md").unlink()
    (folder / "wave-2" / "orphan").mkdir()
    report = validate_workflow_folder(folder)
    assert report.errors == [
        "wave-1/csv-export/ has no plan.md",
        "wave-2/orphan/ has no prompt.md",
        "wave-2/orphan/ has no promise.txt",
        "wave-2/orphan/ has no plan.md",
        "`dst-fix` is in wave 1 of execution-graph.md, but there is no wave-1/dst-fix/",
        "`billing` is in wave 2 of execution-graph.md, but its folder is wave-1/billing/",
        "wave-1/tz-fix/prompt.md is not in execution-graph.md: add it to a wave or remove it",
        "wave-2/orphan/prompt.md is not in execution-graph.md: add it to a wave or remove it",
    ]
    assert [result.prompt for result in report.workflows] == [
        "wave-1/billing/prompt.md", "wave-1/csv-export/prompt.md", "wave-1/tz-fix/prompt.md"]


def test_graph_problems_layout_and_plan_folder_are_checked_against_the_folder(
        tmp_path: Path) -> None:
    folder = tmp_path / "elsewhere"
    write_folder(tmp_path, graph()).rename(folder)
    graph_file = folder / "execution-graph.md"
    graph_file.write_text(graph_file.read_text().replace("- **Layout**: nested",
                                                         "- **Layout**: flat"))
    (folder / "wave-1" / "dst-fix" / "promise.txt").write_text("\n")
    report = validate_workflow_folder(folder)
    # The commands name nested files; a flat graph expects others (tested on their own above).
    problems = parse_execution_graph(graph_file.read_text()).problems
    assert len(problems) == 6
    assert report.errors == [
        *[f"execution-graph.md: {problem}" for problem in problems],
        "execution-graph.md says the layout is flat, but the sub-workflows on disk are nested",
        f"execution-graph.md: the plan folder is given as {PLAN_DIR}, but this folder is "
        f"{folder}: its commands would not find the prompts",
        "wave-1/dst-fix/promise.txt is empty: give the text the agent must output, e.g. DONE",
    ]
    assert report.workflows == [NESTED_RESULTS[0], NESTED_RESULTS[2]]


def test_a_nested_folder_without_a_graph_and_an_unreadable_graph_are_errors(
        tmp_path: Path) -> None:
    folder = write_folder(tmp_path, graph())
    graph_file = folder / "execution-graph.md"
    graph_file.unlink()
    assert validate_workflow_folder(folder) == FolderReport(
        path=str(folder), layout="nested", workflows=NESTED_RESULTS,
        errors=["no execution-graph.md: write it with the waves, tables and commands"])
    graph_file.write_bytes(b"\xff\xfe")
    assert validate_workflow_folder(folder).errors == [
        f"execution graph {graph_file}: not UTF-8 text; save it as UTF-8"]
    graph_file.write_text("# Execution graph\n")
    assert validate_workflow_folder(folder).errors == [
        "execution-graph.md: no `## Overview` section: start with the overview of the plan"]


def test_a_directory_that_is_no_plan_folder_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("notes\n")
    with pytest.raises(UsageError) as caught:
        validate_workflow_folder(tmp_path)
    assert str(caught.value) == (f"{tmp_path}: no execution-graph.md and no wave-N/ folders; "
                                 "give a prompt file or a multi-workflow plan folder")
    with pytest.raises(UsageError):
        validate_workflow_folder(tmp_path / "notes.md")


