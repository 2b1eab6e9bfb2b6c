"""Spec to loop prompt, promise file and plan metadata: pure text, no I/O.

The prompt follows the /finesse template (skills/finesse/SKILL.md): the cold-start paragraph
first, then `## Subagent Instructions` when subagents are on, `## Requirements (in order)`
with one `### Phase N:` block each, `## Rules`, `## Completion`. User text always sits
inside a line this module starts, never at the start of one, so no spec text can open a
heading, a list or a phase of its own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from finesse.authoring.budget import BudgetEstimate, window_label
from finesse.authoring.prompt_check.validate import ValidationReport, validate_prompt
from finesse.authoring.spec import GitConfig, Spec

NOT_A_REPOSITORY = "none (not a git repository)"
MAX_CONCURRENT_SUBAGENTS = 2

# The git-rule table (skills/finesse/SKILL.md states the same rules; a test holds them equal).
NO_CHECKPOINTS = "Do NOT commit or push: leave every change uncommitted for review."
PER_PHASE = ("Commit once per phase, right after its Verify command passes, with a message "
             "that names the phase.")
PER_CHANGE = ("Commit after each change whose Verify command passes: one small commit per "
              "verified change.")
CUSTOM = "Commit as follows: {custom}"
KEEP_HISTORY = "Do NOT amend, rebase or reset commits already made."
PUSH = "Push after each commit; never force-push."
NO_PUSH = "Do NOT push: the commits stay local."

BUILT_IN_GUARDRAILS = (
    "Do NOT edit any path outside the in-scope paths listed below.",
    "Do NOT delete, skip or weaken a test or a check to make it pass.",
)
_NEGATION = re.compile(r"^(?:do\s+not|don['\u2019]t|never|must\s+not)\s+", re.IGNORECASE)
_GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class RenderedPlan:
    """The texts of a plan's files, with the checks made on them."""

    prompt: str
    promise: str
    plan: str
    report: ValidationReport
    budget: BudgetEstimate
    warnings: tuple[str, ...]


def render_prompt(spec: Spec) -> str:
    parts = [_cold_start(spec)]
    if spec.subagents:
        parts.append(_subagent_section())
    parts.append(_requirements(spec))
    parts.append(_rules(spec))
    parts.append(_completion(spec))
    return "\n\n".join(parts) + "\n"


def render_promise(spec: Spec) -> str:
    """The promise file: the promise and one newline, as a text file ends."""
    return spec.promise + "\n"


def git_rules(git: GitConfig) -> list[str]:
    if not git.checkpointing:
        return [NO_CHECKPOINTS]
    if git.granularity == "custom":
        rules = [CUSTOM.format(custom=_sentence(git.custom or ""))]
    else:
        rules = [PER_PHASE if git.granularity == "per-phase" else PER_CHANGE, KEEP_HISTORY]
    rules.append(PUSH if git.push else NO_PUSH)
    return rules


def guardrail(text: str) -> str:
    """A spec guardrail as a "Do NOT" rule: "never add deps" -> "Do NOT add deps."."""
    rest = _NEGATION.sub("", text, count=1)
    if rest[:1].isupper() and not rest[1:2].isupper():
        rest = rest[0].lower() + rest[1:]
    return f"Do NOT {_sentence(rest)}"


def scope_path(path: str) -> str:
    """A path as the prompt shows it: one without a slash is anchored at the project root
    (`Makefile` -> `./Makefile`), a glob without one matches anywhere (`*.sql` ->
    `**/*.sql`), so that every entry reads as a path."""
    if "/" in path:
        return path
    return f"**/{path}" if _GLOB.search(path) else f"./{path}"


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
    named = [n for n, phase in enumerate(spec.phases, 1) if phase.subagent_opportunity]
    if spec.subagents and not named:
        warnings.append("subagents are on but no phase names a subagent opportunity: the "
                        "prompt allows none")
    if not spec.subagents and named:
        warnings.append("subagents are off, so the prompt leaves out the subagent "
                        f"opportunities of {_phases(named)}")
    if spec.git.checkpointing and not is_repository:
        warnings.append("checkpointing is on but the project is not a git repository: run "
                        "`git init` and commit before the loop starts")
    return warnings


_PRESSURE_ADVICE = {
    "moderate": "proceed, and keep phases small",
    "high": "consider splitting the plan into smaller loops",
    "critical": "split the plan into smaller loops before running it",
}


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
        ("Recommended --max-iterations", str(spec.iteration_limit)),
        ("Context Budget Estimate", _budget_text(spec, budget)),
        ("Validation Results", _validation_text(report)),
        ("Unresolved Warnings", "\n".join(f"- {w}" for w in warnings) or "None."),
    ):
        lines += [f"## {title}", "", body, ""]
    return "\n".join(lines)


def _cold_start(spec: Spec) -> str:
    project = spec.project
    return (
        f"You are iterating on {project.name.rstrip('.')}, a {project.task_type} task: "
        f"{_sentence(project.description)} Each iteration starts fresh, with no memory of "
        "earlier ones: check the current state first (`git status`, `git log --oneline -10`, "
        "and the Verify commands below), then continue with the first phase whose Verify "
        "command does not pass yet."
    )


