"""What judge mode says to each role: seed 002's worker and judge templates (the task
verbatim, criteria, exact verifiers, the last judge report; a failure history only when
failures repeat), bounded in size whatever the agents wrote."""

from __future__ import annotations

from pathlib import Path

from finesse.judging import prompts, steps
from finesse.judging.prompts import (
    HISTORY_AFTER,
    JUDGE_RULES,
    failure_history,
    judge_prompt,
    orchestrator_context,
    worker_prompt,
)
from finesse.judging.records import JudgeState
from finesse.models import LoopState
from finesse.record import replace
from tests.helpers.judging import FAIL, WORKER, at, attempt, green, judge, judge_loop, red
from tests.helpers.states import command_result


def failed_attempts(count: int) -> LoopState:
    """`count` attempts failed by the judge, each followed by the stop that moves on."""
    state = judge_loop()
    for number in range(count):
        verdict = {**FAIL, "next_iteration_focus": f"Fix cause {number + 1}."}
        state = attempt(state, f"w{number}", f"j{number}", verdict, minute=10 * number)
        state = replace(state, iteration=state.iteration + 1)
    return state


def test_the_first_worker_prompt_is_seed_002s_template() -> None:
    state = judge_loop(prompt="Add CSV export to the reports API")
    assert worker_prompt(state, judge(state)) == (
        "You are the worker of attempt 1/100 of a Ralph loop in judge mode (finesse plugin). "
        "You make the changes and run the verifiers; only a separate judge can pass the work: "
        "your own claim never ends the loop.\n\n"
        "## Task (fixed, verbatim)\n<ralph-task>\nAdd CSV export to the reports API\n"
        "</ralph-task>\n\n"
        "## Acceptance criteria\n- GET /reports/1.csv returns 200 and text/csv\n"
        "- existing tests still pass\n\n"
        "## Verifiers (run these exact commands; the plugin runs them itself after you stop)\n"
        "- `pytest -q`\n\n"
        "## Your reply\nMake the smallest set of changes that meets every criterion, run every "
        "verifier, then end with only this JSON (no prose around it; a ```json fence is "
        "accepted), with exactly these fields:\n" + prompts.WORKER_CONTRACT + "\n`status` is "
        '"pass" or "fail". If you cannot run a verifier, leave it out of `verifier_runs` and '
        "say in `remaining_known_failures`: \"`<the command>` not run: <exactly why>; "
        'evidence used instead: <what>".')


def test_after_a_failure_the_last_judge_report_and_one_focus() -> None:
    state = failed_attempts(1)
    text = worker_prompt(state, judge(state))
    assert "You are the worker of attempt 2/100" in text
    assert ("## Last judge report (attempt 1)\npass: false, score 40\nblocking_issues: "
            "text/csv header missing\nrequired_actions: set Content-Type: text/csv\n"
            "evidence: pytest -q: 1 failed\nnext_iteration_focus: Fix cause 1.\n\n"
            "## Next attempt focus\nFix cause 1.\n\n## Your reply") in text
    assert "## Failure history" not in text


def test_a_failure_history_only_when_failures_repeat() -> None:
    assert failure_history(judge(failed_attempts(HISTORY_AFTER - 1))) == []
    state = failed_attempts(HISTORY_AFTER)
    assert failure_history(judge(state)) == [
        "Attempt 1: failed: Fix cause 1.", "Attempt 2: failed: Fix cause 2.",
        "Attempt 3: failed: Fix cause 3."]
    text = worker_prompt(state, judge(state))
    assert ("## Failure history\n- Attempt 1: failed: Fix cause 1.\n- Attempt 2: failed: Fix "
            "cause 2.\n- Attempt 3: failed: Fix cause 3.\n\n## Next attempt focus\nFix cause "
            "3.") in text
    assert len(failure_history(judge(failed_attempts(7)))) == 5


def test_protected_paths_are_named() -> None:
    state = judge_loop(judge_state=JudgeState(criteria=["x"], protect=["src/billing"]))
    assert ("## Do not change\n- `src/billing`\nA change under these paths fails the "
            "attempt, whatever the judge says.") in worker_prompt(state, judge(state))


