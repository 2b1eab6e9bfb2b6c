"""execution-graph.md, seed 000's format: written (a golden file pins it) and read back,
also when written by hand."""

from __future__ import annotations

import pytest

from finesse.authoring.workflows.graph import parse_execution_graph, render_execution_graph
from finesse.authoring.workflows.model import GraphError
from tests.unit.authoring.test_render import check_golden
from tests.unit.authoring.workflows.plans import PLAN_DIR, SESSION, graph


def rendered() -> str:
    return render_execution_graph(graph(), SESSION)


def test_the_graph_is_the_seeds_format() -> None:
    text = rendered()
    check_golden("execution-graph.md", text)
    assert [line for line in text.splitlines() if line.startswith("#")] == [
        f"# Execution Graph: {SESSION}", "## Overview", "## Wave Structure", "### Wave 1",
        "### Wave 2", "## Dependency Rationale", "## Wave 1 (run in parallel)",
        "## Wave 2 (run after Wave 1 completes)"]
    assert "| Name | Type | Est. Iterations | Scope | Dependencies |" in text
    assert (f"/finesse:finesse-execute --prompt-file {PLAN_DIR}/wave-2/todo-routes/prompt.md "
            f"--completion-promise-file {PLAN_DIR}/wave-2/todo-routes/promise.txt "
            "--max-iterations 8\n") in text


def test_render_then_parse_gives_the_same_graph_and_no_problems() -> None:
    parsed = parse_execution_graph(rendered())
    assert (parsed.graph, parsed.problems) == (graph(), ())
    assert render_execution_graph(parsed.graph, SESSION) == rendered()


def test_a_scope_with_a_pipe_survives_the_round_trip() -> None:
    plan = graph()
    wave = plan.waves[0].model_copy(update={"workflows": (
        plan.waves[0].workflows[0].model_copy(update={"scope": "`a/` | `b/`"}),
        plan.waves[0].workflows[1])})
    plan = plan.model_copy(update={"waves": (wave, plan.waves[1])})
    assert parse_execution_graph(render_execution_graph(plan, SESSION)).graph == plan


def test_a_hand_written_graph_in_looser_markdown_parses_to_the_same_graph() -> None:
    loose = (rendered()
             .replace("## Overview", "## OVERVIEW")
             .replace("- **Original task**:", "* Original task:")
             .replace("### Wave 2", "### wave 2")
             .replace("| --- | --- | --- | --- | --- |", "|:--|:--:|--:|---|---|")
             .replace("## Wave 1 (run in parallel)\n\n", "## Wave 1 (run in parallel)\n\n```\n")
             .replace("--max-iterations 6\n", "--max-iterations 6\n```\n")
             .replace(" --completion-promise-file", "  --completion-promise-file"))
    parsed = parse_execution_graph(loose)
    assert parsed.graph == graph()
    assert parsed.problems == ()


@pytest.mark.parametrize(("old", "new", "message"), [
    ("## Overview", "## Summary", "no `## Overview` section: give the original task and the "
                                  "counts"),
    ("- **Original task**", "- **Task**", "line 3: the overview has no `- **Original task**: "
                                          "...` field"),
    ("## Wave Structure", "## Waves", "no `## Wave Structure` section: give a `### Wave N` "
                                      "table per wave"),
    ("| todo-store | feature | 6 |", "| todo-store | chore | 6 |",
     "line 17: type: Input should be 'feature', 'bugfix', 'refactor', 'testing', 'performance' "
     "or 'research'"),
    ("| todo-store | feature | 6 |", "| todo-store | feature | six |",
     "line 17: Est. Iterations must be a whole number from 1 to 25, not 'six'"),
    ("| todo-store | feature | 6 |", "| todo-store | feature | 30 |",
     "line 17: iterations: Input should be less than or equal to 25"),
    ("| Name | Type | Est. Iterations |", "| Name | Kind | Est. Iterations |",
     "line 14: the columns must be | Name | Type | Est. Iterations | Scope | Dependencies |"),
    ("### Wave 2", "### Wave 3", "the graph: waves must be numbered 1, 2, 3... in order, not "
                                 "[1, 3]"),
    ("## Dependency Rationale", "## Why", "no `## Dependency Rationale` section: give why "
                                          "each dependency is file-based or logical"),
    ("(logical)", "(social)", "reasons.0.kind: Input should be 'file-based' or 'logical'"),
    ("- `todo-routes` depends on `auth-endpoints`", "- todo-routes needs auth-endpoints",
     "line 27: write a dependency as '- `<name>` depends on `<other>` (file-based|logical): "
     "<why>'"),
])
def test_a_graph_that_cannot_be_read_names_the_line_and_the_fix(
        old: str, new: str, message: str) -> None:
    text = rendered()
    assert old in text
    with pytest.raises(GraphError) as caught:
        parse_execution_graph(text.replace(old, new))
    assert str(caught.value) == message


def test_counts_and_commands_that_disagree_with_the_tables_are_problems() -> None:
    text = (rendered()
            .replace("- **Waves**: 2", "- **Waves**: 3")
            .replace("--max-iterations 6", "--max-iterations 9")
            .replace("## Wave 2 (run after Wave 1 completes)", "## Wave 2 (run in parallel)"))
    text = text.replace(
        f"\n/finesse:finesse-execute --prompt-file {PLAN_DIR}/wave-2/todo-routes/prompt.md",
        f"\n/finesse:finesse-execute --prompt-file {PLAN_DIR}/wave-2/other/prompt.md")
    assert parse_execution_graph(text).problems == (
        "line 7: the overview says waves 3; the wave tables make it 2",
        f"line 34: the command for `todo-store` should read: /finesse:finesse-execute "
        f"--prompt-file {PLAN_DIR}/wave-1/todo-store/prompt.md --completion-promise-file "
        f"{PLAN_DIR}/wave-1/todo-store/promise.txt --max-iterations 6",
        "line 36: the heading should read `## Wave 2 (run after Wave 1 completes)`",
        "line 38: this command runs no sub-workflow of wave 2",
        f"Wave 2 (run after Wave 1 completes): no command for `todo-routes`: "
        f"/finesse:finesse-execute --prompt-file {PLAN_DIR}/wave-2/todo-routes/prompt.md "
        f"--completion-promise-file {PLAN_DIR}/wave-2/todo-routes/promise.txt "
        "--max-iterations 8",
    )


def test_a_graph_without_commands_is_refused() -> None:
    text = rendered().split("## Wave 1 (run in parallel)")[0]
    with pytest.raises(GraphError, match=r"^no `## Wave 1 \(run in parallel\)` section with "
                                         r"the /finesse:finesse-execute command"):
        parse_execution_graph(text)
