"""`ralph resume`: reopen a loop that hit a limit, quiesced, timed out or was blocked; exit
codes, stdout and stderr whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from finesse.models import Budgets, IterationRecord, ResumeRecord
from finesse.record import replace
from finesse.results import ModelUsage
from finesse.state.store import LoopStore
from finesse.support import git as gitstate
from tests.helpers.cli import ended_loop, run
from tests.helpers.states import (
    OTHER_SESSION,
    SESSION,
    T0,
    T1,
    files_under,
    make_state,
)

pytestmark = pytest.mark.usefixtures("ralph_clock")


def test_resume_reopens_the_latest_resumable_loop(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    record = IterationRecord(number=8, started_at=T0, ended_at=T0, result="limit")
    loop_id = ended_loop(store, root, "aaa111", 10, iteration=8, iterations=[record],
                         learnings=["kept"], replans=1, idle_iterations=1)
    [previous] = store.history()
    assert run(capsys, "resume", "--project", str(root), "--max-iterations", "12") == (
        0,
        f"Resumed Ralph loop {loop_id} at iteration 9/12. It goes on at the next stop of "
        f"session {SESSION}: send any prompt in that session.\n",
        "",
    )
    assert store.load(SESSION) == replace(
        previous, outcome=None, ended_at=None, end_message="", report_path="", iteration=9,
        max_iterations=12, iteration_started_at=T1, updated_at=T1, idle_iterations=0,
        failure_streak=0, failure_fingerprint="",
        tree_fingerprint=gitstate.tree_fingerprint(root),
        resumes=[ResumeRecord(at=T1, after="limit", by="`ralph resume`")],
    )


def test_resume_of_another_session_with_session(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    store.archive(make_state(root, OTHER_SESSION, outcome="quiesced", ended_at=T1, iteration=3,
                             end_message="quiesced"))
    ended_loop(store, root, "aaa111", 20, outcome="success")  # this session's: not resumable
    code, out, err = run(capsys, "resume", "--project", str(root), "--session", OTHER_SESSION)
    assert (code, err) == (0, "")
    assert out.startswith("Resumed Ralph loop 20261130T070000Z-9a8b7c6d-abc123 at iteration 4/8.")
    assert store.load(OTHER_SESSION) is not None and store.load(SESSION) is None


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        ([], 2, "ralph resume: the last loop (20261130T071000Z-0b7c5c3e-aaa111) ended in success, "
                "which cannot be resumed: start a new one with /ralph-loop\n"),
        (["--session", OTHER_SESSION], 2,
         "ralph resume: no ended Ralph loop in this session to resume; start one with "
         "/ralph-loop\n"),
    ],
)
def test_resume_refusals(capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore,
                         argv: list[str], code: int, message: str) -> None:
    ended_loop(store, root, "aaa111", 10, outcome="success")
    before = files_under(store.paths.base)
    assert run(capsys, "resume", "--project", str(root), *argv) == (code, "", message)
    assert files_under(store.paths.base) == before


def test_resume_without_any_ended_loop(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    assert run(capsys, "resume", "--project", str(root)) == (
        2, "",
        "ralph resume: no ended Ralph loop in this project to resume; start one with /ralph-loop\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--session", "a/b"], "not a session id: 'a/b'"),
        (["--max-iterations", "0"],
         "Invalid value for '--max-iterations': 0 is not in the range 1<=x<=1000."),
        (["--timeout-minutes", "0"],
         "Invalid value for '--timeout-minutes': 0 is not in the range 1<=x<=10080."),
    ],
)
def test_resume_usage_errors(capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore,
                             argv: list[str], message: str) -> None:
    ended_loop(store, root, "aaa111", 10)
    assert run(capsys, "resume", "--project", str(root), *argv) == (
        2, "",
        f"ralph resume: {message} (see 'ralph resume --help')\n",

    )
    assert store.load(SESSION) is None


def test_resume_after_a_spent_budget(capsys: pytest.CaptureFixture[str], root: Path,
                                     store: LoopStore) -> None:
    spent = [IterationRecord(number=n, started_at=T0, ended_at=T0, result="continue", cost=1.5,
                             usage=[ModelUsage("claude-sonnet-4-5", 1000, 500, 500)])
             for n in (1, 2)]  # 4,000 tokens, an estimated $3.00
    ended_loop(store, root, "aaa111", 10, outcome="budget", iteration=2, iterations=spent,
               budgets=Budgets(max_cost=3.0))
    code, out, err = run(capsys, "resume", "--project", str(root))
    assert (code, out) == (2, "")
    assert err.startswith("ralph resume: the loop's budget is still spent (an estimated $3.00 ")
    assert err.endswith("resume with a larger one, e.g. --max-cost 6\n") and err.count("\n") == 1
    assert store.load(SESSION) is None
    assert run(capsys, "resume", "--project", str(root), "--max-cost", "ten") == (
        2, "", "ralph resume: --max-cost needs an amount in US dollars above 0, not 'ten': for "
               "example --max-cost 5 or --max-cost 12.50\n")
    code, out, err = run(capsys, "resume", "--project", str(root), "--max-cost", "$6",
                         "--max-tokens", "1_000_000", "--stop-at-quota", "90")
    assert (code, err) == (0, "")
    state = store.load(SESSION)
    assert state is not None
    assert (state.iteration, state.budgets.max_cost, state.budgets.max_tokens,
            state.budgets.stop_at_quota) == (
        3, 6.0, 1_000_000, 90)
