"""The ten attribute rules of seed 000, in its order: one module each under `rules/`.

A loop prompt is re-read from scratch every iteration, so everything the agent needs when
it is done, stuck, or about to wander off must be in the text. Each rule reads the prompt
as `reading.Prompt` parsed it once and returns a Verdict: whether the attribute is there,
the line that shows it (or shows what is wrong), and one line saying how to fix it.
"""

from __future__ import annotations

from finesse.authoring.prompt_check.rules import (
    Rule,
    binary_completion_criteria,
    cold_start,
    completion_signal,
    failure_instructions,
    guardrails,
    iteration_limit,
    ordered_phases,
    scoped_context,
    verification_commands,
    zero_ambiguity,
)

RULES: tuple[Rule, ...] = tuple(module.RULE for module in (
    binary_completion_criteria,
    completion_signal,
    failure_instructions,
    ordered_phases,
    verification_commands,
    guardrails,
    scoped_context,
    cold_start,
    iteration_limit,
    zero_ambiguity,
))
