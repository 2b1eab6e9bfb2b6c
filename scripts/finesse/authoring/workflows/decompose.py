"""A decomposed task's spec: sub-workflows, each a plan spec of its own, run in waves.

    session: build-todo-api-with-auth         kebab-case, from the task description
    task: Build a todo API with auth.          the original task, one line
    git: {...}                                 shared by every sub-workflow unless it says
    subagents: false                           otherwise (also test_command, guardrails,
    workflows:                                 stuck_threshold, refinement_budget)
      - name: auth-endpoints                   kebab-case; the rest is a plan spec
        project: {...}
        phases: [...]
        scope: {...}
        iteration_limit: 12
      - name: todo-crud
        depends_on:
          - name: auth-endpoints
            kind: logical                      file-based (it reads a file the other writes)
            why: the todo routes sit behind the auth middleware        or logical
        ...

Waves follow from the dependencies: a sub-workflow runs in the wave after the last one it
depends on. Seed 000's per-sub-workflow rules are checked here: each prompt is
self-contained and names only files in its own scope (its criteria and phase names), and
no two sub-workflows edit the same paths, so a wave's loops never write the same file and
a later wave never builds what an earlier one owns: it finds it done, as existing state.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from finesse.authoring.prompt_check.rules.scoped_context import paths_in
from finesse.authoring.render import criterion_text
from finesse.authoring.spec import GitConfig, Spec
from finesse.authoring.spec_fields import Command, PromptText, Prose
from finesse.authoring.workflows.model import (
    KEBAB,
    DependencyKind,
    DependencyReason,
    ExecutionGraph,
    SubWorkflow,
    Wave,
)
from finesse.support.strict import StrictModel

KebabName = Annotated[str, Field(pattern=rf"^{KEBAB}$", max_length=60)]
SHARED = ("git", "subagents", "test_command", "guardrails", "stuck_threshold",
          "refinement_budget")


class Dependency(StrictModel):
    name: KebabName  # the sub-workflow waited for (not `on`: YAML reads that as true)
    kind: DependencyKind
    why: PromptText


class SubWorkflowSpec(Spec):
    name: KebabName
    depends_on: list[Dependency] = Field(default_factory=list)


class DecomposedSpec(StrictModel):
    session: KebabName
    task: PromptText
    workflows: list[SubWorkflowSpec] = Field(min_length=2, max_length=12)
    # Shared by every sub-workflow that does not set its own.
    git: GitConfig | None = None
    subagents: bool | None = None
    test_command: Command | None = None
    guardrails: list[PromptText] | None = None
    stuck_threshold: int | None = None
    refinement_budget: int | None = None
    warnings: list[Prose] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _share(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("workflows"), list):
            return data
        shared = {key: data[key] for key in SHARED if data.get(key) is not None}
        data = dict(data)
        data["workflows"] = [{**shared, **item} if isinstance(item, dict) else item
                             for item in data["workflows"]]
        return data

    @model_validator(mode="after")
    def _consistent(self) -> DecomposedSpec:
        names = [workflow.name for workflow in self.workflows]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"sub-workflow {twice[0]!r} is named twice; give each its own name")
        for workflow in self.workflows:
            for dependency in workflow.depends_on:
                if dependency.name not in names:
                    raise ValueError(f"{workflow.name!r} depends on {dependency.name!r}, which "
                                     "is not a sub-workflow of this spec")
                if dependency.name == workflow.name:
                    raise ValueError(f"{workflow.name!r} depends on itself")
        self.wave_numbers()  # refuses a cycle
        for problem in (*_scope_problems(self.workflows), *_overlaps(self.workflows)):
            raise ValueError(problem)
        return self

    def wave_numbers(self) -> dict[str, int]:
        """Each sub-workflow's wave: one after the latest wave it depends on."""
        by_name = {workflow.name: workflow for workflow in self.workflows}
        waves: dict[str, int] = {}

        def wave(name: str, trail: tuple[str, ...]) -> int:
            if name in trail:
                cycle = " -> ".join((*trail[trail.index(name):], name))
                raise ValueError(f"the dependencies go round in a circle ({cycle}); a "
                                 "sub-workflow can only wait for ones that end first")
            if name not in waves:
                needs = [d.name for d in by_name[name].depends_on]
                waves[name] = 1 + max((wave(on, (*trail, name)) for on in needs), default=0)
            return waves[name]

        for name in by_name:
            wave(name, ())
        return waves

    def waves(self) -> list[list[SubWorkflowSpec]]:
        numbers = self.wave_numbers()
        count = max(numbers.values())
        return [[w for w in self.workflows if numbers[w.name] == n] for n in range(1, count + 1)]

    def graph(self, plan_dir: str) -> ExecutionGraph:
        """The execution graph of this decomposition, its commands naming `plan_dir`."""
        waves = [Wave(number=number, workflows=tuple(
            SubWorkflow(name=w.name, type=w.project.task_type, iterations=w.iteration_limit,
                        scope=", ".join(w.scope.in_scope),
                        depends_on=tuple(d.name for d in w.depends_on)) for w in workflows))
            for number, workflows in enumerate(self.waves(), 1)]
        reasons = [DependencyReason(workflow=w.name, on=d.name, kind=d.kind,
                                    why=d.why if d.why.endswith(".") else d.why + ".")
                   for workflows in self.waves() for w in workflows for d in w.depends_on]
        return ExecutionGraph(task=self.task, plan_dir=plan_dir, waves=tuple(waves),
                              reasons=tuple(reasons))


def _root(path: str) -> str:
    """The literal part of a scope path: `src/app/` -> `src/app`, `docs/*.md` -> `docs`,
    `**/*.sql` -> `` (anywhere)."""
    path = path.removeprefix("./")
    cut = min((path.find(char) for char in "*?[" if char in path), default=len(path))
    literal = path[:cut]
    if cut < len(path):  # a glob: the folder it sits in
        literal = literal.rsplit("/", 1)[0] if "/" in literal else ""
    return literal.rstrip("/")


def _inside(path: str, scope: str) -> bool:
    root = _root(scope)
    path = path.removeprefix("./").rstrip("/")
    return not root or path == root or path.startswith(root + "/")


def _scope_problems(workflows: list[SubWorkflowSpec]) -> list[str]:
    """Paths a sub-workflow's phases name outside its own scope."""
    problems = []
    for workflow in workflows:
        texts = [phase.name for phase in workflow.phases]
        texts += [criterion_text(c) for phase in workflow.phases for c in phase.criteria]
        for text in texts:
            # Scope paths are relative to the project root; "/api/todos" is a route.
            for path in (p for p in paths_in(text) if not p.startswith("/")):
                if not any(_inside(path, scope) for scope in workflow.scope.in_scope):
                    problems.append(f"{workflow.name!r} names {path} outside its scope "
                                    f"({', '.join(workflow.scope.in_scope)}); a sub-workflow's "
                                    "prompt names only files in its scope")
    return problems


def _overlaps(workflows: list[SubWorkflowSpec]) -> list[str]:
    """Two sub-workflows that may edit the same paths."""
    problems = []
    for index, first in enumerate(workflows):
        for second in workflows[index + 1:]:
            for a in first.scope.in_scope:
                for b in second.scope.in_scope:
                    if _inside(a, b) or _inside(b, a):
                        shared = a if _inside(a, b) else b
                        problems.append(
                            f"{first.name!r} and {second.name!r} both edit {shared}: give "
                            "each sub-workflow its own paths, so no loop builds or rewrites "
                            "another's files")
    return problems
