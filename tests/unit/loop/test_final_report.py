"""What an ended loop leaves behind: the report, the banner, the plan's entries and review."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from finesse.loop.final_report import (
    EndFacts,
    banner,
    render_report,
    resume_command,
    skipped_checks,
)
from finesse.loop.notebook import attempt_entry, review_text
from finesse.models import Budgets, IterationRecord, LoopState, ResumeRecord
from finesse.record import replace
from finesse.results import ModelUsage
from finesse.support.git import LineChanges
from finesse.support.markdown import strip_code
from tests.helpers.states import T0, command_result, make_state

ROOT = Path("/project")
ENDED = T0 + timedelta(minutes=12, seconds=34)
RED = command_result(
    "pytest -q", 1,
    "".join(f"line {n}\n" for n in range(1, 10)) + "FAILED test_app.py::test_tax\n\n",
    seconds=3.25,
)
LINT = command_result("ruff check .", 0, "All checks passed!\n", seconds=0.4)
TIMED_OUT = command_result("make e2e", None, "", timed_out=True, seconds=600)


def iteration(number: int, minute: int, result: str, **fields: object) -> IterationRecord:
    return IterationRecord(
        number=number, started_at=T0 + timedelta(minutes=minute - 4),
        ended_at=T0 + timedelta(minutes=minute, seconds=34), result=result, **fields,
    )


HISTORY = [
    iteration(1, 4, "continue", approach="read the tax module", tool_calls=5, tree_changed=True),
    iteration(2, 8, "rejected", approach="added the tax table", evidence="test_total green",
              learning="prices are Decimal", next_action="fix test_tax",
              verification=[RED, LINT]),
    iteration(3, 12, "limit", learning="the table is per state"),
]
LIMITED = make_state(
    ROOT,
    prompt="Make the tests pass.\nKeep the public API.",
    max_iterations=3,
    iteration=3,
    verify=["pytest -q", "ruff check ."],
    plan_file="tasks/todo.md",
    iterations=HISTORY,
    last_verification=[RED, LINT],
    learnings=["prices are Decimal", "the table is per state"],
    resumes=[ResumeRecord(at=T0 + timedelta(minutes=1), after="quiesced", by="/ralph-resume")],
    outcome="limit",
    ended_at=ENDED,
    updated_at=ENDED,
    end_message="Ralph loop stopped: 3 iterations made without <promise>DONE</promise>.",
)


STATE_FILE = ".claude/ralph/history/20261130T070000Z-0b7c5c3e-abc123.json"
FACTS = EndFacts(files=["src/tax.py", "tests/test_tax.py"], lines=LineChanges(40, 12),
                 is_repository=True, state_file=STATE_FILE, scope="/project")
NOTHING = EndFacts(files=[], lines=None, is_repository=False, state_file=STATE_FILE,
                   scope="/project")
HEAD = (
    "- Duration: 12 min 34 s (2026-11-30 07:00:00 to 07:12:34 UTC)\n"
    "- Loop: `20261130T070000Z-0b7c5c3e-abc123` (session "
    "`0b7c5c3e-1f2a-4d3b-8c4d-5e6f7a8b9c0d`)\n"
    "- Completion promise: `<promise>DONE</promise>`\n"
    "- Scope: /project (the project directory; nothing outside it is touched)\n"
    "- Plan: `tasks/todo.md`\n"
    "- Resumed 1 time(s)\n"
    f"- State saved to: `{STATE_FILE}`\n"
    "\n"
    "## Task\n"
    "\n"
    "Make the tests pass.\n"
    "Keep the public API.\n"
    "\n"
)
RED_OUTPUT = (
    "  ```text\n"
    "  $ pytest -q\n"
    + "".join(f"  line {n}\n" for n in range(3, 10))
    + "  FAILED test_app.py::test_tax\n"
    "  ```\n"
)
TAIL = (
    "## Files changed\n"
    "\n"
    "- `src/tax.py`\n"
    "- `tests/test_tax.py`\n"
    "\n"
    "## Learnings accumulated\n"
    "\n"
    "- prices are Decimal\n"
    "- the table is per state\n"
    "\n"
    "## Iterations\n"
    "\n"
    "- 1: continue; approach: read the tax module\n"
    "- 2: rejected; approach: added the tax table; verification red: pytest -q\n"
    "- 3: limit\n"
)


def test_render_report_of_a_limit() -> None:
    # Seed 004's "On Limit Reached": iterations completed, last attempt, last failure with
    # its output, learnings accumulated, the three options, where the state is saved.
    assert render_report(LIMITED, FACTS) == (
        "# Ralph loop report: limit reached\n"
        "\n"
        "- Task: Make the tests pass. Keep the public API.\n"
        "- Status: MAX_ITERATIONS - Ralph loop stopped: 3 iterations made without "
        "<promise>DONE</promise>.\n"
        "- Iterations completed: 3 (cap 3)\n"
        + HEAD
        + "## Verification\n"
        "\n"
        "- `pytest -q`: red (exit 1, 3.2 s)\n"
        "- `ruff check .`: green (exit 0, 0.4 s)\n"
        "\n"
        "Not verified green at the end: `pytest -q`\n"
        "\n"
        "## Last attempt\n"
        "\n"
        "iteration 2: added the tax table\n"
        "\n"
        "## Last failure\n"
        "\n"
        "- `pytest -q`: red (exit 1, 3.2 s)\n"
        + RED_OUTPUT
        + "\n"
        "## Options\n"
        "\n"
        "- `/ralph-resume --max-iterations 6` (with room to go on)\n"
        "- `/ralph-resume` (continue from here)\n"
        "- `/ralph-abort` (give it up: it can no longer be resumed)\n"
        "\n"
        "Blocked in seed 001's sense: the cap ended the loop before a verified result; the "
        "notebook's Review records the evidence and what to do.\n"
        "\n"
        + TAIL
    )


def test_render_report_of_a_verified_success() -> None:
    # Seed 004's "On Success": the commands with their output, files modified and the total
    # changes since the loop started.
    done = replace(LIMITED, outcome="success", verified=True, verify=["ruff check ."],
                   last_verification=[LINT],
                   end_message="Ralph loop done: <promise>DONE</promise> at iteration 3/3 and "
                               "verified: `ruff check .` exit 0.")
    assert render_report(done, FACTS) == (
        "# Ralph loop report: success (verified)\n"
        "\n"
        "- Task: Make the tests pass. Keep the public API.\n"
        "- Status: SUCCESS - Ralph loop done: <promise>DONE</promise> at iteration 3/3 and "
        "verified: `ruff check .` exit 0.\n"
        "- Iterations: 3 of at most 3\n"
        + HEAD
        + "## Verification\n"
        "\n"
        "- `ruff check .`: green (exit 0, 0.4 s)\n"
        "  ```text\n"
        "  $ ruff check .\n"
        "  All checks passed!\n"
        "  ```\n"
        "\n"
        "## Summary\n"
        "\n"
        "- Files modified: 2\n"
        "- Total changes: +40, -12 (since the loop started)\n"
        "\n"
        + TAIL
    )


def test_an_unverified_success_says_so() -> None:
    done = replace(LIMITED, outcome="success", verified=False, verify=[], last_verification=[],
                   end_message="Ralph loop done (unverified).")
    text = render_report(done, NOTHING)
    assert text.startswith("# Ralph loop report: success (unverified)\n\n")
    assert "- Status: SUCCESS (UNVERIFIED) - Ralph loop done (unverified).\n" in text
    assert text.split("## Verification\n\n")[1].split("\n\n## Summary")[0] == (
        "No verification command: completion rests on the agent's word. Add `--verify CMD` "
        "(or a plan's `## Verification Commands`) to have the plugin check it."
    )
    assert text.split("## Summary\n\n")[1].split("\n\n## Files")[0] == (
        "- Files modified: 0\n"
        "- Total changes: not counted (not a git repository, or no commit to count from) "
        "(since the loop started)"
    )


def test_render_report_of_a_blocked_loop_with_nothing_recorded() -> None:
    state = make_state(
        ROOT, outcome="blocked", ended_at=T0 + timedelta(seconds=9),
        blocker="No API key.\nAsk ops.",
        end_message="Ralph loop blocked at iteration 1/8: No API key. Ask ops.",
        forced_past=["verifier", "scope"],
    )
    assert render_report(state, NOTHING) == (
        "# Ralph loop report: blocked\n"
        "\n"
        "- Task: Make the tests pass\n"
        "- Status: BLOCKED - Ralph loop blocked at iteration 1/8: No API key. Ask ops.\n"
        "- Iterations completed: 0 (cap 8)\n"
        "- Duration: 0 min 09 s (2026-11-30 07:00:00 to 07:00:09 UTC)\n"
        "- Loop: `20261130T070000Z-0b7c5c3e-abc123` (session "
        "`0b7c5c3e-1f2a-4d3b-8c4d-5e6f7a8b9c0d`)\n"
        "- Completion promise: `<promise>DONE</promise>`\n"
        "- Scope: /project (the project directory; nothing outside it is touched)\n"
        "- Started with --force past failing prompt checks: verifier, scope\n"
        f"- State saved to: `{STATE_FILE}`\n"
        "\n"
        "## Task\n"
        "\n"
        "Make the tests pass\n"
        "\n"
        "## Verification\n"
        "\n"
        "No verification command: completion rests on the agent's word. Add `--verify CMD` "
        "(or a plan's `## Verification Commands`) to have the plugin check it.\n"
        "\n"
        "## Last attempt\n"
        "\n"
        "(none recorded)\n"
        "\n"
        "## Last failure\n"
        "\n"
        "(none recorded)\n"
        "\n"
        "## Options\n"
        "\n"
        "- `/ralph-resume` (continue from here)\n"
        "- `/ralph-abort` (give it up: it can no longer be resumed)\n"
        "\n"
        "## Files changed\n"
        "\n"
        "- none\n"
        "\n"
        "## Learnings accumulated\n"
        "\n"
        "- none recorded\n"
        "\n"
        "## Blocker\n"
        "\n"
        "No API key.\n"
        "Ask ops.\n"
        "\n"
        "## Iterations\n"
        "\n"
        "- none\n"
    )


def test_a_timed_out_command_in_the_evidence() -> None:
    state = replace(LIMITED, last_verification=[TIMED_OUT], verify=["make e2e"])
    text = render_report(state, FACTS)
    evidence = text.split("## Verification\n\n")[1].split("\n\n## Last")[0]
    assert evidence == (
        "- `make e2e`: red (timed out after 600 s)\n\n"
        "Not verified green at the end: `make e2e`"
    )


@pytest.mark.parametrize(
    ("outcome", "command"),
    [
        ("limit", "/ralph-resume --max-iterations 6"),
        ("timeout", "/ralph-resume --timeout-minutes 45"),
        ("quiesced", "/ralph-resume"),
        ("blocked", "/ralph-resume"),
        ("success", ""),
        ("cancelled", ""),
        ("failure", ""),
        ("error", ""),
        (None, ""),
    ],
)
def test_resume_command(outcome: str | None, command: str) -> None:
    assert resume_command(replace(LIMITED, outcome=outcome, timeout_minutes=45)) == command


def test_resume_command_of_a_timeout_without_minutes() -> None:
    assert resume_command(replace(LIMITED, outcome="timeout", timeout_minutes=None)) == (
        "/ralph-resume"
    )


@pytest.mark.parametrize(
    ("budgets", "command"),
    [
        ({"max_tokens": 8000}, "/ralph-resume --max-tokens 16000"),
        ({"max_tokens": 5000}, "/ralph-resume --max-tokens 10000"),
        ({"max_tokens": 3000}, "/ralph-resume --max-tokens 8001"),  # far past it: just above
        ({"max_cost": 2.5}, "/ralph-resume --max-cost 5"),
        ({"max_cost": 1.25}, "/ralph-resume --max-cost 3.01"),
        ({"max_tokens": 8000, "max_cost": 3.0}, "/ralph-resume --max-tokens 16000 --max-cost 6"),
        ({"max_tokens": 9000, "max_cost": 3.0}, "/ralph-resume --max-cost 6"),  # only the spent one
    ],
)
def test_resume_command_after_a_budget_raises_what_was_spent(
        budgets: dict[str, object], command: str) -> None:
    spent = [IterationRecord(number=n, started_at=T0, ended_at=T0, result="continue", cost=0.75,
                             usage=[ModelUsage("claude-sonnet-4-5", 1000, 500, 500, 9000)])
             for n in range(1, 5)]  # 8,000 tokens, an estimated $3.00
    state = replace(LIMITED, outcome="budget", iterations=spent, budgets=Budgets(**budgets))
    assert resume_command(state) == command


def test_banner() -> None:
    path = ".claude/ralph/reports/20261130T070000Z-0b7c5c3e-abc123.md"
    assert banner(LIMITED, FACTS, path) == (
        "Ralph loop stopped: 3 iterations made without <promise>DONE</promise>.\n"
        "Last failure: `pytest -q` exit 1\n"
        "Learnings accumulated: 2\n"
        "Options: /ralph-resume --max-iterations 6 | /ralph-resume | /ralph-abort\n"
        f"State saved to: {STATE_FILE}\n"
        f"Report: {path}"
    )
    done = replace(LIMITED, outcome="success", end_message="Ralph loop done.")
    assert banner(done, FACTS, path) == (
        f"Ralph loop done.\nFiles modified: 2 (+40, -12)\nReport: {path}"
    )
    cancelled = replace(LIMITED, outcome="cancelled", end_message="Ralph loop cancelled.")
    assert banner(cancelled, FACTS, path) == f"Ralph loop cancelled.\nReport: {path}"


def test_attempt_entry_with_every_field() -> None:
    assert attempt_entry(HISTORY[1]) == (
        "### Iteration 2 (2026-11-30 07:08 UTC)\n"
        "- Result: rejected\n"
        "- Approach: added the tax table\n"
        "- Evidence: test_total green\n"
        "- Learning: prices are Decimal\n"
        "- Next: fix test_tax\n"
        "- Verifier: `pytest -q` red (exit 1)\n"
        "- Verifier: `ruff check .` green\n"
    )


def test_attempt_entry_with_nothing_said() -> None:
    record = replace(HISTORY[0], approach="", verification=[TIMED_OUT])
    assert attempt_entry(record) == (
        "### Iteration 1 (2026-11-30 07:04 UTC)\n"
        "- Result: continue\n"
        "- Verifier: `make e2e` timed out\n"
    )


def test_review_text() -> None:
    assert review_text(LIMITED, FACTS) == (
        "Loop `20261130T070000Z-0b7c5c3e-abc123` ended: limit reached - Ralph loop stopped: 3 "
        "iterations made without <promise>DONE</promise>.\n"
        "\n"
        "Changes made:\n"
        "- `src/tax.py`\n"
        "- `tests/test_tax.py`\n"
        "\n"
        "Verification evidence:\n"
        "- `pytest -q`: red (exit 1, 3.2 s)\n"
        "- `ruff check .`: green (exit 0, 0.4 s)\n"
        "\n"
        "Skipped checks:\n"
        "- `pytest -q` (not green at the end)\n"
        "\n"
        "Remaining blockers:\n"
        "- none\n"
    )


def test_review_text_of_a_blocked_loop_that_never_verified() -> None:
    state: LoopState = replace(LIMITED, outcome="blocked", end_message="Blocked.",
                               last_verification=[], blocker="No API key.")
    assert review_text(state, NOTHING) == (
        "Loop `20261130T070000Z-0b7c5c3e-abc123` ended: blocked - Blocked.\n"
        "\n"
        "Changes made:\n"
        "- none\n"
        "\n"
        "Verification evidence:\n"
        "- none run\n"
        "\n"
        "Skipped checks:\n"
        "- `pytest -q` (not green at the end)\n"
        "- `ruff check .` (not green at the end)\n"
        "\n"
        "Remaining blockers:\n"
        "- No API key.\n"
    )


def test_review_of_an_unverified_success_names_it_under_skipped_checks() -> None:
    done = replace(LIMITED, outcome="success", verified=False, verify=[], last_verification=[],
                   end_message="Done (unverified).")
    assert review_text(done, NOTHING).split("Skipped checks:\n")[1] == (
        "- every check: no verification command was given, so the success rests on the "
        "agent's word (unverified)\n"
        "\n"
        "Remaining blockers:\n"
        "- none\n"
    )


def test_skipped_checks() -> None:
    assert skipped_checks(LIMITED) == ["pytest -q"]
    assert skipped_checks(replace(LIMITED, last_verification=[
        command_result("pytest -q", 0), LINT
    ])) == []
    assert skipped_checks(replace(LIMITED, verify=[])) == []


def test_command_output_stays_code_in_the_report() -> None:
    output = "Expected:\n```\nrendered table\n```\nGot: nothing\n"
    state = replace(LIMITED, last_verification=[command_result("make docs", 1, output)])
    prose = strip_code(render_report(state, NOTHING))
    assert "rendered table" not in prose and "Got: nothing" not in prose
