"""The plan file: seed 000's metadata fields, the task-workflows reasoning, and the
validation agents' verdicts beside `finesse validate`'s."""

from __future__ import annotations

import re

from finesse.authoring.budget import MeasuredPhase, estimate
from finesse.authoring.plan import plan_warnings, render_files, unresolved_reviews
from finesse.authoring.spec import Spec
from tests.unit.authoring.test_render import base_data

REVIEWS = [
    {"agent": "finesse-criteria-review", "round": 1,
     "verdicts": {1: "pass", 2: "pass", 5: "fail", 9: "pass", 10: "pass"},
     "notes": "Phase 2's Verify runs the whole suite | name the endpoint test."},
    {"agent": "finesse-criteria-review", "round": 2,
     "verdicts": {1: "pass", 2: "pass", 5: "pass", 9: "pass", 10: "pass"}},
    {"agent": "finesse-scope-review", "round": 2,
     "verdicts": {3: "pass", 4: "pass", 6: "pass", 7: "fail", 8: "fail"},
     "notes": "migrations/ is named but tests/fixtures/ is not"},
]


def spec(**changes: object) -> Spec:
    return Spec.model_validate({**base_data(), **changes})


def rendered_plan(plan_spec: Spec) -> str:
    budget = estimate([MeasuredPhase(type="implementation")] * 3, plan_spec.iteration_limit)
    return render_files(plan_spec, prompt_path="finesse-plans/x.md",
                        promise_path="finesse-plans/x-promise.txt", budget=budget,
                        baseline_commit="abc1234").plan


def test_the_plan_has_seed_000s_fields_in_order() -> None:
    plan = rendered_plan(spec())
    assert re.findall(r"^## (.+)$", plan, re.MULTILINE) == [
        "Task Type", "Summary", "Codebase Context", "Chosen Approach",
        "Recommended --max-iterations", "Context Budget Estimate", "Validation Results",
        "Unresolved Warnings"]
    for field in ("baseline_commit: \"abc1234\"", "git_config: ", "subagent_enabled: true"):
        assert field in plan


def test_each_agent_verdict_is_in_validation_results_and_what_is_left_is_unresolved() -> None:
    reviewed = spec(reviews=REVIEWS)
    plan = rendered_plan(reviewed)
    results = plan.split("## Validation Results\n\n")[1].split("\n## ")[0]
    assert results.split("### Validation agents\n\n")[1] == (
        "Refinement budget: 2 rounds.\n\n"
        "| Agent | Round | Verdicts | Notes |\n| --- | --- | --- | --- |\n"
        "| finesse-criteria-review | 1 | 1 PASS, 2 PASS, 5 FAIL, 9 PASS, 10 PASS | Phase 2's "
        "Verify runs the whole suite \\| name the endpoint test. |\n"
        "| finesse-criteria-review | 2 | 1 PASS, 2 PASS, 5 PASS, 9 PASS, 10 PASS | no notes |\n"
        "| finesse-scope-review | 2 | 3 PASS, 4 PASS, 6 PASS, 7 FAIL, 8 FAIL | migrations/ is "
        "named but tests/fixtures/ is not |\n")
    assert "### finesse validate\n\nAll 10 attributes pass." in results
    assert unresolved_reviews(reviewed) == [
        "finesse-scope-review (round 2 of 2) still fails attributes 7, 8: migrations/ is "
        "named but tests/fixtures/ is not"]
    assert ("- finesse-scope-review (round 2 of 2) still fails attributes 7, 8: migrations/ "
            "is named but tests/fixtures/ is not\n") in plan.split("## Unresolved Warnings")[1]


def test_recommended_max_iterations_cites_the_table_and_warns_outside_it() -> None:
    plan = rendered_plan(spec())
    assert ("## Recommended --max-iterations\n\n12: the task-workflows table gives 8-15 "
            "iterations for a medium feature (3 phases). Streaming needs its own phase") in plan
    budget = estimate([MeasuredPhase(type="implementation")] * 3, 20)
    assert plan_warnings(spec(iteration_limit=20, iteration_reasoning=None), budget,
                         is_repository=True)[-1] == (
        "the iteration limit (20) is above the task-workflows range for a medium feature "
        "(8-15): say why in iteration_reasoning")
    assert plan_warnings(spec(iteration_limit=20), budget, is_repository=True) == []


def test_the_cost_disclaimer_is_the_seeds_template() -> None:
    plan = rendered_plan(spec())
    assert ("Cost estimates are order-of-magnitude approximations based on a 200k token "
            "context window. Actual costs vary with model choice (Sonnet vs Opus), caching "
            "behavior, codebase growth during execution, and agent reasoning patterns. Treat "
            "these as directional, not precise.\n") in plan

