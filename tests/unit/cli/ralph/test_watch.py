"""`ralph watch`: the loops of the project as plain lines with --once (and on a pipe, again
at each change until no loop is active), checked whole; it reads and never writes: an
unreadable loop file or a FIFO among them is shown, never moved or opened."""

from __future__ import annotations

import os
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

from finesse.cli.ralph import watch
from finesse.judging import steps
from finesse.models import Gate, HeadlessRun, IterationRecord
from finesse.record import replace
from finesse.results import ModelUsage
from finesse.state.store import LoopStore
from tests.helpers.cli import run
from tests.helpers.judging import at, judge_loop
from tests.helpers.states import OTHER_SESSION, SESSION, T0, T1, command_result, make_state

RUN_ID = "5f0c2a8e-7d1b-4c3a-9e8f-0a1b2c3d4e5f"
NOW = T0 + timedelta(minutes=12, seconds=34)


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "utcnow", lambda: NOW)
    monkeypatch.setattr(watch, "POLL_SECONDS", 0.05)


def every_file(root: Path) -> dict[str, tuple[int, bytes]]:
    """Each path under .claude/ with its mtime and (for a regular file) its bytes."""
    found = {}
    for path in sorted((root / ".claude").rglob("*")):
        info = path.lstat()
        content = path.read_bytes() if path.is_file() and not path.is_fifo() else b""
        found[str(path.relative_to(root))] = (info.st_mtime_ns, content)
    return found


def populate(root: Path, store: LoopStore) -> None:
    red = command_result("pytest -q", 1)
    usage = [ModelUsage("claude-sonnet-4-5", 30_000, 1_200, 0, 0)]
    store.save(make_state(
        root, RUN_ID, loop_id="20261130T070000Z-5f0c2a8e-aaa111", iteration=3,
        prompt="Make the\x1b[2J tests [bold]pass[/bold]", headless=HeadlessRun(),
        gate=Gate(["make check"]), learnings=["x is flaky", "the fixture needs a tmp dir"],
        iterations=[IterationRecord(number=1, started_at=T0, ended_at=T1, result="rejected",
                                    verification=[red], usage=usage, cost=0.1125),
                    IterationRecord(number=2, started_at=T1, ended_at=T1, result="continue",
                                    gate=[command_result("make check")],
                                    gate_action="committed")]))
    judged = judge_loop(root, session_id=OTHER_SESSION,
                        loop_id="20261130T070200Z-9a8b7c6d-bbb222",
                        started_at=T0 + timedelta(minutes=2), prompt="Add CSV export")
    store.save(steps.worker_start(judged, "agent-1", at(3)).state)
    (store.paths.loops / "garbage-0000.json").write_text("{not json")
    os.mkfifo(store.paths.loops / "fifo-0000.json")
    for minute, outcome, extra in ((5, "success", {"verified": True}), (9, "limit", {})):
        store.archive(make_state(
            root, SESSION, loop_id=f"20261130T06{minute:02d}00Z-0b7c5c3e-ccc{minute}",
            started_at=T0 - timedelta(minutes=60 - minute), outcome=outcome,
            ended_at=T0 - timedelta(minutes=50 - minute), iteration=2, prompt="Older task",
            iterations=[IterationRecord(number=n, started_at=T0, ended_at=T0, result="continue")
                        for n in (1, 2)], **extra))