def test_the_worker_prompt_is_bounded_whatever_the_judge_wrote() -> None:
    huge = "x" * 100_000
    verdict = {**FAIL, "blocking_issues": [huge] * 50, "required_actions": [huge] * 50,
               "evidence": [huge] * 50, "next_iteration_focus": huge}
    state = judge_loop()
    for number in range(6):
        state = attempt(state, f"w{number}", f"j{number}", verdict, minute=10 * number)
        state = replace(state, iteration=state.iteration + 1)
    fixed = len(worker_prompt(judge_loop(), judge(judge_loop())))
    assert len(worker_prompt(state, judge(state))) < fixed + 5_000


def test_the_judge_prompt_is_seed_002s_template() -> None:
    state = steps.worker_start(judge_loop(prompt="Add CSV export"), "w1", at(0)).state
    state = steps.worker_done(state, dict(WORKER), at(1), [green(), red("ruff check .")], [],
                              []).state
    current = judge(state).current
    assert current is not None
    text = judge_prompt(state, judge(state), current)
    assert text.startswith(
        "You are the judge of attempt 1/100 of a Ralph loop in judge mode (finesse plugin). "
        "You are strict and read-only: read files and search as you need, never write, edit "
        "or fix anything (the plugin denies it, and a change to the working tree while you "
        "judge voids your verdict).\n\n## Task (verbatim)\n<ralph-task>\nAdd CSV export\n"
        "</ralph-task>\n\n## Acceptance criteria\n- GET /reports/1.csv returns 200 and "
        "text/csv\n- existing tests still pass\n\n## Verifiers\n- `pytest -q`\n\n"
        "## The worker's result\n```json\n{\n  \"summary\": \"Added the CSV route.\",")
    assert ("## The plugin's own verifier run, after the worker stopped\n- `pytest -q`: green "
            "(exit 0)\n- `ruff check .`: red (exit 1)\n```text\nFAILED "
            "tests/test_csv.py::test_header\n```") in text
    assert text.endswith(prompts.JUDGE_CONTRACT)
    assert "a red verifier above means `pass: false`" in text


def test_the_judge_prompt_is_bounded_whatever_the_worker_wrote() -> None:
    huge = "y" * 100_000
    worker = {**WORKER, "summary": huge, "changes": [huge] * 500,
              "verifier_runs": [{"cmd": huge, "status": "fail", "output_excerpt": huge}] * 99}
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    noisy = command_result("pytest -q", 1, "z" * 4000)
    state = steps.worker_done(state, worker, at(1), [noisy] * 3, [], []).state
    current = judge(state).current
    assert current is not None
    assert len(judge_prompt(state, judge(state), current)) < 15_000


def test_the_orchestrator_is_told_its_role_and_the_first_step() -> None:
    state = judge_loop(prompt="Add CSV export",
                       judge_state=JudgeState(criteria=["a"], protect=["src/billing"]))
    text = orchestrator_context(state, judge(state))
    assert text.startswith("A Ralph loop in judge mode is running in this session (finesse "
                           "plugin). You are its orchestrator: you never do the work yourself.")
    assert "<ralph-task>\nAdd CSV export\n</ralph-task>" in text
    assert "Protected paths (no attempt may change them): `src/billing`" in text
    assert ('Now: call the Agent tool with subagent_type "finesse:ralph-worker", '
            "run_in_background false") in text


def test_the_judge_rules_are_seed_002s_words() -> None:
    rules = [line.removeprefix("\u2022 ") for line in JUDGE_RULES_IN_SEED]
    assert JUDGE_RULES.splitlines() == [f"- {rule}" for rule in rules]
    state = steps.worker_start(judge_loop(), "w1", at(0)).state
    state = steps.worker_done(state, dict(WORKER), at(1), [green()], [], []).state
    current = judge(state).current
    assert current is not None
    assert JUDGE_RULES in judge_prompt(state, judge(state), current)
    agent = (Path(__file__).resolve().parents[3] / "agents" / "ralph-judge.md").read_text()
    assert all(f"- {rule}" in agent for rule in rules)


# Seed 002, "Judge rules", as the seed writes them.
JUDGE_RULES_IN_SEED = [
    "\u2022 Only pass: true if all acceptance criteria are met and verifier evidence supports it.",
    "\u2022 Never \"assume\" success; cite evidence (test output, file checks, command results).",
    "\u2022 Prefer minimal, actionable required_actions.",
]
