"""A decomposed task for the workflow tests: the todo API spec, its graph, its folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from finesse.authoring.new import build_decomposed, session_folder, write_session
from finesse.authoring.workflows.decompose import DecomposedSpec
from finesse.authoring.workflows.model import ExecutionGraph

SPEC = Path(__file__).parents[1] / "specs" / "todo-api.yaml"
SESSION = "build-todo-api-with-auth"
PLAN_DIR = f"finesse-plans/{SESSION}"


def spec_data() -> dict[str, Any]:
    data = yaml.safe_load(SPEC.read_text())
    assert isinstance(data, dict)
    return data


def decomposed(**changes: Any) -> DecomposedSpec:
    return DecomposedSpec.model_validate({**spec_data(), **changes})


def graph() -> ExecutionGraph:
    """auth-endpoints and todo-store in wave 1, todo-routes in wave 2 after both."""
    return decomposed().graph(PLAN_DIR)


def write_folder(root: Path, spec: DecomposedSpec | None = None) -> Path:
    """The session folder `finesse new` writes for the spec, under root/finesse-plans/."""
    spec = spec or decomposed()
    folder = session_folder(spec, root / "finesse-plans", None)
    write_session(build_decomposed(spec, root, folder))
    return folder
