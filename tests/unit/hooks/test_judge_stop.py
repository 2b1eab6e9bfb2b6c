"""The main thread's stops in a judge-mode loop, through the Stop hook: background agents,
cancels, and the end of the budget with seed 002's final status."""

from __future__ import annotations

import json
from pathlib import Path

from finesse.judging.records import WORKER_TYPE
from finesse.loop.lifecycle import stop_loop
from finesse.models import judge_of
from finesse.state.paths import StatePaths
from finesse.state.store import LoopStore
from tests.helpers.judging import FAIL, WORKER, JudgeSession, context
from tests.helpers.states import T1, only_archived

START = '"Fix it" --judge --criteria "it is fixed" --verify "false" --max-iterations 2'
RUNNING = [{"id": "w1", "type": "subagent", "status": "running", "description": "attempt 1",
            "agent_type": WORKER_TYPE}]


def test_a_stop_while_the_worker_runs_in_the_background(judge_session: JudgeSession) -> None:
    judge_session.start(START)
    judge_session.subagent_start("w1", WORKER_TYPE)
    told = context(judge_session.stop("Spawned it.", background_tasks=RUNNING))
    assert told.startswith("Judge mode: the worker w1 is still running in the background.")
    assert judge_session.stop("Waiting.", background_tasks=RUNNING) is None
    state = judge_session.state()
    assert (state.iteration, judge_of(state).current.worker_id) == (1, "w1")  # type: ignore[union-attr]
    judge_session.subagent_stop("w1", WORKER_TYPE, json.dumps({**WORKER, "verifier_runs": [
        {"cmd": "false", "status": "fail", "output_excerpt": ""}]}))
    assert "Next: spawn the judge" in context(judge_session.stop("<task-notification>"))


def test_the_budget_ends_with_the_final_status(judge_session: JudgeSession) -> None:
    judge_session.start(START)
    failing = {**WORKER, "verifier_runs": [{"cmd": "false", "status": "fail",
                                            "output_excerpt": ""}]}
    for number in (1, 2):
        judge_session.worker(f"w{number}", failing)
        judge_session.stop()
        judge_session.judge(f"j{number}", FAIL)
        output = judge_session.stop()
    assert output is not None
    banner = output["systemMessage"]
    status = ("Final status (judge mode, 2 attempt(s)):\n"
              "- Passes: no verifier is green\n"
              "- Fails: `false` exit 1; text/csv header missing\n"
              "- Smallest next actions: set Content-Type: text/csv\n"
              "- Last judge (attempt 2): pass false, score 40")
    assert banner.startswith("Ralph loop (judge mode) stopped: 2 attempts made without a "
                             "passing verdict.\nLast failure: `false` exit 1\n")
    assert banner.endswith("Attempts: 2 (2 distinct worker(s))\n" + status)
    loop = only_archived(judge_session.root)
    assert (loop.outcome, loop.blocker) == ("limit", status)
    assert status in Path(loop.report_path).read_text()


def test_a_cancel_ends_it_and_removes_the_marker(judge_session: JudgeSession) -> None:
    judge_session.start(START)
    judge_session.subagent_start("w1", WORKER_TYPE)
    store = LoopStore(StatePaths(judge_session.root))
    stopped = stop_loop(store, judge_session.session_id, T1, "/cancel-ralph")
    assert stopped.ended is not None and stopped.ended.outcome == "cancelled"
    assert not store.paths.judge_marker(judge_session.session_id).exists()
    assert judge_session.tool("Write", {"file_path": "x"}) is None


def test_a_limit_resumed_goes_on_with_the_next_attempt(judge_session: JudgeSession) -> None:
    judge_session.start(START.replace("--max-iterations 2", "--max-iterations 1"))
    judge_session.worker("w1", {**WORKER, "verifier_runs": [
        {"cmd": "false", "status": "fail", "output_excerpt": ""}]})
    judge_session.stop()
    judge_session.judge("j1", FAIL)
    assert judge_session.stop()["systemMessage"].startswith(  # type: ignore[index]
        "Ralph loop (judge mode) stopped: 1 attempts made")
    marker = StatePaths(judge_session.root).judge_marker(judge_session.session_id)
    assert not marker.exists()
    resumed = judge_session._raw("UserPromptSubmit", prompt="/ralph-resume")
    from finesse.hooks import prompt_submit

    output = prompt_submit.handle(resumed, judge_session.env, str(judge_session.root))
    assert output is not None and "judge mode" in output["hookSpecificOutput"][
        "additionalContext"]
    assert marker.exists()
    assert "Judge mode, attempt 2/2: attempt 1 ended: failed. Next: spawn a NEW worker" in (
        context(judge_session.stop()))


def test_attempts_go_into_the_plan(judge_session: JudgeSession) -> None:
    from tests.helpers.repo import write

    root = judge_session.root
    write(root, "tasks/todo.md", "## Goal\nFix it.\n\n## Acceptance Criteria\n- it is fixed\n\n"
                                 "## Verification Commands\n- `false`\n\n## Attempts\n\n"
                                 "## Review\n")
    judge_session.start("--judge --plan tasks/todo.md")
    judge_session.worker("w1", {**WORKER, "verifier_runs": [
        {"cmd": "false", "status": "fail", "output_excerpt": ""}]})
    judge_session.stop()
    judge_session.judge("j1", FAIL)
    plan = (root / "tasks" / "todo.md").read_text()
    assert ("### Iteration 1 (2026-11-30 07:" in plan
            and "- Result: failed\n- Approach: Added the CSV route.\n" in plan
            and "- Learning: Set the Content-Type header of the CSV route.\n" in plan
            and "- Verifier: `false` red (exit 1)" in plan)
