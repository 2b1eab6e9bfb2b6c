"""Gate mode's work at each stop: run the gate, then commit, ask for a repair, or revert.

For long unattended runs git is the loop's memory: every green iteration is committed, a red
one gets exactly one repair, and a repair that is still red is undone, back to the commit the
iteration started from, and the gate is run on that baseline (red there means the gate
itself is broken: an infrastructure failure). This module does the I/O and reports what
happened; `engine.decide` turns it into counters, ending rules and the next prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from finesse.errors import FinesseError
from finesse.loop.gate import commits, revert
from finesse.models import CommandResult, GateStep, LoopState
from finesse.signals import record_fields
from finesse.support.markdown import strip_code

Runner = Callable[[Sequence[str], Path], list[CommandResult]]


def summary_line(reply: str | None) -> str:
    """The first line of the agent's summary: its `Approach:` line, else its first line."""
    text = reply or ""
    approach = record_fields(text).get("approach")
    if approach:
        return approach
    return next((line.strip() for line in strip_code(text).splitlines() if line.strip()), "")


def run_gate_step(state: LoopState, root: Path, reply: str | None, run: Runner) -> GateStep:
    results = run(state.gate, root)
    try:
        if all(result.passed for result in results):
            commit = commits.commit_iteration(root, iteration=state.iteration,
                                              summary=summary_line(reply),
                                              loop_id=state.loop_id)
            head = commits.head_sha(root)
            if commit is None and head != state.iteration_base:
                commit = head  # the agent committed its work itself
            return GateStep(results, "committed" if commit else "empty", commit=commit)
        if not state.repairing:
            return GateStep(results, "repair")
        base = state.iteration_base or commits.head_sha(root)
        reverted = revert.revert_to(root, base, loop_id=state.loop_id)
        return GateStep(results, "reverted", commit=reverted.revert_commit,
                        restored=list(reverted.restored), removed=list(reverted.removed),
                        baseline=run(state.gate, root))
    except FinesseError as err:
        return GateStep(results, "error", error=str(err))
