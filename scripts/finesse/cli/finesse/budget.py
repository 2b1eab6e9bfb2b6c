"""`finesse budget`: estimate how much of the context window a loop plan's iteration takes.

Parses the phases (options or a JSON spec), counts the lines of the files named, and prints
`finesse.authoring.budget.estimate`. Bad input is a one-line UsageError saying what to type.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from finesse.authoring.budget import (
    BudgetEstimate,
    PhaseSpec,
    estimate,
    load_spec,
    measure,
    parse_phase,
)
from finesse.authoring.cache.store import load_config
from finesse.errors import UsageError
from finesse.state.paths import find_project_root

_ADVICE = {
    "proceed": "proceed as planned",
    "note": "proceed, and note the context pressure in the plan",
    "recommend decomposition": "split the plan into smaller loops",
    "re-route": "re-route: this plan does not fit one loop; plan it again, smaller",
}
_EXAMPLE = 'finesse budget --phase "implementation:src/a.py" --iterations 12'


@click.command("budget")
@click.option("--phase", "phase_texts", multiple=True, metavar="TYPE[:FILES]",
              help="A phase: implementation, verification or exploration, then a colon and "
                   "comma-separated files: paths (lines counted) or small / medium / large "
                   "for files not read yet. Repeat for each phase.")
@click.option("--spec", "spec_file", type=click.Path(dir_okay=False), default=None,
              help='The plan as JSON: {"phases": [{"type": ..., "files": [...]}], '
                   '"iterations": N, "context_window": N (optional)}.')
@click.option("--iterations", default=None, metavar="N",
              help="The loop's iteration cap (1 or more).")
@click.option("--window", default=None, metavar="TOKENS",
              help="Context window in tokens (default: context_window in "
                   ".finesse/config.json, else 200000).")
@click.option("--project", type=click.Path(file_okay=False), default=None,
              help="Project root holding .finesse/config.json (default: $CLAUDE_PROJECT_DIR, "
                   "else the git top level of the cwd).")
@click.option("--json", "as_json", is_flag=True, help="Print the estimate as JSON.")
def command(phase_texts: tuple[str, ...], spec_file: str | None, iterations: str | None,
           window: str | None, project: str | None, as_json: bool) -> None:
    """Estimate a loop plan's peak context use, its pressure, and its cost band.

    Paths are relative to the current directory, in --phase and in --spec alike.
    """
    root = Path(project).resolve() if project else find_project_root(os.environ, os.getcwd())
    phases: list[PhaseSpec]
    spec_window: int | None = None
    if spec_file is not None:
        if phase_texts:
            raise UsageError("give --spec FILE or --phase options, not both")
        spec = load_spec(Path(spec_file))
        phases, spec_window = list(spec.phases), spec.context_window
        cap = _positive(iterations, "--iterations", "12") if iterations else spec.iterations
    else:
        if not phase_texts:
            raise UsageError(f"give the plan's phases, e.g. {_EXAMPLE}, or --spec FILE.json")
        if iterations is None:
            raise UsageError(f"give --iterations N, the loop's iteration cap: {_EXAMPLE}")
        phases = [parse_phase(text) for text in phase_texts]
        cap = _positive(iterations, "--iterations", "12")
    if window is not None:
        context_window = _positive(window, "--window", "200000")
    else:
        context_window = spec_window or load_config(root).context_window
    result = estimate(measure(phases, Path.cwd()), cap, context_window)
    if as_json:
        click.echo(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        click.echo(render(result))


def _positive(text: str, flag: str, example: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"{flag} takes a whole number of 1 or more, like {flag} {example}; "
                         f"not {text!r}")
    return value


def render(result: BudgetEstimate) -> str:
    parts = result.breakdown
    lines = [
        f"Peak context: {result.peak_tokens:,} tokens, {result.peak_percent:g}% of the window "
        f"({result.pressure} pressure): {_ADVICE[result.action]}.",
        f"Cost for {result.iterations} iteration{'s' if result.iterations != 1 else ''}: "
        f"{result.cost_range}.",
        f"  prompt base  {parts.base:>9,}",
        f"  phases       {parts.phases:>9,}  ({len(result.phases)} x 5,000)",
        f"  files        {parts.files:>9,}  ({result.lines_read:,} lines, {result.size})",
        f"  reasoning    {parts.reasoning:>9,}",
    ]
    for phase in result.phases:
        lines.append(f"    {phase.type} (x{phase.weight:g}): {phase.lines:,} lines -> "
                     f"{phase.weighted_tokens:,} tokens")
    lines.append(result.disclaimer)
    return "\n".join(lines)


