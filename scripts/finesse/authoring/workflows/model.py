"""The execution graph of a decomposed task: waves of sub-workflows, each a loop of its own.

A wave starts when every loop of the wave before it has output its promise; a sub-workflow
may depend only on sub-workflows of earlier waves (`check_graph`). Every sub-workflow lives
in the nested layout of seed 000: `<plan_dir>/wave-<N>/<name>/prompt.md`, `promise.txt`,
`plan.md`, where `plan_dir` is `finesse-plans/<session>` as the commands name it from the
project root.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field, field_validator, model_validator

from finesse.authoring.iterations import MAX_ITERATIONS, TaskType
from finesse.authoring.plan_files import NESTED_PROMISE, NESTED_PROMPT
from finesse.authoring.workflows.names import wave_folder
from finesse.errors import FinesseError
from finesse.support.strict import StrictModel

DependencyKind = Literal["file-based", "logical"]
GRAPH_FILE = "execution-graph.md"
EXECUTE = "/finesse:finesse-execute"
KEBAB = r"[a-z0-9]+(?:-[a-z0-9]+)*"


class GraphError(FinesseError):
    """execution-graph.md cannot be read as a graph; the message names the line."""


class SubWorkflow(StrictModel):
    name: str = Field(pattern=rf"^{KEBAB}$")
    type: TaskType
    iterations: int = Field(ge=1, le=MAX_ITERATIONS)
    scope: str = Field(min_length=1, pattern=r"^[^\n]*$")
    depends_on: tuple[str, ...] = ()


class Wave(StrictModel):
    number: int = Field(ge=1)
    workflows: tuple[SubWorkflow, ...] = Field(min_length=1)


class DependencyReason(StrictModel):
    """Why `workflow` waits for `on`: it reads a file `on` writes, or needs its behaviour."""

    workflow: str
    on: str
    kind: DependencyKind
    why: str = Field(min_length=1, pattern=r"^[^\n]*$")


class ExecutionGraph(StrictModel):
    task: str = Field(min_length=1, pattern=r"^[^\n]*$")  # the original task, one line
    # Relative to the project root, where the commands run; no blanks or quotes to escape.
    plan_dir: str = Field(pattern=r"^[^/\s'\"\\`][^\s'\"\\`]*$")
    waves: tuple[Wave, ...] = Field(min_length=1)
    reasons: tuple[DependencyReason, ...] = ()

    @field_validator("task", mode="before")
    @classmethod
    def _one_line(cls, value: object) -> object:
        return " ".join(value.split()) if isinstance(value, str) else value

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

    def folder(self, wave: int, name: str) -> str:
        """A sub-workflow's folder, as the commands name it."""
        return str(PurePosixPath(self.plan_dir) / wave_folder(wave) / name)

    def files(self, wave: int, name: str) -> tuple[str, str]:
        """The prompt and promise files of a sub-workflow, as the commands name them."""
        folder = PurePosixPath(self.folder(wave, name))
        return str(folder / NESTED_PROMPT), str(folder / NESTED_PROMISE)

    def command(self, wave: int, workflow: SubWorkflow) -> str:
        prompt, promise = self.files(wave, workflow.name)
        return execute_line(prompt, promise, workflow.iterations)


def execute_line(prompt: str, promise: str, iterations: int) -> str:
    """The `/finesse:finesse-execute` line that runs a plan's prompt in Claude Code; the
    paths quoted as the command's own argument parser (shlex) reads them."""
    return (f"{EXECUTE} --prompt-file {shlex.quote(prompt)} --completion-promise-file "
            f"{shlex.quote(promise)} --max-iterations {iterations}")


def wave_heading(number: int) -> str:
    """The per-wave commands heading, as seed 000 writes it."""
    if number == 1:
        return "Wave 1 (run in parallel)"
    return f"Wave {number} (run after Wave {number - 1} completes)"


@dataclass(frozen=True)
class ParsedGraph:
    graph: ExecutionGraph
    problems: tuple[str, ...]  # counts and commands that disagree with the wave tables


def check_graph(graph: ExecutionGraph) -> list[str]:
    """Names listed twice, dependencies not on an earlier wave, and dependencies without a
    reason (or reasons for no dependency)."""
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
    edges = {(w.name, needed) for _, w in graph.entries() for needed in w.depends_on}
    explained = {(reason.workflow, reason.on) for reason in graph.reasons}
    problems += [f"Dependency Rationale: no reason for `{a}` depending on `{b}`: say whether "
                 "it is file-based or logical, and why" for a, b in sorted(edges - explained)]
    problems += [f"Dependency Rationale: `{a}` does not depend on `{b}` in the wave tables"
                 for a, b in sorted(explained - edges)]
    return problems
