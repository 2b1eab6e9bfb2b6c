"""Multi-workflow plan folders: the execution graph (parse, render, checks), the folder on
disk, and `finesse validate DIR`. Sub-workflow prompts come from the labelled corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from finesse.authoring.prompt_check.validate import validate_prompt
from finesse.authoring.workflows import (
    ExecutionGraph,
    FolderReport,
    GraphError,
    SubWorkflow,
    Wave,
    WorkflowResult,
    check_graph,
    folder_summary,
    parse_execution_graph,
    render_execution_graph,
    validate_workflow_folder,
)
from finesse.cli.finesse import cli
from finesse.errors import UsageError

CORPUS = Path(__file__).parent / "corpus"
# name -> (corpus prompt, its promise)
PROMPTS = {
    "csv-export": ("complete-feature-csv-export.md", "EXPORT_DONE"),
    "dst-fix": ("complete-bugfix-dst.md", "DST_FIXED"),
    "billing": ("complete-refactor-billing.md", "REFACTOR COMPLETE"),
    "no-rules": ("missing-guardrails-none.md", "PROPERTIES_DONE"),
}
PLAN_DIR = "finesse-plans/reports"


def graph(layout: str = "nested",
          depends: dict[str, tuple[str, ...]] | None = None) -> ExecutionGraph:
    """csv-export and dst-fix in wave 1, billing in wave 2 after both (unless overridden)."""
    def sub(name: str, kind: str, iterations: int, scope: str,
            default: tuple[str, ...] = ()) -> SubWorkflow:
        return SubWorkflow.model_validate({"name": name, "type": kind, "iterations": iterations,
                                           "scope": scope,
                                           "depends_on": (depends or {}).get(name, default)})

    return ExecutionGraph.model_validate({
        "task": "Ship CSV export, fix the DST bug,\nthen refactor billing on top of both.",
        "plan_dir": PLAN_DIR,
        "layout": layout,
        "waves": [
            Wave(number=1, workflows=(sub("csv-export", "feature", 15, "`app/reports/`"),
                                      sub("dst-fix", "bugfix", 8, "`app/scheduling/`"))),
            Wave(number=2, workflows=(sub("billing", "refactor", 10, "`app/billing/`",
                                          ("csv-export", "dst-fix")),)),
        ],
        "rationale": "billing reads the exported rows and the fixed schedule, so it waits "
                     "for wave 1.",
    })


def write_folder(root: Path, plan: ExecutionGraph, prompts: dict[str, str] | None = None) -> Path:
    """The plan folder of `plan` under root, each sub-workflow from the corpus (by default
    the prompt of its own name; `prompts` maps a name to another corpus entry)."""
    folder = root / PLAN_DIR
    folder.mkdir(parents=True)
    (folder / "execution-graph.md").write_text(render_execution_graph(plan))
    for number, workflow in plan.entries():
        corpus_file, promise = PROMPTS[(prompts or {}).get(workflow.name, workflow.name)]
        text = (CORPUS / corpus_file).read_text()
        if plan.layout == "nested":
            task = folder / f"wave-{number}" / workflow.name
            task.mkdir(parents=True)
            (task / "prompt.md").write_text(text)
            (task / "promise.txt").write_text(promise + "\n")
            (task / "plan.md").write_text(f"# {workflow.name}\n\nbaseline_commit: abc1234\n")
        else:
            (folder / f"{workflow.name}.md").write_text(text)
            (folder / f"{workflow.name}-promise.txt").write_text(promise + "\n")
    return folder


def expected_result(name: str, wave: int | None, prompt: str,
                    corpus_name: str | None = None) -> WorkflowResult:
    corpus_file, promise = PROMPTS[corpus_name or name]
    report = validate_prompt((CORPUS / corpus_file).read_text(), promise=promise)
    return WorkflowResult(name=name, wave=wave, prompt=prompt, report=report)


NESTED_RESULTS = [
    expected_result("csv-export", 1, "wave-1/csv-export/prompt.md"),
    expected_result("dst-fix", 1, "wave-1/dst-fix/prompt.md"),
    expected_result("billing", 2, "wave-2/billing/prompt.md"),
]


# ---------------------------------------------------------------- the graph in memory


def test_render_then_parse_gives_the_same_graph_and_no_problems() -> None:
    for layout in ("nested", "flat"):
        plan = graph(layout)
        parsed = parse_execution_graph(render_execution_graph(plan))
        assert (parsed.graph, parsed.problems) == (plan, ())
        assert render_execution_graph(parsed.graph) == render_execution_graph(plan)


def test_a_task_and_scope_with_markdown_in_them_survive_the_round_trip() -> None:
    plan = graph().model_copy(update={"task": "Line one\n\n## not a section\n  indented | x"})
    wave = plan.waves[0].model_copy(update={"workflows": (
        plan.waves[0].workflows[0].model_copy(update={"scope": "`a/` | `b/`"}),
        plan.waves[0].workflows[1])})
    plan = plan.model_copy(update={"waves": (wave, plan.waves[1])})
    assert parse_execution_graph(render_execution_graph(plan)).graph == plan


def test_the_rendered_graph_has_the_overview_tables_rationale_and_commands() -> None:
    prefix = f"/finesse:finesse-execute --prompt-file {PLAN_DIR}"
    assert render_execution_graph(graph()) == f"""\
