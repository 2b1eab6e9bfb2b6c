"""The graph's own checks: waves in order, dependencies on earlier waves, and a reason for
each dependency."""

from __future__ import annotations

import shlex

import pytest
from pydantic import ValidationError

from finesse.authoring.workflows.model import (
    DependencyReason,
    ExecutionGraph,
    Wave,
    check_graph,
    wave_heading,
)
from tests.unit.authoring.workflows.plans import PLAN_DIR, graph


def test_the_example_graph_has_no_problem() -> None:
    plan = graph()
    assert check_graph(plan) == []
    assert ([w.name for _, w in plan.entries()], plan.total_iterations) == (
        ["auth-endpoints", "todo-store", "todo-routes"], 22)
    assert plan.files(2, "todo-routes") == (
        f"{PLAN_DIR}/wave-2/todo-routes/prompt.md", f"{PLAN_DIR}/wave-2/todo-routes/promise.txt")


def test_wave_headings_are_the_seeds() -> None:
    assert [wave_heading(n) for n in (1, 2, 3)] == [
        "Wave 1 (run in parallel)", "Wave 2 (run after Wave 1 completes)",
        "Wave 3 (run after Wave 2 completes)"]


def test_a_dependency_in_the_same_or_a_later_wave_is_named() -> None:
    plan = graph()
    auth, store = plan.waves[0].workflows
    [routes] = plan.waves[1].workflows
    wrong = plan.model_copy(update={"waves": (Wave(number=1, workflows=(auth, routes)),
                                              Wave(number=2, workflows=(store,)))})
    assert check_graph(wrong) == [
        "`todo-routes` (wave 1) depends on `auth-endpoints` in the same wave: move "
        "`todo-routes` to a later wave",
        "`todo-routes` (wave 1) depends on `todo-store` in wave 2, a later wave: a wave may "
        "only depend on earlier waves",
    ]


def test_a_dependency_without_a_reason_and_a_reason_without_a_dependency() -> None:
    plan = graph()
    plan = plan.model_copy(update={"reasons": (
        plan.reasons[0], DependencyReason(workflow="todo-store", on="auth-endpoints",
                                          kind="logical", why="no such dependency"))})
    assert check_graph(plan) == [
        "Dependency Rationale: no reason for `todo-routes` depending on `todo-store`: say "
        "whether it is file-based or logical, and why",
        "Dependency Rationale: `todo-store` does not depend on `auth-endpoints` in the wave "
        "tables",
    ]


def test_a_name_listed_twice_is_a_problem() -> None:
    plan = graph()
    twice = plan.model_copy(update={"waves": (
        plan.waves[0], Wave(number=2, workflows=(*plan.waves[1].workflows,
                                                 plan.waves[0].workflows[1])))})
    assert check_graph(twice)[0] == (
        "`todo-store` is listed twice (waves 1 and 2): give each sub-workflow its own name")


def test_waves_are_numbered_in_order() -> None:
    plan = graph()
    with pytest.raises(ValidationError, match=r"waves must be numbered 1, 2, 3\.\.\. in "
                                              r"order, not \[1, 3\]"):
        ExecutionGraph.model_validate({**plan.model_dump(), "waves": [
            plan.waves[0].model_dump(), {**plan.waves[1].model_dump(), "number": 3}]})


def test_the_execute_line_quotes_a_plan_folder_with_a_space_as_new_does() -> None:
    plan = graph().model_copy(update={"plan_dir": "my plans/build"})
    [routes] = plan.waves[1].workflows
    line = plan.command(2, routes)
    assert line.startswith("/finesse:finesse-execute --prompt-file "
                           "'my plans/build/wave-2/todo-routes/prompt.md' "
                           "--completion-promise-file "
                           "'my plans/build/wave-2/todo-routes/promise.txt'")
    assert shlex.split(line)[2] == "my plans/build/wave-2/todo-routes/prompt.md"
