"""Decomposed plans for the `ralph run --graph` tests, written by `finesse new` into a real
project and committed: each sub-workflow writes `<name>/done.txt`, its plan's phases verify
it, and a dependency is a file-based one on the other's folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from finesse.authoring.new import build_decomposed, session_folder, write_session
from finesse.authoring.workflows.decompose import DecomposedSpec
from tests.helpers.repo import git

PROMISE = "TASK_COMPLETE"


def workflow(name: str, depends_on: Sequence[str] = (), iterations: int = 3) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": name,
        "project": {"name": f"the {name} part of the demo", "task_type": "feature",
                    "summary": f"Write {name}/done.txt.", "codebase_context": "A tiny repo.",
                    "chosen_approach": "Write one file."},
        "phases": [
            {"name": f"Make the {name} folder", "criteria": [f"`{name}/` exists"],
             "verify": f"test -d {name}"},
            {"name": f"Write the {name} file", "criteria": [f"`{name}/done.txt` exists"],
             "verify": f"test -f {name}/done.txt"}],
        "scope": {"in_scope": [f"{name}/"]},
        "iteration_limit": iterations,
    }
    if depends_on:
        spec["depends_on"] = [{"name": other, "kind": "file-based",
                               "why": f"it reads {other}/done.txt"} for other in depends_on]
    return spec


def write_plan(root: Path, session: str, workflows: Sequence[dict[str, Any]],
               commit: bool = True) -> Path:
    """`finesse-plans/<session>/` in `root`, committed; the folder."""
    spec = DecomposedSpec.model_validate({
        "session": session, "task": "Write a file per sub-workflow.",
        "git": {"checkpointing": False, "push": False}, "subagents": False,
        "test_command": "true", "workflows": list(workflows)})
    folder = session_folder(spec, root / "finesse-plans", None)
    write_session(build_decomposed(spec, root, folder))
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"plan {session}")
    return folder
