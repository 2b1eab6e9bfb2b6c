"""What an ended loop leaves behind: the report, the banner, the plan's entries and review."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from finesse.loop.report import (
    attempt_entry,
    banner,
    render_report,
    resume_command,
    review_text,
    skipped_checks,
)
from finesse.models import IterationRecord, LoopState, ResumeRecord, replace
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


def test_render_report() -> None:
    assert render_report(LIMITED, ["src/tax.py", "tasks/todo.md", "tests/test_tax.py"]) == (
        "# Ralph loop report: limit reached\n"
        "\n"
        "- Loop: `20261130T070000Z-0b7c5c3e-abc123` (session "
        "`0b7c5c3e-1f2a-4d3b-8c4d-5e6f7a8b9c0d`)\n"
        "- Status: limit - Ralph loop stopped: 3 iterations made without "
        "<promise>DONE</promise>.\n"
        "- Iterations: 3 of at most 3\n"
        "- Duration: 12 min 34 s (2026-11-30 07:00:00 to 07:12:34 UTC)\n"
        "- Completion promise: `<promise>DONE</promise>`\n"
        "- Plan: `tasks/todo.md`\n"
        "- Resumed 1 time(s)\n"
        "- Resume with: `/ralph-resume --max-iterations 6`\n"
        "\n"
        "## Task\n"
        "\n"
        "Make the tests pass.\n"
        "Keep the public API.\n"
        "\n"
        "## Verification evidence\n"
        "\n"
        "- `pytest -q`: red (exit 1, 3.2 s)\n"
        "  ```text\n"
        "  line 3\n"
        "  line 4\n"
        "  line 5\n"
        "  line 6\n"
        "  line 7\n"
        "  line 8\n"
        "  line 9\n"
        "  FAILED test_app.py::test_tax\n"
        "  ```\n"
        "- `ruff check .`: green (exit 0, 0.4 s)\n"
        "  ```text\n"
        "  All checks passed!\n"
        "  ```\n"
        "\n"
        "Not verified green at the end: `pytest -q`\n"
        "\n"
        "## Files changed\n"
        "\n"
        "- `src/tax.py`\n"
        "- `tasks/todo.md`\n"
        "- `tests/test_tax.py`\n"
        "\n"
        "## Learnings\n"
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


def test_render_report_of_a_blocked_loop_with_nothing_recorded() -> None:
    state = make_state(
        ROOT, outcome="blocked", ended_at=T0 + timedelta(seconds=9),
        blocker="No API key.\nAsk ops.",
        end_message="Ralph loop blocked at iteration 1/8: No API key. Ask ops.",
        forced_past=["verifier", "scope"],
    )
    assert render_report(state, []) == (
        "# Ralph loop report: blocked\n"
        "\n"
        "- Loop: `20261130T070000Z-0b7c5c3e-abc123` (session "
        "`0b7c5c3e-1f2a-4d3b-8c4d-5e6f7a8b9c0d`)\n"
        "- Status: blocked - Ralph loop blocked at iteration 1/8: No API key. Ask ops.\n"
        "- Iterations: 0 of at most 8\n"
        "- Duration: 0 min 09 s (2026-11-30 07:00:00 to 07:00:09 UTC)\n"
        "- Completion promise: `<promise>DONE</promise>`\n"
        "- Started with --force past failing prompt checks: verifier, scope\n"
        "- Resume with: `/ralph-resume`\n"
        "\n"
        "## Task\n"
        "\n"
        "Make the tests pass\n"
        "\n"
        "## Verification evidence\n"
        "\n"
        "- none run\n"
        "\n"
        "## Files changed\n"
        "\n"
        "- none\n"
        "\n"
        "## Learnings\n"
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
    text = render_report(state, [])
    evidence = text.split("## Verification evidence\n\n")[1].split("\n\n## Files")[0]
    assert evidence == (
        "- `make e2e`: red (timed out, 600.0 s)\n\nNot verified green at the end: `make e2e`"
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


def test_banner() -> None:
    path = ".claude/ralph/reports/20261130T070000Z-0b7c5c3e-abc123.md"
    assert banner(LIMITED, path) == (
        "Ralph loop stopped: 3 iterations made without <promise>DONE</promise>.\n"
        "Resume: /ralph-resume --max-iterations 6\n"
        f"Report: {path}"
    )
    done = replace(LIMITED, outcome="success", end_message="Ralph loop done.")
    assert banner(done, path) == f"Ralph loop done.\nReport: {path}"


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
    assert review_text(LIMITED, ["src/tax.py", "tests/test_tax.py"]) == (
        "Loop `20261130T070000Z-0b7c5c3e-abc123` ended: limit - Ralph loop stopped: 3 "
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
    assert review_text(state, []) == (
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


def test_skipped_checks() -> None:
    assert skipped_checks(LIMITED) == ["pytest -q"]
    assert skipped_checks(replace(LIMITED, last_verification=[
        command_result("pytest -q", 0), LINT
    ])) == []
    assert skipped_checks(replace(LIMITED, verify=[])) == []


def test_command_output_stays_code_in_the_report() -> None:
    output = "Expected:\n```\nrendered table\n```\nGot: nothing\n"
    state = replace(LIMITED, last_verification=[command_result("make docs", 1, output)])
    prose = strip_code(render_report(state, []))
    assert "rendered table" not in prose and "Got: nothing" not in prose