def _subagent_section() -> str:
    return "\n".join([
        "## Subagent Instructions",
        "",
        "You may hand work to a subagent (the Task tool) where a phase below is marked "
        "[Subagent opportunity], and nowhere else; do the rest yourself.",
        "",
        "A piece of work suits a subagent when it is:",
        "",
        "- an independent subtask: it edits no file that other running work edits, and "
        "needs no decision from you midway;",
        "- a parallel verification: a slow check, such as the full test suite or a build, "
        "that can run while you keep working;",
        "- an exploration that pays off: reading code or docs to answer one question, where "
        "only the answer has to come back.",
        "",
        f"Run at most {MAX_CONCURRENT_SUBAGENTS} subagents at the same time. Give each one "
        "the phase, the in-scope paths it may edit, the Verify command it must run, and the "
        "result you need back. Before you rely on a subagent's report, run that phase's "
        "Verify command yourself.",
    ])


def _requirements(spec: Spec) -> str:
    lines = [
        "## Requirements (in order)",
        "",
        "Work through the phases in order; start a phase only when the Verify commands of "
        "the earlier phases pass.",
    ]
    for number, phase in enumerate(spec.phases, 1):
        lines += [
            "",
            f"### Phase {number}: {phase.name}",
            "",
            f"Deliverable: {_sentence(phase.deliverable)}",
            "",
            "Criteria:",
            "",
            *(_criterion(c.command, c.expect) for c in phase.criteria),
            "",
            f"Verify: `{phase.verify}`",
        ]
        if spec.subagents and phase.subagent_opportunity:
            lines += ["", f"[Subagent opportunity]: {_sentence(phase.subagent_opportunity)}"]
    return "\n".join(lines)


def _rules(spec: Spec) -> str:
    scope = spec.scope
    out = [f"`{scope_path(path)}`" for path in scope.out_of_scope]
    rules = [
        *BUILT_IN_GUARDRAILS,
        *(guardrail(text) for text in spec.guardrails),
        "In scope (edit only these): " + ", ".join(f"`{scope_path(p)}`"
                                                   for p in scope.in_scope),
        "Out of scope (read if useful, never edit): "
        + (", ".join(out) + ", and all other paths." if out else "all other paths."),
        "Run the current phase's Verify command after every change, and the Verify commands "
        "of all earlier phases before you start the next phase.",
        *git_rules(spec.git),
        f"If the same error comes back {spec.stuck_threshold} or more times in a row, stop "
        "repeating the fix: note in your reply what you tried and the exact error, undo that "
        "attempt, and take a different approach.",
        "If the different approach fails too, or the work cannot be done without editing an "
        "out-of-scope path, output <promise>BLOCKED</promise> with one paragraph on what "
        "blocks you, and stop.",
    ]
    return "\n".join(["## Rules", "", *(f"- {rule}" for rule in rules)])


def _completion(spec: Spec) -> str:
    limit = spec.iteration_limit
    return "\n".join([
        "## Completion",
        "",
        f"Output <promise>{spec.promise}</promise> when ALL of the following are true:",
        "",
        *(_criterion(c.command, c.expect) for c in spec.criteria),
        "",
        "Do not output the completion promise unless every criterion is met. If one is not "
        "met, keep working.",
        "",
        f"Iteration limit: {limit} (--max-iterations {limit}).",
    ])


def _criterion(command: str, expect: str) -> str:
    return f"- `{command}` {expect}"


def _sentence(text: str) -> str:
    text = text.rstrip(" ,;:")
    return text if text.endswith((".", "!", "?")) else text + "."


def _phases(numbers: list[int]) -> str:
    """[1] -> "phase 1", [1, 2, 4] -> "phases 1, 2 and 4"."""
    shown = [str(n) for n in numbers]
    if len(shown) == 1:
        return f"phase {shown[0]}"
    return "phases " + ", ".join(shown[:-1]) + " and " + shown[-1]


def _budget_text(spec: Spec, budget: BudgetEstimate) -> str:
    parts = budget.breakdown
    lines = [
        f"- Peak context: {budget.peak_tokens:,} tokens, {budget.peak_percent:g}% of a "
        f"{window_label(budget.context_window)}-token window: {budget.pressure} pressure "
        f"(action: {budget.action}).",
        f"- Cost for {budget.iterations} iteration{'s' if budget.iterations != 1 else ''}: "
        f"{budget.cost_range}.",
        f"- Breakdown: prompt base {parts.base:,}; phases {parts.phases:,}; files "
        f"{parts.files:,} ({budget.lines_read:,} lines, {budget.size}); reasoning "
        f"{parts.reasoning:,}.",
    ]
    for number, (phase, row) in enumerate(zip(spec.phases, budget.phases, strict=True), 1):
        lines.append(f"- Phase {number}, {phase.name} ({row.type}, x{row.weight:g}): "
                     f"{row.lines:,} lines, {row.weighted_tokens:,} tokens.")
    return "\n".join([*lines, "", budget.disclaimer])


def _validation_text(report: ValidationReport) -> str:
    failed = len(report.failed)
    total = len(report.attributes)
    lines = [f"All {total} attributes pass." if not failed else
             f"{failed} of {total} attributes fail.", "",
             "| # | Attribute | Result | Evidence |", "| --- | --- | --- | --- |"]
    for result in report.attributes:
        shown = result.evidence or "(no line)"
        if not result.passed:
            shown += f"; fix: {result.fix}"
        lines.append(f"| {result.id} | {result.key} | {'PASS' if result.passed else 'FAIL'} "
                     f"| {shown.replace('|', chr(92) + '|')} |")
    return "\n".join(lines)
