"""`ralph status`: every active loop of the project, as text or JSON; exit codes, stdout
and stderr whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finesse.models import IterationRecord
from finesse.state.store import LoopStore
from tests.helpers.cli import run
from tests.helpers.states import (
    OTHER_SESSION,
    SESSION,
    T0,
    T1,
    command_result,
    make_state,
)

pytestmark = pytest.mark.usefixtures("ralph_clock")


def test_status_without_loops(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    assert run(capsys, "status", "--project", str(root)) == (
        0, f"No active Ralph loop in {root}.\n", ""
    )


def test_status_json_without_loops(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    code, out, err = run(capsys, "status", "--project", str(root), "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {"project": str(root), "loops": []}


def test_status_text(capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore) -> None:
    store.save(make_state(root, verify=["pytest -q"], iteration=2,
                          last_reply_excerpt="Read the failing test."))
    store.save(make_state(root, OTHER_SESSION, prompt="Other\ntask", promise="SHIPPED",
                          max_iterations=3, started_at=T0.replace(minute=2)))
    assert run(capsys, "status", "--project", str(root)) == (
        0,
        f"Ralph loop 20261130T070000Z-0b7c5c3e-abc123: iteration 2/8, promise "
        f"<promise>DONE</promise>, running 5 min (session {SESSION})\n"
        "task: Make the tests pass\n"
        "verify: pytest -q\n"
        "last reply: Read the failing test.\n"
        "\n"
        f"Ralph loop 20261130T070000Z-9a8b7c6d-abc123: iteration 1/3, promise "
        f"<promise>SHIPPED</promise>, running 3 min (session {OTHER_SESSION})\n"
        "task: Other task\n",
        "",
    )


def test_status_json_whole_object(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    red = command_result("make test", 2, "FAILED test_x\n")
    record = IterationRecord(number=1, started_at=T0, ended_at=T1, result="rejected",
                             reply_excerpt="first", approach="ran it", evidence="red",
                             learning="x is flaky", next_action="fix x", verification=[red],
                             tool_calls=3, tree_changed=True)
    store.save(make_state(
        root, iteration=2, iterations=[record], verify=["make test"],
        last_reply_excerpt="first", updated_at=T1, iteration_started_at=T1,
        plan_file="tasks/todo.md", quiesce_after=3, timeout_minutes=30,
        deadline_at=T0.replace(minute=30), baseline_commit="a" * 40, tree_fingerprint="f" * 24,
        last_reply_digest="d" * 16, failure_fingerprint=red.fingerprint, failure_streak=1,
        last_verification=[red], learnings=["x is flaky"],
    ))
    code, out, err = run(capsys, "status", "--json", "--project", str(root))
    assert (code, err) == (0, "")
    red_json = {
        "command": "make test",
        "exit_code": 2,
        "timed_out": False,
        "duration_seconds": 0.5,
        "output_tail": "FAILED test_x\n",
        "output_bytes": 14,
        "fingerprint": red.fingerprint,
    }
    assert json.loads(out) == {
        "project": str(root),
        "loops": [{
            "version": 2,
            "loop_id": "20261130T070000Z-0b7c5c3e-abc123",
            "session_id": SESSION,
            "project_root": str(root),
            "prompt": "Make the tests pass",
            "promise": "DONE",
            "max_iterations": 8,
            "iteration": 2,
            "verify": ["make test"],
            "prompt_file": None,
            "promise_file": None,
            "started_at": "2026-11-30T07:00:00+00:00",
            "updated_at": "2026-11-30T07:05:00+00:00",
            "iteration_started_at": "2026-11-30T07:05:00+00:00",
            "last_reply_excerpt": "first",
            "iterations": [{
                "number": 1,
                "started_at": "2026-11-30T07:00:00+00:00",
                "ended_at": "2026-11-30T07:05:00+00:00",
                "result": "rejected",
                "reply_excerpt": "first",
                "approach": "ran it",
                "evidence": "red",
                "learning": "x is flaky",
                "next_action": "fix x",
                "verification": [red_json],
                "tool_calls": 3,
                "tree_changed": True,
                "gate": [],
                "gate_action": "",
                "commit": None,
                "restored": [],
                "removed": [],
                "untouched": [],
                "usage": [],
                "usage_partial": False,
                "cost": 0.0,
            }],
            "outcome": None,
            "ended_at": None,
            "end_message": "",
            "ended_by": "",
            "verified": None,
            "plan_file": "tasks/todo.md",
            "notebook": None,
            "quiesce_after": 3,
            "timeout_minutes": 30,
            "deadline_at": "2026-11-30T07:30:00+00:00",
            "baseline_commit": "a" * 40,
            "tree_fingerprint": "f" * 24,
            "idle_iterations": 0,
            "last_reply_digest": "d" * 16,
            "failure_fingerprint": red.fingerprint,
            "failure_streak": 1,
            "replans": 0,
            "last_verification": [red_json],
            "learnings": ["x is flaky"],
            "blocker": "",
            "resumes": [],
            "report_path": "",
            "forced_past": [],
            "dirty_at_start": [],
            "effort": None,
            "budgets": {"max_tokens": None, "max_cost": None, "stop_at_quota": None},
            "prices": [],
            "cursor": None,
            "gate": None,
            "judge": None,
            "headless": None,
            "notify": None,
        }],
    }


def test_status_finds_the_project_from_the_environment(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore,
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    store.save(make_state(root))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "status", "--json")
    assert (code, [loop["session_id"] for loop in json.loads(out)["loops"]]) == (0, [SESSION])


def test_status_finds_the_git_root_from_a_subdirectory(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store.save(make_state(root))
    (root / "src").mkdir()
    monkeypatch.chdir(root / "src")
    code, out, _ = run(capsys, "status", "--json")
    assert (code, json.loads(out)["project"]) == (0, str(root))


def test_status_text_lists_the_iteration_history(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    red = command_result("pytest -q", 1, "1 failed")
    green = command_result("pytest -q", 0, "3 passed")
    history = [
        IterationRecord(number=1, started_at=T0, ended_at=T0, result="continue",
                        approach="read the failing test first, then the fixture " + "x" * 80),
        IterationRecord(number=2, started_at=T0, ended_at=T0, result="rejected",
                        approach="patched the fixture", verification=[red]),
        IterationRecord(number=3, started_at=T0, ended_at=T0, result="continue",
                        verification=[green]),
    ]
    store.save(make_state(root, iteration=4, iterations=history, verify=["pytest -q"],
                          last_reply_excerpt="Checking again."))
    assert run(capsys, "status", "--project", str(root)) == (
        0,
        f"Ralph loop 20261130T070000Z-0b7c5c3e-abc123: iteration 4/8, promise "
        f"<promise>DONE</promise>, running 5 min (session {SESSION})\n"
        "task: Make the tests pass\n"
        "verify: pytest -q\n"
        "last reply: Checking again.\n"
        "  iteration 1: continue - read the failing test first, then the fixture "
        + "x" * 53 + "…\n"
        "  iteration 2: rejected - patched the fixture [verify red: pytest -q]\n"
        "  iteration 3: continue [verify green]\n",
        "",
    )
