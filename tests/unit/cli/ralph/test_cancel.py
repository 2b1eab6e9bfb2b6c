"""`ralph cancel`: stop a loop now; exit codes, stdout and stderr whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from finesse.record import replace
from finesse.state.store import LoopStore
from tests.helpers.cli import run
from tests.helpers.states import (
    OTHER_SESSION,
    SESSION,
    T0,
    T1,
    files_under,
    make_state,
)

pytestmark = pytest.mark.usefixtures("ralph_clock")


def test_cancel_the_one_loop(capsys: pytest.CaptureFixture[str], root: Path,
                             store: LoopStore) -> None:
    store.save(make_state(root))
    assert run(capsys, "cancel", "--project", str(root)) == (
        0, f"Ralph loop cancelled by `ralph cancel` at iteration 1/8. (session {SESSION})\n", ""
    )
    assert files_under(store.paths.loops) == []
    [ended] = store.history()
    report = store.paths.reports / f"{ended.loop_id}.md"
    assert ended == replace(make_state(root), **{
        "outcome": "cancelled", "ended_at": T1, "updated_at": T1,
        "end_message": "Ralph loop cancelled by `ralph cancel` at iteration 1/8.",
        "ended_by": "`ralph cancel`",

        "report_path": str(report),
    })
    assert files_under(store.paths.reports) == [report.with_suffix(".html").name, report.name]


def test_cancel_several_without_all_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    store.save(make_state(root))
    store.save(make_state(root, OTHER_SESSION))
    assert run(capsys, "cancel", "--project", str(root)) == (
        2,
        "",
        "ralph cancel: 2 loops are active: pick one with --session ID (see `ralph status`) or "
        "cancel them all with --all (see 'ralph cancel --help')\n",
    )
    assert files_under(store.paths.loops) == sorted([f"{SESSION}.json", f"{OTHER_SESSION}.json"])


def test_cancel_all(capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore) -> None:
    store.save(make_state(root))
    store.save(make_state(root, OTHER_SESSION, started_at=T0.replace(minute=1), iteration=3))
    assert run(capsys, "cancel", "--all", "--project", str(root)) == (
        0,
        f"Ralph loop cancelled by `ralph cancel` at iteration 1/8. (session {SESSION})\n"
        f"Ralph loop cancelled by `ralph cancel` at iteration 3/8. (session {OTHER_SESSION})\n",
        "",
    )
    assert files_under(store.paths.loops) == []
    assert [(loop.session_id, loop.outcome) for loop in store.history()] == [
        (SESSION, "cancelled"), (OTHER_SESSION, "cancelled")
    ]


@pytest.mark.parametrize("verb", ["cancel", "abort"])
def test_cancel_all_stops_every_loop_it_can(capsys: pytest.CaptureFixture[str], root: Path,
                                            store: LoopStore, verb: str) -> None:
    """One loop that cannot be locked (a FIFO at its lock file) stopped `--all` at once,
    with the other loops still running: each is stopped that can be, each other one named
    in a line, and the exit code says not all were."""
    import os

    store.save(make_state(root))
    store.save(make_state(root, OTHER_SESSION, started_at=T0.replace(minute=1), iteration=3))
    lock = store.paths.lock_file(SESSION)
    lock.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(lock)
    code, out, err = run(capsys, verb, "--all", "--project", str(root))
    past = "cancelled" if verb == "cancel" else "aborted"
    assert (code, out) == (
        1, f"Ralph loop {past} by `ralph {verb}` at iteration 3/8. (session {OTHER_SESSION})\n")
    assert err == (f"ralph {verb}: session {SESSION}: cannot lock {lock}: not a regular file "
                   "(a FIFO, device or socket); remove what is there, or make "
                   f"{store.paths.locks} a writable folder, then try again\n")
    assert [loop.session_id for loop in store.active_loops()] == [SESSION]


def test_cancel_one_session(capsys: pytest.CaptureFixture[str], root: Path,
                            store: LoopStore) -> None:
    store.save(make_state(root))
    store.save(make_state(root, OTHER_SESSION))
    other_before = store.paths.loop_file(OTHER_SESSION).read_bytes()
    assert run(capsys, "cancel", "--session", SESSION, "--project", str(root)) == (
        0, f"Ralph loop cancelled by `ralph cancel` at iteration 1/8. (session {SESSION})\n", ""
    )
    assert files_under(store.paths.loops) == [f"{OTHER_SESSION}.json"]
    assert store.paths.loop_file(OTHER_SESSION).read_bytes() == other_before


def test_cancel_without_loops(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    assert run(capsys, "cancel", "--project", str(root)) == (
        1, "", f"ralph cancel: no active Ralph loop in {root}\n"
    )


def test_cancel_unknown_session(capsys: pytest.CaptureFixture[str], root: Path,
                                store: LoopStore) -> None:
    store.save(make_state(root))
    assert run(capsys, "cancel", "--session", OTHER_SESSION, "--project", str(root)) == (
        1, "", f"ralph cancel: session {OTHER_SESSION} has no active Ralph loop\n"
    )
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--session", "../x"], "not a session id: '../x'"),
        (["--session", SESSION, "--all"], "give --session ID or --all, not both"),
    ],
)
def test_cancel_usage_errors(capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore,
                             argv: list[str], message: str) -> None:
    store.save(make_state(root))
    assert run(capsys, "cancel", "--project", str(root), *argv) == (
        2, "",
        f"ralph cancel: {message} (see 'ralph cancel --help')\n",
    )
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]
