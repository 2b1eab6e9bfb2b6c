"""Gate mode's work at each stop: run the gate, then commit, ask for a repair, or revert.

For long unattended runs git is the loop's memory: every green iteration is committed, a red
one gets exactly one repair, and a repair that is still red is undone, back to the commit the
iteration started from, and the gate is run on that baseline (red there means the gate
itself is broken: an infrastructure failure). This module does the I/O and reports what
happened; `engine.decide` turns it into counters, ending rules and the next prompt.

Crash safety (docs/design.md): before a commit or a revert touches git, the step writes an
intent record (`finesse.state.intents`) naming the action, the iteration, the base and the
gate's results. A stop (or `ralph run`) that finds one still live for the state it loaded
finishes or rolls back the interrupted action first: a commit git has made (found by its
trailer) is this stop's step, one never made is rolled back and the gate runs again; a
revert is run again to its end (it is idempotent) and is this stop's step. So the
iteration is counted, noted and committed once, and never with work the gate has not seen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from finesse.errors import FinesseError
from finesse.loop.gate import commits, revert, trail
from finesse.models import Gate, LoopState
from finesse.record import replace
from finesse.results import CommandResult, GateStep
from finesse.schema import SchemaError, from_dict, to_dict
from finesse.signals import record_fields
from finesse.state.intents import GATE_OP, Intents, stamp
from finesse.support.markdown import strip_code

Runner = Callable[[Sequence[str], Path], list[CommandResult]]
Log = Callable[[str], None]


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


def iteration_base(state: LoopState, root: Path) -> str:
    """The commit a revert goes back to: the state's base, or the loop's last commit after
    it when git has one the state does not know of yet (the state's save was lost)."""
    gate = state.gate
    assert gate is not None
    base = gate.iteration_base or commits.head_sha(root)
    later = trail.loop_commits(root, state.loop_id, base)
    return later[0][0] if later else base


def pending_step(intents: Intents | None, state: LoopState) -> dict[str, Any] | None:
    """The session's gate step that was interrupted against this very state, if any."""
    if intents is None:
        return None
    record = intents.read(state.session_id)
    if record is None or record.get("op") != GATE_OP or record.get("stamp") != stamp(state):
        return None
    return record


def _begin(intents: Intents | None, state: LoopState, action: str, results: list[CommandResult],
           **fields: str) -> None:
    if intents is not None:
        intents.write(state.session_id, {
            "op": GATE_OP, "stamp": stamp(state), "loop_id": state.loop_id,
            "iteration": state.iteration, "action": action,
            "results": [to_dict(result) for result in results], **fields})


def _results(record: dict[str, Any]) -> list[CommandResult] | None:
    try:
        return [from_dict(CommandResult, item) for item in record.get("results") or []]
    except (SchemaError, TypeError, ValueError):
        return None


def _commit(state: LoopState, root: Path, results: list[CommandResult], message_summary: str,
            base: str | None) -> GateStep:
    commit = commits.commit_iteration(root, iteration=state.iteration, summary=message_summary,
                                      loop_id=state.loop_id)
    head = commits.head_sha(root)
    if commit is None and head != base:
        commit = head  # the agent committed its work itself
    return GateStep(results, "committed" if commit else "empty", commit=commit)


def _revert(state: LoopState, root: Path, results: list[CommandResult], base: str,
            run: Runner | None) -> GateStep:
    """The revert, then the gate on the reverted baseline (not with no `run`: a cancel ends
    the loop, and runs nothing of the gate's)."""
    reverted = revert.revert_to(root, base, loop_id=state.loop_id,
                                spare=[state.notebook] if state.notebook else [])
    baseline = None if run is None else run(state.gate.commands if state.gate else [], root)
    return GateStep(results, "reverted", commit=reverted.revert_commit,
                    restored=list(reverted.restored), removed=list(reverted.removed),
                    untouched=list(reverted.untouched), baseline=baseline)


def _clear_own_lock(root: Path, record: dict[str, Any]) -> None:
    """An index.lock the killed step left (its index restore, or a git it ran, killed
    half-way) would stop every git command: removed when it can only be that one's."""
    from finesse.support.git_index import remove_lock_left_by

    remove_lock_left_by(commits.index_path(commits.git_in(root)), record)


def _finish(record: dict[str, Any], state: LoopState, root: Path,
            run: Runner | None) -> GateStep | None:
    """The interrupted step, finished: a commit git has already made is taken as this
    stop's step; a revert is run again (restoring what is restored already changes
    nothing; what is left of the iteration's files is removed), since a half-reverted tree
    must never be judged, let alone committed. None: rolled back instead, a commit that was
    never made (the tree may hold more by now, and the gate judges it again)."""
    _clear_own_lock(root, record)
    results = _results(record)
    action = record.get("action")
    base = record.get("base")
    if results is None or action not in ("commit", "revert") or not isinstance(base, str):
        return GateStep([], "error", error="the record of an interrupted gate step is "
                        "unreadable; nothing was committed or reverted: check `git status`")
    if action == "commit":
        found = trail.iteration_commit(root, state.loop_id, state.iteration, base)
        if found is None:
            return None
        step = GateStep(results, "committed", commit=found)
        said = f"its commit {found[:12]} was made already"
    else:
        step = _revert(state, root, results, base, run)
        said = f"its revert to {base[:12]} was finished"
    return replace(step, recovered=(
        f"the gate step of iteration {state.iteration} was interrupted (the hook was "
        f"killed): {said}"))


def _remove_own_temps(state: LoopState, root: Path) -> None:
    """Before a commit: a temp file a killed write left beside the notebook (its own folder
    was on another file system) is never committed."""
    if state.notebook:
        from finesse.support.writes import remove_stale_temps

        notebook = root / state.notebook
        remove_stale_temps(notebook.parent, prefix=f".{notebook.name}.")


def _finish_pending(pending: dict[str, Any], state: LoopState, root: Path,
                    run: Runner | None, log: Log | None) -> GateStep | None:
    """The interrupted step `pending` finished (`_finish`), or an error step when the branch
    moved or git failed; None when its commit was never made."""
    assert state.gate is not None
    moved = _branch_moved(state.gate, root)
    if moved:
        return GateStep(_results(pending) or [], "error", error=moved)
    _remove_own_temps(state, root)
    try:
        finished = _finish(pending, state, root, run)
    except FinesseError as err:
        finished = GateStep(_results(pending) or [], "error", error=str(err))
    if finished is not None and log is not None and finished.recovered:
        log(f"loop {state.loop_id}: {finished.recovered}")
    return finished


def finish_interrupted(state: LoopState, root: Path, intents: Intents,
                       log: Log | None = None, run: Runner | None = None) -> GateStep | None:
    """The gate step interrupted against this very state, finished as its next stop would
    (a commit git made is the iteration's, a revert is run to its end), for a caller that
    cannot wait for that stop: a cancel (with no `run`: nothing of the gate is run, since
    the loop ends), or `ralph run` picking up a loop before its next agent works (a revert
    then checks its baseline with `run`). So no loop ends on, and no agent works on, a
    half-reverted tree, and no committed iteration goes unrecorded. None when no step was
    interrupted, or its commit was never made (the iteration's work stays in the tree,
    for the gate to judge at the next stop)."""
    if state.gate is None:
        return None
    pending = pending_step(intents, state)
    if pending is None:
        return None
    return _finish_pending(pending, state, root, run, log)


def run_gate_step(state: LoopState, root: Path, reply: str | None, run: Runner,
                  intents: Intents | None = None, log: Log | None = None) -> GateStep:
    gate = state.gate
    if gate is None:
        raise ValueError("a gate step for a loop without a gate")
    pending = pending_step(intents, state)
    if pending is not None:
        finished = _finish_pending(pending, state, root, run, log)
        if finished is not None:
            return finished
        if log is not None:
            log(f"loop {state.loop_id}: the gate step of iteration {state.iteration} was "
                "interrupted before its commit: the gate is run again")
    results = run(gate.commands, root)
    moved = _branch_moved(gate, root)
    if moved:
        return GateStep(results, "error", error=moved)
    try:
        if all(result.passed for result in results):
            _remove_own_temps(state, root)
            summary = summary_line(reply)
            base = gate.iteration_base or commits.head_sha(root)
            _begin(intents, state, "commit", results, base=base, summary=summary)
            return _commit(state, root, results, summary, gate.iteration_base)
        if not gate.repairing:
            return GateStep(results, "repair")
        base = iteration_base(state, root)
        _begin(intents, state, "revert", results, base=base)
        return _revert(state, root, results, base, run)
    except FinesseError as err:
        return GateStep(results, "error", error=str(err))
