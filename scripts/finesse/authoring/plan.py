"""The plan file, `<name>-plan.md` (or a sub-workflow's `plan.md`): seed 000's Plan
Metadata Fields, for people and for `/finesse-retro`. Pure text, no I/O.

Front matter (JSON values, so it reads back as YAML too): prompt_file, promise_file,
task_type, max_iterations, baseline_commit, git_config, subagent_enabled, phases. Then one
`##` section per field: Task Type, Summary, Codebase Context, Chosen Approach, Recommended
--max-iterations (with the task-workflows reasoning), Context Budget Estimate (pressure,
breakdown, cost range, the seed's cost disclaimer), Validation Results (`finesse validate`
and each agent's verdicts), Unresolved Warnings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from finesse.authoring.budget import BudgetEstimate, window_label
from finesse.authoring.iterations import outside_range, reasoning
from finesse.authoring.prompt_check.validate import ValidationReport, validate_prompt
from finesse.authoring.render import render_promise, render_prompt
from finesse.authoring.spec import AgentReview, Spec

NOT_A_REPOSITORY = "none (not a git repository)"
_PRESSURE_ADVICE = {
    "moderate": "proceed, and keep phases small",
    "high": "consider decomposing the task into sub-workflows",
    "critical": "decompose the task into sub-workflows before running it",
}


@dataclass(frozen=True)
class RenderedPlan:
    """The texts of a plan's files, with the checks made on them."""

    prompt: str
    promise: str
    plan: str
    report: ValidationReport
    budget: BudgetEstimate
    warnings: tuple[str, ...]


def render_files(spec: Spec, *, prompt_path: str, promise_path: str, budget: BudgetEstimate,
                 baseline_commit: str | None, is_repository: bool = True) -> RenderedPlan:
    prompt = render_prompt(spec)
    report = validate_prompt(prompt, promise=spec.promise)
    warnings = plan_warnings(spec, budget, is_repository=is_repository)
    plan = render_plan(spec, prompt_path=prompt_path, promise_path=promise_path, budget=budget,
                       baseline_commit=baseline_commit, report=report, warnings=warnings)
    return RenderedPlan(prompt, render_promise(spec), plan, report, budget, tuple(warnings))


def plan_warnings(spec: Spec, budget: BudgetEstimate, *, is_repository: bool) -> list[str]:
    warnings = list(spec.warnings)
    if budget.pressure != "low":
        warnings.append(f"context pressure is {budget.pressure} ({budget.peak_percent:g}% of "
                        f"the window at peak): {_PRESSURE_ADVICE[budget.pressure]}")
    if spec.iteration_limit < len(spec.phases):
        warnings.append(f"the iteration limit ({spec.iteration_limit}) is below the number "
                        f"of phases ({len(spec.phases)}): the loop may stop before the last "
                        "phase")
    elif spec.iteration_reasoning is None:
        off = outside_range(spec.project.task_type, len(spec.phases), spec.iteration_limit)
        warnings += [off] if off else []
    named = [n for n, phase in enumerate(spec.phases, 1) if phase.subagent]
    if spec.subagents and not named:
        warnings.append("subagents are on but no phase has a subagent opportunity: the "
                        "prompt allows none")
    if not spec.subagents and named:
        warnings.append("subagents are off, so the prompt leaves out the subagent "
                        f"opportunities of {_phases(named)}")
    if spec.git.checkpointing and not is_repository:
        warnings.append("checkpointing is on but the project is not a git repository: run "
                        "`git init` and commit before the loop starts")
    warnings += unresolved_reviews(spec)
    return warnings


def unresolved_reviews(spec: Spec) -> list[str]:
    """What each agent still failed in its last round: open when the budget ran out."""
    last: dict[str, AgentReview] = {}
    for review in spec.reviews:
        if review.agent not in last or review.round >= last[review.agent].round:
            last[review.agent] = review
    return [f"{agent} (round {review.round} of {spec.refinement_budget}) still fails "
            f"attribute{'s' if len(failed) > 1 else ''} {', '.join(map(str, failed))}: "
            f"{review.notes}"
            for agent, review in sorted(last.items())
            if (failed := sorted(n for n, v in review.verdicts.items() if v == "fail"))]


