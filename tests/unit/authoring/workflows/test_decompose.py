"""A decomposed task's spec: waves from dependencies, shared settings, and seed 000's rules
for sub-workflows (their own scope, no shared paths), each prompt passing on its own."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from finesse.authoring.prompt_check.validate import validate_prompt
from finesse.authoring.render import render_prompt
from finesse.authoring.workflows.decompose import DecomposedSpec
from tests.unit.authoring.workflows.plans import decomposed, spec_data


def test_waves_follow_from_the_dependencies() -> None:
    spec = decomposed()
    assert [[w.name for w in wave] for wave in spec.waves()] == [
        ["auth-endpoints", "todo-store"], ["todo-routes"]]
    assert spec.wave_numbers() == {"auth-endpoints": 1, "todo-store": 1, "todo-routes": 2}


def test_shared_settings_reach_every_sub_workflow_unless_it_sets_its_own() -> None:
    data = spec_data()
    data["workflows"][1]["test_command"] = "npm test -- tests/store"
    spec = DecomposedSpec.model_validate(data)
    assert [(w.test_command, w.git.granularity, w.subagents) for w in spec.workflows] == [
        ("npm test", "per-phase", False), ("npm test -- tests/store", "per-phase", False),
        ("npm test", "per-phase", False)]


def test_every_sub_workflow_prompt_passes_on_its_own() -> None:
    for workflow in decomposed().workflows:
        report = validate_prompt(render_prompt(workflow), promise=workflow.promise)
        assert ([r.key for r in report.attributes if not r.passed], report.passed) == ([], True)


def refusal(change: Any) -> str:
    data = spec_data()
    change(data)
    with pytest.raises(ValidationError) as caught:
        DecomposedSpec.model_validate(data)
    return str(caught.value.errors()[0]["msg"]).removeprefix("Value error, ")


def _set(path: str, value: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if isinstance(target, list) else last] = value
    return change


@pytest.mark.parametrize(("change", "message"), [
    (_set("workflows.2.depends_on.0.name", "billing"),
     "'todo-routes' depends on 'billing', which is not a sub-workflow of this spec"),
    (_set("workflows.0.depends_on", [{"name": "auth-endpoints", "kind": "logical",
                                      "why": "itself"}]),
     "'auth-endpoints' depends on itself"),
    (_set("workflows.0.depends_on", [{"name": "todo-routes", "kind": "logical",
                                      "why": "a circle"}]),
     "the dependencies go round in a circle (auth-endpoints -> todo-routes -> "
     "auth-endpoints); a sub-workflow can only wait for ones that end first"),
    (_set("workflows.1.name", "auth-endpoints"),
     "sub-workflow 'auth-endpoints' is named twice; give each its own name"),
    (_set("workflows.1.scope.in_scope", ["src/store/", "src/auth/tokens.js"]),
     "'auth-endpoints' and 'todo-store' both edit src/auth/tokens.js: give each "
     "sub-workflow its own paths, so no loop builds or rewrites another's files"),
    (_set("workflows.2.phases.0.criteria.0", "`src/auth/middleware.js` passes the token on"),
     "'todo-routes' names src/auth/middleware.js outside its scope (src/routes/, "
     "tests/routes/); a sub-workflow's prompt names only files in its scope"),
    (_set("session", "Build Todo API"), "String should match pattern '^[a-z0-9]+(?:-[a-z0-9]+)*$'"),
    (_set("workflows.0.name", "auth_endpoints"),
     "String should match pattern '^[a-z0-9]+(?:-[a-z0-9]+)*$'"),
    (_set("workflows.2.depends_on.0.kind", "vibes"), "Input should be 'file-based' or 'logical'"),
    (_set("workflows.0.iteration_limit", 30), "Input should be less than or equal to 25"),
    (_set("workflows", [spec_data()["workflows"][0]]),
     "List should have at least 2 items after validation, not 1"),
])
def test_the_decomposition_refuses_what_the_seed_forbids(change: Any, message: str) -> None:
    assert refusal(change) == message
