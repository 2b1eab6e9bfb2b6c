"""`ralph run`'s exit codes, from how its loops ended."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from finesse.headless.child import Cancel
from finesse.headless.exits import exit_code, worst
from finesse.headless.interrupts import cancel_on_signals
from tests.helpers.states import T1, make_state


@pytest.mark.parametrize(("outcome", "verified", "signalled", "code"), [
    ("success", True, None, 0),
    ("success", False, None, 1),  # on the agent's word alone: nothing checked it
    ("failure", None, None, 1),
    ("blocked", None, None, 1),
    ("error", None, None, 1),
    ("limit", None, None, 3),
    ("quiesced", None, None, 3),
    ("timeout", None, None, 3),
    ("budget", None, None, 3),
    ("quota", None, None, 3),
    ("cancelled", None, None, 1),  # `ralph cancel`, the kill switch
    ("cancelled", None, signal.SIGINT, 130),
    ("cancelled", None, signal.SIGTERM, 143),
    ("aborted", None, None, 1),
])
def test_each_end_has_its_code(tmp_path: Path, outcome: str, verified: bool | None,
                               signalled: int | None, code: int) -> None:
    state = make_state(tmp_path, outcome=outcome, verified=verified, ended_at=T1)
    assert exit_code(state, signalled) == code


@pytest.mark.parametrize(("codes", "code"), [
    ([], 0), ([0, 0], 0), ([0, 3], 3), ([3, 1, 0], 1), ([1, 130, 3], 130), ([2, 3], 2)])
def test_a_graphs_code_is_its_worst_loops(codes: list[int], code: int) -> None:
    assert worst(codes) == code


def test_sigint_and_sigterm_ask_for_a_cancel_while_inside_only() -> None:
    cancel = Cancel()
    before = signal.getsignal(signal.SIGTERM)
    with cancel_on_signals(cancel):
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)  # a second one changes nothing
    assert (cancel.requested, cancel.by, cancel.signal) == (True, "SIGTERM", signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) == before
