"""The judge-mode hooks in process, in a real git project: whole loops through SubagentStart,
SubagentStop, PreToolUse and Stop, and the hostile cases (compaction's SubagentStop, an
agent resumed or doubled, a tree that changes under the judge)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from finesse.judging.records import JUDGE_TYPE, WORKER_TYPE
from finesse.models import judge_of
from finesse.state.paths import StatePaths
from tests.helpers.judging import FAIL, PASS, WORKER, JudgeSession, context
from tests.helpers.repo import write
from tests.helpers.states import only_archived

START = '"Create done.txt" --judge --criteria "done.txt says ok" --verify "grep -q ok done.txt"'
DONE = {**WORKER, "summary": "Wrote done.txt.", "verifier_runs": [
    {"cmd": "grep -q ok done.txt", "status": "pass", "output_excerpt": ""}]}


def create_done(root: Path) -> None:
    write(root, "done.txt", "ok\n")


def test_a_failed_attempt_then_a_fresh_worker_and_a_pass(judge_session: JudgeSession) -> None:
    root = judge_session.root
    started = context(judge_session.start(START))
    assert started.startswith("A Ralph loop in judge mode is running in this session")
    assert StatePaths(root).judge_marker(judge_session.session_id).is_file()

    brief = context(judge_session.subagent_start("w1", WORKER_TYPE))
    assert "## Task (fixed, verbatim)\n<ralph-task>\nCreate done.txt\n</ralph-task>" in brief
    assert judge_session.subagent_stop("w1", WORKER_TYPE, json.dumps(
        {**DONE, "verifier_runs": [{"cmd": "grep -q ok done.txt", "status": "fail",
                                    "output_excerpt": "no file"}]})) is None
    assert "Next: spawn the judge" in context(judge_session.stop("Worker back."))
    judged = context(judge_session.subagent_start("j1", JUDGE_TYPE))
    assert "- `grep -q ok done.txt`: red (exit 2)" in judged
    assert judge_session.subagent_stop("j1", JUDGE_TYPE, json.dumps(
        {**FAIL, "next_iteration_focus": "Create done.txt containing ok."})) is None
    step = context(judge_session.stop("The judge failed it."))
    assert "Judge mode, attempt 2/100: attempt 1 ended: failed." in step
    assert "Focus for this attempt: Create done.txt containing ok" in step

    second = context(judge_session.subagent_start("w2", WORKER_TYPE))
    assert "## Next attempt focus\nCreate done.txt containing ok." in second
    create_done(root)
    assert judge_session.subagent_stop("w2", WORKER_TYPE, "```json\n" + json.dumps(DONE)
                                       + "\n```") is None
    judge_session.stop("Worker back.")
    assert judge_session.judge("j2", PASS) is None
    ended = judge_session.stop("<promise>RALPH_LOOP_STOP</promise>")
    assert ended is not None
    banner = ended["systemMessage"]
    assert banner.startswith("Ralph loop done (judge mode): the judge passed attempt 2/100 "
                             "(score 95), verified: `grep -q ok done.txt` exit 0.")
    assert banner.endswith("Attempts: 2 (2 distinct worker(s))")
    loop = only_archived(root)
    assert (loop.outcome, loop.verified, [entry.result for entry in loop.iterations]) == (
        "success", True, ["failed", "success"])
    assert [attempt.worker_id for attempt in judge_of(loop).attempts] == ["w1", "w2"]
    assert not StatePaths(root).judge_marker(judge_session.session_id).exists()
    report = Path(loop.report_path).read_text()
    assert "## Judge mode" in report and "### Attempt 2: success" in report


def test_a_worker_that_claims_done_on_a_red_verifier_is_not_a_success(
        judge_session: JudgeSession) -> None:
    judge_session.start(START)
    judge_session.worker("w1", DONE)  # claims pass, wrote nothing
    judge_session.stop()
    judge_session.judge("j1", PASS)  # a careless judge
    step = context(judge_session.stop("Done!"))
    assert "attempt 1 ended: failed" in step
    [attempt] = judge_of(judge_session.state()).attempts
    assert attempt.note == ("the judge passed it, but the plugin's verifiers are red: "
                            "`grep -q ok done.txt`")


def test_a_judge_pass_while_a_protected_path_changed_is_not_a_success(
        judge_session: JudgeSession) -> None:
    root = judge_session.root
    write(root, "src/billing/rates.py", "RATE = 1\n")
    judge_session.start(START + " --protect src/billing/")

    def work() -> None:
        create_done(root)
        write(root, "src/billing/rates.py", "RATE = 2\n")

    judge_session.worker("w1", DONE, work)
    judge_session.stop()
    assert "## Protected paths (must not change)\n- `src/billing`" in context(
        judge_session.subagent_start("j1", JUDGE_TYPE))
    judge_session.subagent_stop("j1", JUDGE_TYPE, json.dumps(PASS))
    assert "attempt 1 ended: failed" in context(judge_session.stop())
    [attempt] = judge_of(judge_session.state()).attempts
    assert attempt.note == ("the judge passed it, but protected paths changed: "
                            "src/billing/rates.py")


def test_invalid_judge_json_twice_then_valid(judge_session: JudgeSession) -> None:
    judge_session.start(START)
    judge_session.worker("w1", DONE, lambda: create_done(judge_session.root))
    judge_session.stop()
    judge_session.subagent_start("j1", JUDGE_TYPE)
    first = judge_session.subagent_stop("j1", JUDGE_TYPE, "Looks good to me, pass!")
    assert first is not None and first["decision"] == "block"
    assert "try 1 of 2" in first["reason"]
    second = judge_session.subagent_stop("j1", JUDGE_TYPE, json.dumps({**PASS, "pass": "yes"}))
    assert second is not None and second["reason"].startswith(
        "Your final message does not hold the judge JSON the loop needs: pass: Input should "
        "be a valid boolean.")
    assert judge_session.subagent_stop("j1", JUDGE_TYPE, json.dumps(PASS)) is None
    assert judge_session.stop()["systemMessage"].startswith(  # type: ignore[index]
        "Ralph loop done (judge mode)")
    [attempt] = judge_of(only_archived(judge_session.root)).attempts
    assert attempt.judge_problems == [
        "no JSON found: reply with the JSON object alone, or inside one ```json fenced block",
        "pass: Input should be a valid boolean"]


def test_a_worker_that_skips_a_verifier_must_say_why(judge_session: JudgeSession) -> None:
    judge_session.start(START)
    silent = {**DONE, "verifier_runs": []}
    retry = judge_session.worker("w1", silent)
    assert retry is not None and "verifier_runs lacks `grep -q ok done.txt`" in retry["reason"]
    explained = {**silent, "remaining_known_failures": [
        "`grep -q ok done.txt` not run: no shell here; evidence used instead: read done.txt"]}
    assert judge_session.subagent_stop("w1", WORKER_TYPE, json.dumps(explained)) is None


def test_a_judges_verdict_is_void_when_the_tree_changes_under_it(
        judge_session: JudgeSession) -> None:
    root = judge_session.root
    judge_session.start(START)
    judge_session.worker("w1", DONE, lambda: create_done(root))
    judge_session.stop()
    judge_session.subagent_start("j1", JUDGE_TYPE)
    write(root, "sneaky.txt", "changed while judging\n")
    assert judge_session.subagent_stop("j1", JUDGE_TYPE, json.dumps(PASS)) is None
    current = judge_of(judge_session.state()).current
    assert current is not None and current.verdict is None
    assert current.void == ["the working tree changed while the judge ran"]
    assert current.outside_changes == [
        "sneaky.txt (changed outside a worker, while a judge ran)"]
    assert "Next: spawn the judge" in context(judge_session.stop())
    # The next judge sees the verifiers run again on the changed tree.
    assert "## The plugin's own verifier run" in context(
        judge_session.subagent_start("j2", JUDGE_TYPE))


def test_compactions_subagent_stop_and_other_agents_are_left_alone(
        judge_session: JudgeSession) -> None:
    judge_session.start(START)
    judge_session.subagent_start("w1", WORKER_TYPE)
    before = judge_session.state()
    assert judge_session.subagent_stop("ae06b5", "", "<summary>fake</summary>") is None
    assert judge_session.subagent_start("gp1", "general-purpose") is None
    assert judge_session.subagent_stop("gp1", "general-purpose", "done") is None
    assert judge_session.subagent_stop("w9", WORKER_TYPE, json.dumps(DONE)) is None
    assert judge_session.state() == before


def test_a_resumed_worker_is_not_counted_and_cannot_write(judge_session: JudgeSession) -> None:
    judge_session.start(START)
    judge_session.worker("w1", DONE)
    judge_session.stop()
    judge_session.judge("j1", FAIL)
    judge_session.stop()
    resumed = context(judge_session.subagent_start("w1", WORKER_TYPE))  # SendMessage
    assert "already worked for an earlier attempt" in resumed
    denied = judge_session.tool("Write", {"file_path": "x"}, agent_id="w1",
                                agent_type=WORKER_TYPE)
    assert denied is not None and denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert judge_session.subagent_stop("w1", WORKER_TYPE, json.dumps(DONE)) is None
    assert judge_of(judge_session.state()).current is None


def test_the_kill_switch_stops_new_agents_at_once(judge_session: JudgeSession) -> None:
    judge_session.start(START)
    paths = StatePaths(judge_session.root)
    paths.kill_switch.write_text("")
    assert context(judge_session.subagent_start("w1", WORKER_TYPE)) == (
        "You are not counted by this judge-mode loop: it is being stopped (the kill switch). "
        "Do not change anything; reply with one line saying so and stop.")
    ended = judge_session.stop()
    assert ended is not None and ended["systemMessage"].startswith(
        "Ralph loop (judge mode) cancelled by the kill switch at attempt 1/100.")


def test_without_a_judge_loop_the_hooks_say_nothing(judge_session: JudgeSession) -> None:
    assert judge_session.subagent_start("w1", WORKER_TYPE) is None
    assert judge_session.subagent_stop("w1", WORKER_TYPE, "{}") is None
    judge_session.start('"plain loop" --max-iterations 2')
    assert judge_session.subagent_start("w1", WORKER_TYPE) is None
    assert judge_session.tool("Write", {"file_path": "x"}) is None


def test_a_judge_loop_in_a_monorepo_project_with_a_name_that_is_not_utf8(
        judge_session: JudgeSession, monorepo: Path) -> None:
    # The project is pkg/ of a larger repository: an edit in other/ while the judge works is
    # outside the project and voids nothing; a worker's file with a Latin-1 name is fine.
    session = JudgeSession(monorepo)
    session.start(START)

    def work() -> None:
        create_done(monorepo)
        (monorepo / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"menu\n")

    session.worker("w1", DONE, work)
    session.stop("Worker back.")
    session.subagent_start("j1", JUDGE_TYPE)
    write(monorepo.parent, "other/lib.py", "LIB = 2\n")  # the user, elsewhere in the repo
    session.subagent_stop("j1", JUDGE_TYPE, json.dumps(PASS))
    ended = session.stop("<promise>RALPH_LOOP_STOP</promise>")
    assert ended is not None
    assert ended["systemMessage"].startswith(
        "Ralph loop done (judge mode): the judge passed attempt 1/100 (score 95), verified: "
        "`grep -q ok done.txt` exit 0.")
    loop = only_archived(monorepo)
    assert (loop.outcome, loop.verified) == ("success", True)
    assert (monorepo.parent / "other" / "lib.py").read_text() == "LIB = 2\n"
