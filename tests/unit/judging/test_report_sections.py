"""What judge mode adds to the report, the banner and `ralph status`: every attempt whole,
and seed 002's final status when the loop stops short of a pass."""

from __future__ import annotations

import json

from finesse.judging import steps
from finesse.judging.decide import decide_stop
from finesse.judging.report_sections import final_status, judge_banner, judge_report, status_lines
from finesse.loop.final_report import EndFacts, render_report
from tests.helpers.judging import FAIL, PASS, WORKER, at, attempt, judge_loop, red, view
from tests.helpers.states import make_state


def test_other_loops_get_nothing() -> None:
    from pathlib import Path

    plain = make_state(Path("/p"))
    assert (final_status(plain), judge_banner(plain), judge_report(plain),
            status_lines(plain)) == ("", "", "", [])


def test_the_final_status_before_any_verifier_ran() -> None:
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    assert final_status(state) == (
        "Final status (judge mode, 1 attempt(s)):\n"
        "- Passes: no verifier has run yet\n"
        "- Fails: nothing the last judge or the verifiers named\n"
        "- Smallest next actions: spawn a worker and a judge")


def test_the_report_keeps_every_attempt_whole() -> None:
    state = attempt(judge_loop(), "w1", "j1", FAIL, [red()])
    state = decide_stop(state, view(5)).state
    state = attempt(state, "w2", "j2", PASS, minute=10)
    ended = decide_stop(state, view(20)).state
    text = judge_report(ended)
    assert text.startswith("\n## Judge mode\n\nAcceptance criteria:\n- GET /reports/1.csv "
                           "returns 200 and text/csv\n- existing tests still pass\n\n"
                           "Verifiers: `pytest -q`\n\nChanges outside any worker:\n- none seen\n")
    assert ("### Attempt 1: failed\n\n- Why: Set the Content-Type header of the CSV route.\n"
            "- Worker `w1`, 60 s\n```json\n" + json.dumps(WORKER, indent=2)) in text
    assert "- The plugin's verifier run:\n  - `pytest -q`: red (exit 1, 0.5 s)" in text
    assert "- Judge `j1`, 60 s\n```json\n" + json.dumps(FAIL, indent=2) + "\n```" in text
    assert "### Attempt 2: success" in text and json.dumps(PASS, indent=2) in text
    assert judge_banner(ended) == "\nAttempts: 2 (2 distinct worker(s))"
    assert status_lines(ended) == [
        "judge mode: GET /reports/1.csv returns 200 and text/csv; existing tests still pass",
        "  attempt 1: failed - worker w1, judge j1: pass false, score 40",
        "  attempt 2: success - worker w2, judge j2: pass true, score 95"]


def test_a_limit_puts_the_final_status_in_the_banner_and_the_report() -> None:
    state = attempt(judge_loop(max_iterations=1), "w1", "j1", FAIL, [red()])
    ended = decide_stop(state, view(5)).state
    assert judge_banner(ended) == "\nAttempts: 1 (1 distinct worker(s))\n" + ended.blocker
    # The report's Blocker section holds it, once (judge_report used to repeat it).
    facts = EndFacts(files=[], lines=None, is_repository=False, state_file="s.json",
                     scope="/project")
    report = render_report(ended, facts) + judge_report(ended)
    assert report.count(ended.blocker) == 1
    assert "\n## Blocker\n\n" + ended.blocker + "\n" in report
    assert ended.blocker.startswith("Final status (judge mode, 1 attempt(s)):")