# Execution graph

## Overview

> Ship CSV export, fix the DST bug,
> then refactor billing on top of both.

- **Plan folder**: {PLAN_DIR}
- **Layout**: nested
- **Sub-workflows**: 3
- **Waves**: 2
- **Total estimated iterations**: 33

## Wave 1

| Name | Type | Est. iterations | Scope | Dependencies |
| --- | --- | --- | --- | --- |
| csv-export | feature | 15 | `app/reports/` | none |
| dst-fix | bugfix | 8 | `app/scheduling/` | none |

## Wave 2

| Name | Type | Est. iterations | Scope | Dependencies |
| --- | --- | --- | --- | --- |
| billing | refactor | 10 | `app/billing/` | csv-export, dst-fix |

## Dependency rationale

billing reads the exported rows and the fixed schedule, so it waits for wave 1.

## Commands

Run the waves in order: start a wave when every loop of the wave before it has output its \
promise.

### Wave 1

```
{prefix}/wave-1/csv-export/prompt.md --completion-promise-file \
{PLAN_DIR}/wave-1/csv-export/promise.txt --max-iterations 15
{prefix}/wave-1/dst-fix/prompt.md --completion-promise-file \
{PLAN_DIR}/wave-1/dst-fix/promise.txt --max-iterations 8
```

### Wave 2

