"""`finesse retro PLAN`: review a plan after its loop ran, and write `<name>-retro.md`.

The work is in `finesse.authoring.retro`; this module parses the arguments and prints. It exits
0 once the retro is written, whatever the Verify commands said (the retro is a report), and 2
when it cannot write one: no plan file, no baseline_commit in it, no git repository.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from finesse.authoring.retro.collect import write_retro
from finesse.authoring.retro.model import Retro
from finesse.state.paths import find_project_root
from finesse.support.verify import DEFAULT_TIMEOUT_SECONDS


@click.command("retro")
@click.argument("plan")
@click.option("--project", type=click.Path(file_okay=False), default=None,
              help="Project root: where the Verify commands run and .claude/ralph/ is read "
                   "(default: $CLAUDE_PROJECT_DIR, else the git top level of the cwd).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
              default=DEFAULT_TIMEOUT_SECONDS, show_default=True, metavar="SECONDS",
              help="How long each Verify command may run.")
@click.option("--json", "as_json", is_flag=True, help="Print the retro as one JSON object.")
def command(plan: str, project: str | None, timeout: float, as_json: bool) -> None:
    """Review a plan after its run: commits and files since its baseline_commit, each phase's
    Verify command run again, the loops and their reports, its unresolved warnings.

    PLAN is finesse-plans/<name>-plan.md (relative to the current directory); the retro is
    written beside it as <name>-retro.md.
    """
    root = Path(project).resolve() if project else find_project_root(os.environ, os.getcwd())
    retro = write_retro(Path(plan), root, timeout=timeout)
    if as_json:
        click.echo(json.dumps(retro.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        click.echo(summary(retro))


def summary(retro: Retro) -> str:
    red = [phase for phase in retro.phases if phase.result != "pass"]
    ours = sum(1 for loop in retro.loops if loop.match == "prompt")
    lines = [
        f"{len(retro.commits)} commits and {len(retro.files_changed)} files changed since "
        f"{retro.baseline_commit[:12]} ({len(retro.uncommitted)} more not committed)",
        f"Verify: {len(retro.phases) - len(red)} of {len(retro.phases)} phases pass"
        + (": not " + ", ".join(str(phase.phase) for phase in red) if red else ""),
        f"Loops: {ours} of this plan, {len(retro.loops) - ours} others since the baseline",
    ]
    lines += [f"note: {note}" for note in retro.notes]
    lines.append(f"Wrote {retro.retro}")
    return "\n".join(lines)


