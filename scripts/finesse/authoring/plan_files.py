"""The files of one plan, and nothing else: where `finesse new` writes them, where
`finesse validate`, `finesse retro` and `/finesse:finesse-execute` find them.

Two layouts, never mixed in one folder:

- flat, one plan: `finesse-plans/<name>.md` (the prompt only), `<name>-promise.txt`,
  `<name>-plan.md`, and later `<name>-retro.md`;
- nested, one sub-workflow of a decomposed task:
  `finesse-plans/<session>/wave-<N>/<task>/prompt.md`, `promise.txt`, `plan.md`, and later
  `retro.md`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from finesse.errors import UsageError

NESTED_PROMPT = "prompt.md"
NESTED_PROMISE = "promise.txt"
NESTED_PLAN = "plan.md"
NESTED_RETRO = "retro.md"
PLAN_SUFFIX = "-plan.md"
PROMISE_SUFFIX = "-promise.txt"
RETRO_SUFFIX = "-retro.md"


@dataclass(frozen=True)
class PlanFiles:
    name: str  # the plan's name; a sub-workflow's folder name
    prompt: Path
    promise: Path
    plan: Path
    retro: Path

    @classmethod
    def flat(cls, folder: Path, name: str) -> PlanFiles:
        return cls(name, folder / f"{name}.md", folder / f"{name}{PROMISE_SUFFIX}",
                   folder / f"{name}{PLAN_SUFFIX}", folder / f"{name}{RETRO_SUFFIX}")

    @classmethod
    def nested(cls, folder: Path) -> PlanFiles:
        return cls(folder.name, folder / NESTED_PROMPT, folder / NESTED_PROMISE,
                   folder / NESTED_PLAN, folder / NESTED_RETRO)

    @classmethod
    def of_plan(cls, plan: Path) -> PlanFiles:
        """The file set a plan file belongs to, from the plan file's name."""
        if plan.name == NESTED_PLAN:
            return cls.nested(plan.parent)
        if plan.name.endswith(PLAN_SUFFIX) and len(plan.name) > len(PLAN_SUFFIX):
            return cls.flat(plan.parent, plan.name.removesuffix(PLAN_SUFFIX))
        raise UsageError(f"{plan}: a plan file is named <name>-plan.md (or plan.md in a "
                         "sub-workflow folder), e.g. finesse-plans/csv-export-plan.md")

    def all(self) -> tuple[Path, Path, Path]:
        """The three files `finesse new` writes: prompt, promise, plan."""
        return (self.prompt, self.promise, self.plan)
