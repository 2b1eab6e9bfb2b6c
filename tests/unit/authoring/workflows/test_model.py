"""The graph's own checks: dependencies and names."""
from __future__ import annotations

import pytest

from finesse.authoring.workflows.model import Wave, check_graph
from tests.unit.authoring.workflows.plans import (  # noqa: F401
    CORPUS,
    NESTED_RESULTS,
    PLAN_DIR,
    PROMPTS,
    expected_result,
    graph,
    write_folder,
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


