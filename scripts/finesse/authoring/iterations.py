"""How many iterations a loop should get: the task-workflows table (skills/task-workflows/
SKILL.md shows the same table; a test holds them equal).

The range depends on the task type and the plan's scope, measured by its phases: small (1-2
phases), medium (3-4), large (5 or more). A plan whose estimate is over 25 is not a loop: it
is decomposed into sub-workflows (seed 000, attribute 9).
"""

from __future__ import annotations

from typing import Literal

TaskType = Literal["feature", "bugfix", "refactor", "testing", "performance", "research"]
ScopeSize = Literal["small", "medium", "large"]
MAX_ITERATIONS = 25  # attribute 9's cap, for a loop and for each sub-workflow

TABLE: dict[TaskType, dict[ScopeSize, tuple[int, int]]] = {
    "feature": {"small": (5, 8), "medium": (8, 15), "large": (15, 25)},
    "bugfix": {"small": (3, 6), "medium": (6, 10), "large": (10, 15)},
    "refactor": {"small": (5, 8), "medium": (8, 12), "large": (12, 20)},
    "testing": {"small": (3, 6), "medium": (6, 10), "large": (10, 15)},
    "performance": {"small": (5, 10), "medium": (10, 15), "large": (15, 25)},
    "research": {"small": (3, 5), "medium": (5, 8), "large": (8, 12)},
}


def scope_size(phases: int) -> ScopeSize:
    return "small" if phases <= 2 else "medium" if phases <= 4 else "large"


def recommended(task_type: TaskType, phases: int) -> tuple[int, int]:
    """The table's range for this task type and number of phases."""
    return TABLE[task_type][scope_size(phases)]


def reasoning(task_type: TaskType, phases: int, limit: int, why: str | None) -> str:
    """`Recommended --max-iterations` with its reasoning, as the plan file states it."""
    low, high = recommended(task_type, phases)
    text = (f"{limit}: the task-workflows table gives {low}-{high} iterations for a "
            f"{scope_size(phases)} {task_type} ({phases} phases).")
    return f"{text} {why.strip()}" if why else text


def outside_range(task_type: TaskType, phases: int, limit: int) -> str | None:
    """A warning when the limit is outside the table's range; None when inside it."""
    low, high = recommended(task_type, phases)
    if low <= limit <= high:
        return None
    side = "below" if limit < low else "above"
    return (f"the iteration limit ({limit}) is {side} the task-workflows range for a "
            f"{scope_size(phases)} {task_type} ({low}-{high}): say why in "
            "iteration_reasoning")
