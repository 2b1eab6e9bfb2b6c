"""`ralph start --judge`, `ralph status` and `ralph report --json` for a judge-mode loop:
every attempt, whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finesse.models import judge_of
from finesse.state.store import LoopStore
from tests.helpers.cli import run
from tests.helpers.judging import FAIL, PASS, WORKER, JudgeSession
from tests.helpers.states import SESSION

RAN_TRUE = {**WORKER, "verifier_runs": [{"cmd": "true", "status": "pass", "output_excerpt": ""}]}

pytestmark = pytest.mark.usefixtures("ralph_clock")


def test_start_in_judge_mode(capsys: pytest.CaptureFixture[str], root: Path,
                             store: LoopStore) -> None:
    code, out, err = run(capsys, "start", "--project", str(root), "--session", SESSION,
                         "Add CSV export", "--judge", "--criteria", "GET /r.csv is text/csv",
                         "--verify", "pytest -q")
    state = store.load(SESSION)
    assert state is not None and (code, err) == (0, "")
    assert out == (f"Started Ralph loop {state.loop_id} for session {SESSION}: up to 100 "
                   "iterations, promise RALPH_LOOP_STOP.\n")
    assert judge_of(state).criteria == ["GET /r.csv is text/csv"]
    assert store.paths.judge_marker(SESSION).is_file()


def test_start_refused_without_a_verifier(capsys: pytest.CaptureFixture[str],
                                          root: Path) -> None:
    code, out, err = run(capsys, "start", "--project", str(root), "--session", SESSION,
                         "x", "--judge", "--criteria", "y")
    assert (code, out) == (2, "")
    assert err == ('ralph start: judge mode needs at least one verifier: add --verify "CMD", or a '
                   "plan (--plan) with commands under ## Verification Commands\n")


def test_status_and_report_show_every_attempt(capsys: pytest.CaptureFixture[str],
                                              judge_session: JudgeSession) -> None:
    root = judge_session.root
    judge_session.start('"Fix" --judge --criteria "it works" --verify "true"')
    judge_session.worker("w1", RAN_TRUE)
    judge_session.stop()
    judge_session.judge("j1", FAIL)
    judge_session.stop()
    code, out, _ = run(capsys, "status", "--project", str(root))
    assert code == 0
    assert ("judge mode: it works\n  attempt 1: failed - worker w1, judge j1: pass false, "
            "score 40") in out
    judge_session.worker("w2", RAN_TRUE)
    judge_session.stop()
    judge_session.judge("j2", PASS)
    judge_session.stop()
    code, out, _ = run(capsys, "report", "--project", str(root), "--json")
    attempts = json.loads(out)["judge"]["attempts"]
    assert [(a["worker_id"], a["judge_id"], a["result"], a["worker"], a["verdict"])
            for a in attempts] == [("w1", "j1", "failed", RAN_TRUE, FAIL),
                                   ("w2", "j2", "success", RAN_TRUE, PASS)]
    assert [a["verification"][0]["command"] for a in attempts] == ["true", "true"]
    assert all(a["worker_started_at"] and a["judge_ended_at"] for a in attempts)
    code, out, _ = run(capsys, "report", "--project", str(root))
    assert "## Judge mode" in out and "### Attempt 1: failed" in out
