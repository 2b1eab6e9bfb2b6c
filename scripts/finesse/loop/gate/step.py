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
from finesse.models import Gate, LoopState
from finesse.results import CommandResult, GateStep
from finesse.signals import record_fields
from finesse.support.markdown import strip_code

Runner = Callable[[Sequence[str], Path], list[CommandResult]]


def _branch_moved(gate: Gate, root: Path) -> str:
    """Why gate mode must not touch the tree this stop, or "": HEAD left the branch the loop
    started on (a switch, a detached HEAD). Committing or reverting there could undo a
    person's commits on another branch."""
    if gate.branch is None:
        return ""
    now = commits.current_branch(root)
    if now == gate.branch:
        return ""
    started = gate.branch.removeprefix("refs/heads/")
    seen = ("HEAD is detached" if now is None
            else f"HEAD is on {now.removeprefix('refs/heads/')}")
    return (f"the branch changed during the iteration: the loop runs on {started} and {seen}; "
            f"nothing was committed or reverted. Switch back (`git switch {started}`), check "
            "what the iteration did, then start a new loop")


def summary_line(reply: str | None) -> str:
    """The first line of the agent's summary: its `Approach:` line, else its first line."""
    text = reply or ""
    approach = record_fields(text).get("approach")
    if approach:
        return approach
    return next((line.strip() for line in strip_code(text).splitlines() if line.strip()), "")


def run_gate_step(state: LoopState, root: Path, reply: str | None, run: Runner) -> GateStep:
    gate = state.gate
    if gate is None:
        raise ValueError("a gate step for a loop without a gate")
    results = run(gate.commands, root)
    moved = _branch_moved(gate, root)
    if moved:
        return GateStep(results, "error", error=moved)
    try:
        if all(result.passed for result in results):
            commit = commits.commit_iteration(root, iteration=state.iteration,
                                              summary=summary_line(reply),
                                              loop_id=state.loop_id)
            head = commits.head_sha(root)
            if commit is None and head != gate.iteration_base:
                commit = head  # the agent committed its work itself
            return GateStep(results, "committed" if commit else "empty", commit=commit)
        if not gate.repairing:
            return GateStep(results, "repair")
        base = gate.iteration_base or commits.head_sha(root)
        reverted = revert.revert_to(root, base, loop_id=state.loop_id,
                                    spare=[state.notebook] if state.notebook else [])
        return GateStep(results, "reverted", commit=reverted.revert_commit,
                        restored=list(reverted.restored), removed=list(reverted.removed),
                        untouched=list(reverted.untouched),
                        baseline=run(gate.commands, root))
    except FinesseError as err:
        return GateStep(results, "error", error=str(err))