```
{prefix}/wave-2/billing/prompt.md --completion-promise-file \
{PLAN_DIR}/wave-2/billing/promise.txt --max-iterations 10
```
"""


def test_a_hand_written_graph_in_looser_markdown_parses_to_the_same_model() -> None:
    plan = graph()
    text = render_execution_graph(plan)
    loose = (text.replace("## Overview", "## OVERVIEW")
             .replace("- **Waves**: 2", "* Waves: 2")
             .replace("| Name | Type | Est. iterations |", "|name|TYPE|Est. Iterations|")
             .replace("| csv-export | feature |", "| `csv-export` | Feature |")
             .replace("| dst-fix | bugfix | 8 | `app/scheduling/` | none |",
                      "| dst-fix | bugfix | 8 | `app/scheduling/` | — ")
             .replace("| csv-export, dst-fix |", "| `csv-export`,`dst-fix` |")
             .replace("## Wave 2", "## Wave 2: billing"))
    assert parse_execution_graph(loose) == parse_execution_graph(text)


@pytest.mark.parametrize(("old", "new", "message"), [
    ("## Overview", "## Summary",
     "no `## Overview` section: start with the overview of the plan"),
    ("> Ship CSV export, fix the DST bug,\n> then refactor billing on top of both.\n", "",
     "line 3: the overview has no task: quote the original task in `> ` lines"),
    ("- **Layout**: nested\n", "",
     "line 3: the overview has no `- **Layout**: ...` field"),
    ("- **Layout**: nested", "- **Layout**: tree",
     "layout: Input should be 'nested' or 'flat'"),
    ("| feature | 15 |", "| feature | fifteen |",
     "line 18: Est. iterations must be a whole number from 1 to 25, not 'fifteen'"),
    ("| feature | 15 |", "| feature | 40 |",
     "line 18: iterations: Input should be less than or equal to 25"),
    ("| csv-export | feature |", "| csv-export | chore |",
     "line 18: type: Input should be 'feature', 'bugfix', 'refactor', 'testing', "
     "'performance' or 'research'"),
    ("| `app/reports/` | none |", "| `app/reports/` |",
     "line 18: expected 5 cells, found 4"),
    ("| Name | Type | Est. iterations | Scope | Dependencies |\n| --- | --- | --- | --- | --- |\n"
     "| csv", "| Name | Type | Iterations left | Scope | Dependencies |\n| --- | --- | --- | --- "
     "| --- |\n| csv",
     "line 16: the columns must be | Name | Type | Est. iterations | Scope | Dependencies |"),
    ("| --- | --- | --- | --- | --- |\n| csv", "| csv",
     "line 17: the header needs a separator row under it: | --- | --- | --- | --- | --- |"),
    ("## Wave 2", "## Wave 3", "waves must be numbered 1, 2, 3... in order, not [1, 3]"),
    ("## Dependency rationale", "## Why",
     "no `## Dependency rationale` section: say why each wave waits for the one before it "
     "(or that none does)"),
])
def test_a_graph_that_cannot_be_read_names_the_line_and_the_fix(
        old: str, new: str, message: str) -> None:
    text = render_execution_graph(graph())
    assert old in text
    with pytest.raises(GraphError) as caught:
        parse_execution_graph(text.replace(old, new, 1))
    assert str(caught.value) == message


def test_counts_and_commands_that_disagree_with_the_tables_are_problems() -> None:
    text = (render_execution_graph(graph())
            .replace("- **Waves**: 2", "- **Waves**: 3")
            .replace("- **Total estimated iterations**: 33\n", "")
            .replace("billing/promise.txt --max-iterations 10",
                     "billing/promise.txt --max-iterations 25"))
    text = "\n".join(line for line in text.splitlines() if "wave-1/dst-fix/prompt.md" not in line)
    text += "\n/finesse:finesse-execute --prompt-file elsewhere.md\n\n### Wave 7\n"
    billing = next(n for n, line in enumerate(text.splitlines(), 1)
                   if "--max-iterations 25" in line)
    parsed = parse_execution_graph(text)
    assert parsed.graph == graph()
    assert parsed.problems == (
        "line 11: the overview says waves 3; the wave tables make it 2",
        "the overview does not give total estimated iterations; the wave tables make it 33",
        "Commands, wave 1: no command for `dst-fix`: /finesse:finesse-execute --prompt-file "
        f"{PLAN_DIR}/wave-1/dst-fix/prompt.md --completion-promise-file "
        f"{PLAN_DIR}/wave-1/dst-fix/promise.txt --max-iterations 8",
        f"line {billing}: the command for `billing` should read: /finesse:finesse-execute "
        f"--prompt-file {PLAN_DIR}/wave-2/billing/prompt.md --completion-promise-file "
        f"{PLAN_DIR}/wave-2/billing/promise.txt --max-iterations 10",
        f"line {billing + 2}: this command runs no sub-workflow of wave 2",
        "Commands: `### Wave 7` is not a wave of the graph",
    )


@pytest.mark.parametrize(("depends", "problem"), [
    ({"csv-export": ("billing",)},
     "`csv-export` (wave 1) depends on `billing` in wave 2, a later wave: a wave may only "
     "depend on earlier waves"),
    ({"dst-fix": ("csv-export",)},
     "`dst-fix` (wave 1) depends on `csv-export` in the same wave: move `dst-fix` to a later "
     "wave"),
    ({"billing": ("csv-export", "pdf-export")},
     "`billing` (wave 2) depends on `pdf-export`, which is not in the graph"),
])
def test_a_dependency_not_on_an_earlier_wave_is_named(
        depends: dict[str, tuple[str, ...]], problem: str) -> None:
    assert check_graph(graph()) == []
    assert check_graph(graph(depends=depends)) == [problem]


def test_a_name_listed_twice_is_a_problem() -> None:
    plan = graph()
    twice = plan.model_copy(update={"waves": (
        plan.waves[0], Wave(number=2, workflows=(*plan.waves[1].workflows,
                                                 plan.waves[0].workflows[1])))})
    assert check_graph(twice) == [
        "`dst-fix` is listed twice (waves 1 and 2): give each sub-workflow its own name"]


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
    (folder / "extra.md").write_text((CORPUS / PROMPTS["billing"][0]).read_text())
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


# ---------------------------------------------------------------- finesse validate DIR


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def folder_json(path: str, results: list[WorkflowResult], errors: list[str]) -> object:
    return {
        "path": path,
        "passed": not errors,
        "workflows": [{"path": f"{path}/{result.prompt}", "passed": result.report.passed,
                       "attributes": [a.model_dump() for a in result.report.attributes]}
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
