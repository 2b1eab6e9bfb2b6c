"""`ralph run`'s exit codes, for CI: what a loop's end means to the job that ran it.

| code | when |
| --- | --- |
| 0 | success, verified: green verification commands or a green gate |
| 1 | failure, blocked, an unverified success (nothing checked the agent's word), a merge
       conflict or failure of a graph, a loop cancelled from outside (`ralph cancel`) |
| 2 | usage error: bad arguments or files, nothing was started |
| 3 | a resumable stop: the iteration cap, quiesced, timed out, a budget or a usage limit;
       `ralph resume` goes on |
| 130, 143 | cancelled by SIGINT (Ctrl-C) or SIGTERM: 128 + the signal, as a shell reports it |
"""

from __future__ import annotations

from finesse.models import LoopState

SUCCESS = 0
FAILURE = 1
USAGE = 2
RESUMABLE_STOP = 3
RESUMABLE_OUTCOMES = frozenset({"limit", "quiesced", "timeout", "budget", "quota"})


def exit_code(state: LoopState, signal_number: int | None = None) -> int:
    """The exit code of a run that ended with `state`; `signal_number` is the signal that
    cancelled it, when one did."""
    if state.outcome == "success":
        return SUCCESS if state.verified else FAILURE
    if state.outcome in RESUMABLE_OUTCOMES:
        return RESUMABLE_STOP
    if state.outcome in ("cancelled", "aborted") and signal_number:
        return 128 + signal_number
    return FAILURE


def worst(codes: list[int]) -> int:
    """One code for several loops (a graph): a cancel, then a failure, then a resumable
    stop, then success."""
    signalled = [code for code in codes if code > RESUMABLE_STOP]
    if signalled:
        return signalled[0]
    for wanted in (FAILURE, USAGE, RESUMABLE_STOP):
        if wanted in codes:
            return wanted
    return SUCCESS
