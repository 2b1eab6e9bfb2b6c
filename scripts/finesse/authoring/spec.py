"""The plan spec: what `finesse new` renders a loop prompt from, as strict pydantic models.

A spec is written by the /finesse skill (or by hand) as YAML or JSON. The models accept only
text that renders into a prompt the checker reads as meant: prompt text is one line with
no promise tags and paired backticks, commands carry no backticks, nothing but
`iteration_limit` states an iteration limit, and criteria name results a command shows.
So every spec that loads renders to a prompt that passes `validate_prompt`
(tests/unit/authoring/test_render.py holds the property test).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    Tag,
    ValidationError,
    model_validator,
)

from finesse.authoring.budget import PhaseType
from finesse.authoring.iterations import MAX_ITERATIONS, TaskType
from finesse.authoring.spec_fields import (
    DEFAULT_PROMISE,
    Command,
    CriterionText,
    Deliverable,
    Expectation,
    LineStart,
    Name,
    Promise,
    PromptText,
    Prose,
    ScopePath,
)
from finesse.errors import UsageError
from finesse.support.files import FileProblem, read_text, shown_name
from finesse.support.strict import StrictModel, problems

Granularity = Literal["per-phase", "per-change", "custom"]

MAX_SPEC_BYTES = 1024 * 1024
MAX_PHASES = 25
class Project(StrictModel):
    name: Name  # the cold start's "You are iterating on <name>."
    task_type: TaskType
    summary: Prose
    codebase_context: Prose
    chosen_approach: Prose


class CommandCriterion(StrictModel):
    """One binary check: a command and the result it shows when the criterion holds."""

    command: Command
    expect: Expectation = "exits 0"


# A criterion is a command with its result, or a sentence of what holds (binary because
# the phase's Verify command checks it): "GET /users returns 200".
def _criterion_kind(value: Any) -> str:
    return "text" if isinstance(value, str) else "command"


Criterion = Annotated[
    Annotated[CommandCriterion, Tag("command")] | Annotated[CriterionText, Tag("text")],
    Discriminator(_criterion_kind),
]
SubagentType = Literal["Bash", "Explore", "general-purpose"]


class SubagentNote(StrictModel):
    """A phase's [Subagent opportunity]: what to hand over, to which type, and why it is
    safe (seed 000's Per-Phase Annotation Format)."""

    what: PromptText  # "Spawn a Bash subagent to run the full suite while beginning Phase 3"
    type: SubagentType
    why: PromptText  # "Phase 3 modifies different files, so there is no write conflict"


class Phase(StrictModel):
    name: Deliverable  # "Phase 1: <name>": a specific deliverable
    kind: PhaseType = "implementation"  # how the budget weighs its files
    criteria: list[Criterion] = Field(min_length=1)
    verify: Command
    subagent: SubagentNote | None = None
    # For the budget: paths relative to the project root (lines counted), or
    # small / medium / large for files not read yet.
    files: list[str] = Field(default_factory=list)


class Scope(StrictModel):
    in_scope: list[ScopePath] = Field(min_length=1)
    out_of_scope: list[ScopePath] = Field(default_factory=list)


class GitConfig(StrictModel):
    checkpointing: bool
    granularity: Granularity | None = None
    custom: LineStart | None = None  # the user's own words, when granularity is custom
    push: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> GitConfig:
        if not self.checkpointing:
            if self.granularity is not None or self.custom is not None or self.push:
                raise ValueError("with checkpointing false, leave out granularity, custom "
                                 "and push: nothing is committed, so nothing is pushed")
            return self
        if self.granularity is None:
            raise ValueError("with checkpointing true, set granularity: per-phase, "
                             "per-change or custom")
        if (self.granularity == "custom") != (self.custom is not None):
            raise ValueError("give custom (the commit rule in words) exactly when "
                             "granularity is custom")
        return self


Verdict = Literal["pass", "fail"]


class AgentReview(StrictModel):
    """One validation agent's verdict on the drafted prompt, in one refinement round."""

    agent: str = Field(pattern=r"^finesse-[a-z0-9-]+$")  # agents/<agent>.md
    round: int = Field(ge=1)
    verdicts: dict[Annotated[int, Field(ge=1, le=10)], Verdict] = Field(min_length=1)
    notes: Prose = "no notes"


class Spec(StrictModel):
    project: Project
    phases: list[Phase] = Field(min_length=2, max_length=MAX_PHASES)
    scope: Scope
    git: GitConfig
    test_command: Command  # "Run <test_command> after every change."
    subagents: bool = False
    promise: Promise = DEFAULT_PROMISE
    iteration_limit: int = Field(ge=1, le=MAX_ITERATIONS)
    # Why this limit (the task-workflows table's row, and what moved it); the plan cites it.
    iteration_reasoning: Prose | None = None
    # "If unable to make progress after <blocked_after> iterations, ... BLOCKED"; by
    # default the iteration limit itself.
    blocked_after: int | None = Field(default=None, ge=1, le=MAX_ITERATIONS)
    # "If stuck on the same error for <n>+ attempts": 3 in the seed; 2 to 5 allowed.
    stuck_threshold: int = Field(default=3, ge=2, le=5)
    guardrails: list[PromptText] = Field(default_factory=list)
    warnings: list[Prose] = Field(default_factory=list)  # open questions the planner left
    refinement_budget: int = Field(default=2, ge=1, le=5)  # rounds of agent review
    reviews: list[AgentReview] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Spec:
        if self.blocked_after is not None and self.blocked_after > self.iteration_limit:
            raise ValueError(f"blocked_after ({self.blocked_after}) is past the iteration "
                             f"limit ({self.iteration_limit}); make it at most that")
        over = [review.agent for review in self.reviews
                if review.round > self.refinement_budget]
        if over:
            raise ValueError(f"{over[0]} reviewed in a round past the refinement budget "
                             f"({self.refinement_budget}); record what is still open in "
                             "warnings instead")
        return self

    @property
    def stall_limit(self) -> int:
        """N of the BLOCKED-after-N rule."""
        return self.blocked_after or self.iteration_limit



def parse_spec(data: Any) -> Spec:
    """A Spec from loaded YAML or JSON data; a UsageError naming the field and the fix."""
    try:
        return Spec.model_validate(data)
    except ValidationError as err:
        raise UsageError(f"invalid spec: {problems(err, most=3)}") from None


def load_spec_data(path: Path) -> Any:
    """The data of a .yaml, .yml or .json spec file, not yet checked."""
    shown = shown_name(path)
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json"):
        raise UsageError(f"the spec {shown} must end in .yaml, .yml or .json")
    try:
        text = read_text(path, subject=f"the spec {shown}", limit=MAX_SPEC_BYTES)
    except FileProblem as err:
        if err.kind != "missing":
            raise
        raise UsageError(f"the spec {shown}: no such file; give a YAML or JSON file") from None
    return _load_yaml(text, shown) if suffix != ".json" else _load_json(text, shown)


def load_spec(path: Path) -> Spec:
    """Read a .yaml, .yml or .json spec file of one plan."""
    data = load_spec_data(path)
    try:
        return parse_spec(data)
    except UsageError as err:
        raise UsageError(f"the spec {shown_name(path)}: {err}") from None


def _load_json(text: str, shown: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as err:
        raise UsageError(f"the spec {shown} is not valid JSON ({err})") from None
    except RecursionError:
        raise UsageError(f"the spec {shown} is not valid JSON (nested too deeply)") from None


def _load_yaml(text: str, shown: str) -> Any:
    import yaml  # type: ignore[import-untyped]  # lazy: only a YAML spec pays for it

    from finesse.authoring.spec_yaml import SpecYamlError, load_bounded

    try:
        return load_bounded(text, MAX_SPEC_BYTES)
    except SpecYamlError as err:
        raise UsageError(f"the spec {shown} is refused: {err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"the spec {shown} is not valid YAML{where}") from None