def render_plan(spec: Spec, *, prompt_path: str, promise_path: str, budget: BudgetEstimate,
                baseline_commit: str | None, report: ValidationReport,
                warnings: list[str]) -> str:
    project = spec.project
    front = {
        "prompt_file": prompt_path,
        "promise_file": promise_path,
        "task_type": project.task_type,
        "max_iterations": spec.iteration_limit,
        "baseline_commit": baseline_commit or NOT_A_REPOSITORY,
        "git_config": spec.git.model_dump(),
        "subagent_enabled": spec.subagents,
        "phases": [{"name": phase.name, "verify": phase.verify} for phase in spec.phases],
    }
    # JSON values are YAML too: the front matter reads back with yaml.safe_load.
    lines = ["---", *(f"{key}: {json.dumps(value, ensure_ascii=False)}"
                      for key, value in front.items()), "---", ""]
    lines += [f"# Plan: {project.name}", ""]
    for title, body in (
        ("Task Type", project.task_type),
        ("Summary", project.summary),
        ("Codebase Context", project.codebase_context),
        ("Chosen Approach", project.chosen_approach),
        ("Recommended --max-iterations", reasoning(
            project.task_type, len(spec.phases), spec.iteration_limit,
            spec.iteration_reasoning)),
        ("Context Budget Estimate", _budget_text(spec, budget)),
        ("Validation Results", _validation_text(report, spec)),
        ("Unresolved Warnings", "\n".join(f"- {w}" for w in warnings) or "None."),
    ):
        lines += [f"## {title}", "", body, ""]
    return "\n".join(lines)


def _phases(numbers: list[int]) -> str:
    """[1] -> "phase 1", [1, 2, 4] -> "phases 1, 2 and 4"."""
    shown = [str(n) for n in numbers]
    if len(shown) == 1:
        return f"phase {shown[0]}"
    return "phases " + ", ".join(shown[:-1]) + " and " + shown[-1]


def _budget_text(spec: Spec, budget: BudgetEstimate) -> str:
    parts = budget.breakdown
    lines = [
        f"- Pressure: {budget.pressure} ({budget.peak_percent:g}% of a "
        f"{window_label(budget.context_window)}-token window at peak, "
        f"{budget.peak_tokens:,} tokens; action: {budget.action}).",
        f"- Cost range for {budget.iterations} iteration"
        f"{'s' if budget.iterations != 1 else ''}: {budget.cost_range}.",
        f"- Breakdown: prompt base {parts.base:,}; phases {parts.phases:,}; files "
        f"{parts.files:,} ({budget.lines_read:,} lines, {budget.size}); reasoning "
        f"{parts.reasoning:,}.",
    ]
    for number, (phase, row) in enumerate(zip(spec.phases, budget.phases, strict=True), 1):
        lines.append(f"- Phase {number}, {phase.name} ({row.type}, x{row.weight:g}): "
                     f"{row.lines:,} lines, {row.weighted_tokens:,} tokens.")
    return "\n".join([*lines, "", budget.disclaimer])


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _validation_text(report: ValidationReport, spec: Spec) -> str:
    failed = len(report.failed)
    total = len(report.attributes)
    lines = ["### finesse validate", "",
             f"All {total} attributes pass." if not failed else
             f"{failed} of {total} attributes fail.", "",
             "| # | Attribute | Result | Evidence |", "| --- | --- | --- | --- |"]
    for result in report.attributes:
        shown = result.evidence or "(no line)"
        if not result.passed:
            shown += f"; fix: {result.fix}"
        lines.append(f"| {result.id} | {result.key} | {'PASS' if result.passed else 'FAIL'} "
                     f"| {_cell(shown)} |")
    lines += ["", "### Validation agents", ""]
    if not spec.reviews:
        lines.append("No agent review recorded.")
        return "\n".join(lines)
    lines += [f"Refinement budget: {spec.refinement_budget} rounds.", "",
              "| Agent | Round | Verdicts | Notes |", "| --- | --- | --- | --- |"]
    for review in sorted(spec.reviews, key=lambda r: (r.agent, r.round)):
        verdicts = ", ".join(f"{n} {v.upper()}" for n, v in sorted(review.verdicts.items()))
        lines.append(f"| {review.agent} | {review.round} | {verdicts} | {_cell(review.notes)} |")
    return "\n".join(lines)
