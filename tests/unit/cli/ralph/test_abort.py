"""`ralph abort`: end a loop now for good, or give up an ended one that could be resumed;
exit codes, stdout and stderr whole."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from finesse.record import replace
from finesse.state.store import LoopStore
from tests.helpers.cli import run
from tests.helpers.states import OTHER_SESSION, SESSION, T0, T1, files_under, make_state

pytestmark = pytest.mark.usefixtures("ralph_clock")


def test_abort_the_running_loop(capsys: pytest.CaptureFixture[str], root: Path,
                                store: LoopStore) -> None:
    store.save(make_state(root))
    assert run(capsys, "abort", "--project", str(root)) == (
        0, f"Ralph loop aborted by `ralph abort` at iteration 1/8. (session {SESSION})\n", "")
    [ended] = store.history()
    assert (ended.outcome, ended.ended_by, files_under(store.paths.loops)) == (
        "aborted", "`ralph abort`", [])


def test_abort_gives_up_an_ended_loop_that_could_be_resumed(
        capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore) -> None:
    capped = replace(make_state(root), outcome="limit", ended_at=T0, updated_at=T0,
                     end_message="Ralph loop stopped: the cap of 8 iterations was reached.")
    store.archive(capped)
    assert run(capsys, "abort", "--session", SESSION, "--project", str(root)) == (
        0, f"The ended loop {capped.loop_id} was aborted: it can no longer be resumed.\n", "")
    assert store.history() == [replace(
        capped, outcome="aborted", ended_by="`ralph abort`", updated_at=T1,
        end_message="Ralph loop stopped: the cap of 8 iterations was reached. Then aborted by "
                    "`ralph abort`.")]
    # Given up: nothing left to resume.
    assert run(capsys, "resume", "--session", SESSION, "--project", str(root)) == (
        2, "", f"ralph resume: the last loop ({capped.loop_id}) ended in aborted, which cannot "
               "be resumed: start a new one with /ralph-loop\n")


def test_abort_all_with_two_sessions_and_a_name_that_is_not_utf8(
        capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore) -> None:
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1 name\n")
    store.save(make_state(root))
    store.save(make_state(root, OTHER_SESSION, started_at=T0.replace(minute=1)))
    code, out, err = run(capsys, "abort", "--all", "--project", str(root))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"Ralph loop aborted by `ralph abort` at iteration 1/8. (session {SESSION})",
        f"Ralph loop aborted by `ralph abort` at iteration 1/8. (session {OTHER_SESSION})"]
    assert sorted(loop.outcome or "" for loop in store.history()) == ["aborted", "aborted"]


def test_abort_with_nothing_to_abort(capsys: pytest.CaptureFixture[str], root: Path,
                                    store: LoopStore) -> None:
    assert run(capsys, "abort", "--project", str(root)) == (
        1, "", f"ralph abort: no active Ralph loop in {root}\n")