EXPECTED = "\n".join([
    "ralph watch: {root} at 2026-11-30 07:12:34 UTC",
    "- 20261130T070000Z-5f0c2a8e-aaa111 · headless gate · iteration 3/8 · 12:34 · gate green "
    "(committed) · 31,200 tokens ~$0.11 est",
    "  task: Make the\ufffd[2J tests [bold]pass[/bold]",
    "  last learning: the fixture needs a tmp dir",
    "- 20261130T070200Z-9a8b7c6d-bbb222 · session judge · iteration 1/100 · 10:34 · no check "
    "yet · 0 tokens ~$0.00 est",
    "  task: Add CSV export",
    "  judge: attempt 1, worker at work",
    "Unreadable loop file (left as it is): fifo-0000.json",
    "Unreadable loop file (left as it is): garbage-0000.json",
    "Recently ended:",
    "- 20261130T060900Z-0b7c5c3e-ccc9 · limit reached · 2/8 iterations · 10:00 · 0 tokens "
    "~$0.00 est · ended 2026-11-30 06:19:00 UTC",
    "  task: Older task",
    "- 20261130T060500Z-0b7c5c3e-ccc5 · success (verified) · 2/8 iterations · 10:00 · 0 "
    "tokens ~$0.00 est · ended 2026-11-30 06:15:00 UTC",
    "  task: Older task",
    "",
])


def test_once_prints_every_loop_whole_and_changes_nothing(
        capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore) -> None:
    populate(root, store)
    before = every_file(root)
    assert run(capsys, "watch", "--once", "--project", str(root)) == (
        0, EXPECTED.format(root=root), "")
    assert every_file(root) == before


def test_a_loop_whose_record_is_archived_since_is_not_active(
        capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore) -> None:
    state = make_state(root, started_at=T0)
    store.save(state)
    time.sleep(0.01)
    store.paths.history.mkdir(parents=True)
    (store.paths.history / f"{state.loop_id}.json").write_text(
        replace(state, outcome="cancelled", ended_at=T1).to_json())
    code, out, _ = run(capsys, "watch", "--once", "--project", str(root))
    assert (code, out.splitlines()[1:4]) == (0, [
        "No active Ralph loop.", "Recently ended:",
        f"- {state.loop_id} · cancelled · 0/8 iterations · 5:00 · 0 tokens ~$0.00 est · "
        "ended 2026-11-30 07:05:00 UTC"])


def test_on_a_pipe_it_prints_again_at_each_change_until_no_loop_is_active(
        capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore) -> None:
    state = make_state(root, started_at=T0)
    store.save(state)

    def advance() -> None:
        time.sleep(0.3)
        store.save(replace(state, iteration=2))
        time.sleep(0.3)
        store.archive(replace(state, iteration=2, outcome="success", verified=True,
                              ended_at=T1))

    mover = threading.Thread(target=advance)
    mover.start()
    code, out, err = run(capsys, "watch", "--project", str(root))
    mover.join()
    head = f"ralph watch: {root} at 2026-11-30 07:12:34 UTC"
    loop = (f"- {state.loop_id} · session · iteration {{}}/8 · 12:34 · no check yet · 0 "
            "tokens ~$0.00 est")
    assert (code, err) == (0, "")
    assert out == "\n".join([
        head, loop.format(1), "  task: Make the tests pass", "",
        head, loop.format(2), "  task: Make the tests pass", "",
        head, "No active Ralph loop.", "Recently ended:",
        f"- {state.loop_id} · success (verified) · 0/8 iterations · 5:00 · 0 tokens ~$0.00 "
        "est · ended 2026-11-30 07:05:00 UTC", "  task: Make the tests pass", ""])


def test_no_loop_at_all(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    assert run(capsys, "watch", "--once", "--project", str(root)) == (
        0, f"ralph watch: {root} at 2026-11-30 07:12:34 UTC\nNo active Ralph loop.\n", "")


def test_a_symbolic_link_loop_in_the_loops_folder_is_shown_unreadable(
        capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore) -> None:
    """Two loop files linking to each other cannot be read: `ralph status` names them, and
    so does the watch (it passed over them, as if they were not there)."""
    store.save(make_state(root, started_at=T0))
    (store.paths.loops / "a-0000.json").symlink_to("b-0000.json")
    (store.paths.loops / "b-0000.json").symlink_to("a-0000.json")
    code, out, _ = run(capsys, "watch", "--once", "--project", str(root))
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith("Unreadable")] == [
        "Unreadable loop file (left as it is): a-0000.json",
        "Unreadable loop file (left as it is): b-0000.json"]
