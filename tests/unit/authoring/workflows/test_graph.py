"""execution-graph.md written and read back."""
from __future__ import annotations

import pytest

from finesse.authoring.workflows.graph import parse_execution_graph, render_execution_graph
from finesse.authoring.workflows.model import GraphError
from tests.unit.authoring.workflows.plans import (  # noqa: F401
    CORPUS,
    NESTED_RESULTS,
    PLAN_DIR,
    PROMPTS,
    expected_result,
    graph,
    write_folder,
)

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
    ("## Wave 2", "## Wave 3", "the graph: waves must be numbered 1, 2, 3... in order, not [1, 3]"),
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


