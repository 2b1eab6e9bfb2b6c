"""The execution graph of a decomposed plan: waves of sub-workflows, each a loop of its own.

A wave runs after every loop of the wave before it has output its promise; a sub-workflow
may depend only on sub-workflows of earlier waves (`check_graph`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field, field_validator, model_validator

from finesse.authoring.plan_files import NESTED_PROMISE, NESTED_PROMPT, PROMISE_SUFFIX
from finesse.errors import FinesseError
from finesse.support.markdown import heading
from finesse.support.strict import StrictModel

TaskType = Literal["feature", "bugfix", "refactor", "testing", "performance", "research"]
Layout = Literal["nested", "flat"]
GRAPH_FILE = "execution-graph.md"
MAX_ITERATIONS = 25  # attribute 9's cap: each sub-workflow is a loop of its own
EXECUTE = "/finesse:finesse-execute"
NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"


class GraphError(FinesseError):
    """execution-graph.md cannot be read as a graph; the message names the line."""


class SubWorkflow(StrictModel):
    name: str = Field(pattern=rf"^{NAME}$")
    type: TaskType
    iterations: int = Field(ge=1, le=MAX_ITERATIONS)
    scope: str = Field(min_length=1, pattern=r"^[^\n]*$")
    depends_on: tuple[str, ...] = ()


class Wave(StrictModel):
    number: int = Field(ge=1)
    workflows: tuple[SubWorkflow, ...] = Field(min_length=1)


class ExecutionGraph(StrictModel):
    task: str = Field(min_length=1)
    # Relative to the project root, where the commands run; no blanks or quotes to escape.
    plan_dir: str = Field(pattern=r"^[^/\s'\"\\`][^\s'\"\\`]*$")
    layout: Layout = "nested"
    waves: tuple[Wave, ...] = Field(min_length=1)
    rationale: str = Field(min_length=1)

    @field_validator("task", "rationale", mode="before")
    @classmethod
    def _strip(cls, value: object) -> object:
        return value.strip() if isinstance(value, str) else value

    @field_validator("rationale")
    @classmethod
    def _no_sections(cls, value: str) -> str:
        if any((found := heading(line)) and found[0] <= 2 for line in value.splitlines()):
            raise ValueError("the rationale may not hold `#` or `##` headings")
        return value

    @model_validator(mode="after")
    def _waves_in_order(self) -> ExecutionGraph:
        numbers = [wave.number for wave in self.waves]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(f"waves must be numbered 1, 2, 3... in order, not {numbers}")
        return self

    def entries(self) -> Iterator[tuple[int, SubWorkflow]]:
        for wave in self.waves:
            for workflow in wave.workflows:
                yield wave.number, workflow

    @property
    def total_iterations(self) -> int:
        return sum(workflow.iterations for _, workflow in self.entries())

    def files(self, wave: int, name: str) -> tuple[str, str]:
        """The prompt and promise files of a sub-workflow, as the commands name them."""
        base = PurePosixPath(self.plan_dir)
        if self.layout == "nested":
            folder = base / f"wave-{wave}" / name
            return str(folder / NESTED_PROMPT), str(folder / NESTED_PROMISE)
        return str(base / f"{name}.md"), str(base / f"{name}{PROMISE_SUFFIX}")

    def command(self, wave: int, workflow: SubWorkflow) -> str:
        prompt, promise = self.files(wave, workflow.name)
        return (f"{EXECUTE} --prompt-file {prompt} --completion-promise-file {promise} "
                f"--max-iterations {workflow.iterations}")


@dataclass(frozen=True)
class ParsedGraph:
    graph: ExecutionGraph
    problems: tuple[str, ...]  # counts and commands that disagree with the wave tables


def check_graph(graph: ExecutionGraph) -> list[str]:
    """Names listed twice, and dependencies that are not on an earlier wave."""
    problems: list[str] = []
    waves: dict[str, int] = {}
    for number, workflow in graph.entries():
        if workflow.name in waves:
            problems.append(f"`{workflow.name}` is listed twice (waves {waves[workflow.name]} "
                            f"and {number}): give each sub-workflow its own name")
        waves.setdefault(workflow.name, number)
    for number, workflow in graph.entries():
        for needed in workflow.depends_on:
            where = f"`{workflow.name}` (wave {number}) depends on `{needed}`"
            if needed not in waves:
                problems.append(f"{where}, which is not in the graph")
            elif waves[needed] == number:
                problems.append(f"{where} in the same wave: move `{workflow.name}` to a "
                                "later wave")
            elif waves[needed] > number:
                problems.append(f"{where} in wave {waves[needed]}, a later wave: a wave may "
                                "only depend on earlier waves")
    return problems

