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
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, model_validator

from finesse.authoring.budget import PhaseType
from finesse.authoring.prompt_check.vocabulary import LIMITS, VAGUE
from finesse.errors import UsageError
from finesse.support.files import read_text, shown_name
from finesse.support.strict import StrictModel, problems

TaskType = Literal["feature", "bugfix", "refactor", "testing", "performance", "research"]
Granularity = Literal["per-phase", "per-change", "custom"]

MAX_SPEC_BYTES = 1024 * 1024
MAX_PHASES = 25
MAX_ITERATIONS = 25
DEFAULT_PROMISE = "TASK_COMPLETE"
_PROMISE = re.compile(r"[A-Z][A-Z0-9_-]*(?: [A-Z0-9_-]+)*")
_PROMISE_TAG = re.compile(r"</?promise>", re.IGNORECASE)


def _one_line(text: str) -> str:
    collapsed = " ".join(text.split())
    if not collapsed:
        raise ValueError("is empty; write some text")
    if not collapsed.isprintable():
        raise ValueError("holds a control character; use plain text")
    return collapsed


def _no_limit(text: str) -> str:
    if any(pattern.search(text) for pattern in LIMITS):
        raise ValueError("states an iteration limit; say it once, in iteration_limit")
    return text


def _prompt_text(text: str) -> str:
    text = _one_line(text)
    if _PROMISE_TAG.search(text):
        raise ValueError("holds a <promise> tag; the prompt says the promise once, from "
                         "`promise`")
    if text.count("`") % 2:
        raise ValueError("has an unpaired backtick; close every `code span`")
    return _no_limit(text)


def _command(text: str) -> str:
    if "\n" in text or "\r" in text:
        raise ValueError("spans several lines; give one shell command line (join them with &&)")
    text = text.strip()
    if not text or not text.isprintable():
        raise ValueError("must be a printable shell command, e.g. `pytest -q`")
    if "`" in text:
        raise ValueError("holds a backtick; write the command without backticks ($(...) "
                         "instead of `...`)")
    return _no_limit(text)


def _expectation(text: str) -> str:
    text = _prompt_text(text)
    vague = VAGUE.search(re.sub(r"`[^`]*`", " ", text))
    if vague:
        raise ValueError(f"says {vague.group(0)!r}, which no command can check; name the "
                         "result, e.g. 'exits 0' or 'prints 0 lines'")
    return text


def _prose(text: str) -> str:
    text = text.strip()
    if not text:
        raise ValueError("is empty; write some text")
    return text


def _scope_path(text: str) -> str:
    text = text.strip()
    if not text or any(c.isspace() for c in text) or "`" in text:
        raise ValueError("must be one path or glob, without spaces or backticks")
    if text.startswith(("-", "/", "~")) or "://" in text:
        raise ValueError("must be relative to the project root, e.g. src/app/")
    if not re.search(r"[A-Za-z]", text):
        raise ValueError("must hold a letter, e.g. src/ or tests/test_app.py")
    return _no_limit(text)


def _promise(text: str) -> str:
    text = " ".join(text.split())
    if not 4 <= len(text) <= 80 or not _PROMISE.fullmatch(text):
        raise ValueError("must be 4 to 80 capitals, digits, _ or -, words split by single "
                         f"spaces, e.g. {DEFAULT_PROMISE}")
    if text == "BLOCKED":
        raise ValueError("BLOCKED is the stuck signal; pick another, e.g. "
                         f"{DEFAULT_PROMISE}")
    return text


PromptText = Annotated[str, AfterValidator(_prompt_text)]
Name = Annotated[str, Field(max_length=120), AfterValidator(_prompt_text)]
Command = Annotated[str, AfterValidator(_command)]
Expectation = Annotated[str, AfterValidator(_expectation)]
Prose = Annotated[str, AfterValidator(_prose)]
ScopePath = Annotated[str, AfterValidator(_scope_path)]
Promise = Annotated[str, AfterValidator(_promise)]


class Project(StrictModel):
    name: Name
    description: PromptText
    task_type: TaskType
    summary: Prose
    codebase_context: Prose
    chosen_approach: Prose


class Criterion(StrictModel):
    """One binary check: a command and the result it shows when the criterion holds."""

    command: Command
    expect: Expectation = "exits 0"


class Phase(StrictModel):
    name: Name
    kind: PhaseType = "implementation"  # how the budget weighs its files
    deliverable: PromptText
    criteria: list[Criterion] = Field(min_length=1)
    verify: Command
    subagent_opportunity: PromptText | None = None
    # For the budget: paths relative to the project root (lines counted), or
    # small / medium / large for files not read yet.
    files: list[str] = Field(default_factory=list)


class Scope(StrictModel):
    in_scope: list[ScopePath] = Field(min_length=1)
    out_of_scope: list[ScopePath] = Field(default_factory=list)


class GitConfig(StrictModel):
    checkpointing: bool
    granularity: Granularity | None = None
    custom: PromptText | None = None  # the commit rule, when granularity is custom
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


class Spec(StrictModel):
    project: Project
    phases: list[Phase] = Field(min_length=2, max_length=MAX_PHASES)
    scope: Scope
    git: GitConfig
    subagents: bool = False
    promise: Promise = DEFAULT_PROMISE
    iteration_limit: int = Field(ge=1, le=MAX_ITERATIONS)
    # The checker recognises 2 to 5 repeats; past 5 a loop has burnt too many iterations.
    stuck_threshold: int = Field(default=3, ge=2, le=5)
    guardrails: list[PromptText] = Field(default_factory=list)
    warnings: list[Prose] = Field(default_factory=list)  # open questions the planner left

    @property
    def criteria(self) -> list[Criterion]:
        """Every phase's criteria, in phase order, each once."""
        return list(dict.fromkeys(c for phase in self.phases for c in phase.criteria))


def parse_spec(data: Any) -> Spec:
    """A Spec from loaded YAML or JSON data; a UsageError naming the field and the fix."""
    try:
        return Spec.model_validate(data)
    except ValidationError as err:
        raise UsageError(f"invalid spec: {problems(err, most=3)}") from None


def load_spec(path: Path) -> Spec:
    """Read a .yaml, .yml or .json spec file."""
    shown = shown_name(path)
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json"):
        raise UsageError(f"the spec {shown} must end in .yaml, .yml or .json")
    text = read_text(path, subject=f"the spec {shown}", limit=MAX_SPEC_BYTES,
                     missing_fix="give a YAML or JSON file")
    data = _load_yaml(text, shown) if suffix != ".json" else _load_json(text, shown)
    try:
        return parse_spec(data)
    except UsageError as err:
        raise UsageError(f"the spec {shown}: {err}") from None


def _load_json(text: str, shown: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as err:
        raise UsageError(f"the spec {shown} is not valid JSON ({err})") from None


def _load_yaml(text: str, shown: str) -> Any:
    import yaml  # type: ignore[import-untyped]  # lazy: only a YAML spec pays for it

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"the spec {shown} is not valid YAML{where}") from None
