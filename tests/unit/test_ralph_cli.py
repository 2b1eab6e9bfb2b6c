"""`ralph status | cancel | start | report | resume` through main(argv): exit codes, stdout
and stderr whole."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from finesse.cli.ralph import main
from finesse.loop.grammar import LOOP_USAGE as USAGE
from finesse.models import IterationRecord, ResumeRecord, replace
from finesse.schema import to_dict
from finesse.state.store import LoopStore
from finesse.support import git as gitstate
from tests.helpers.states import (
    OTHER_SESSION,
    SESSION,
    T0,
    T1,
    command_result,
    files_under,
    make_state,
)


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("cancel", "resume", "start", "status"):
        module = importlib.import_module(f"finesse.cli.ralph.{name}")
        monkeypatch.setattr(module, "utcnow", lambda: T1)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- status -----------------------------------------------------------------------------------


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
            "version": 1,
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
            }],
            "outcome": None,
            "ended_at": None,
            "end_message": "",
            "ended_by": "",
            "plan_file": "tasks/todo.md",
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
            "gate": [],
            "effort": None,
            "snapshot_commit": None,
            "iteration_base": None,
            "repairing": False,
            "red_streak": 0,
            "empty_iterations": 0,
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


# --- cancel -----------------------------------------------------------------------------------


def test_cancel_the_one_loop(capsys: pytest.CaptureFixture[str], root: Path,
                             store: LoopStore) -> None:
    store.save(make_state(root))
    assert run(capsys, "cancel", "--project", str(root)) == (
        0, f"Ralph loop cancelled by `ralph cancel` at iteration 1/8. (session {SESSION})\n", ""
    )
    assert files_under(store.paths.loops) == []
    [ended] = store.history()
    report = store.paths.reports / f"{ended.loop_id}.md"
    assert ended == replace(make_state(root), **{
        "outcome": "cancelled", "ended_at": T1, "updated_at": T1,
        "end_message": "Ralph loop cancelled by `ralph cancel` at iteration 1/8.",
        "ended_by": "`ralph cancel`",

        "report_path": str(report),
    })
    assert files_under(store.paths.reports) == [report.name]


def test_cancel_several_without_all_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    store.save(make_state(root))
    store.save(make_state(root, OTHER_SESSION))
    assert run(capsys, "cancel", "--project", str(root)) == (
        2,
        "",
        "ralph cancel: 2 loops are active: pick one with --session ID (see `ralph status`) or "
        "cancel them all with --all (see 'ralph cancel --help')\n",
    )
    assert files_under(store.paths.loops) == sorted([f"{SESSION}.json", f"{OTHER_SESSION}.json"])


def test_cancel_all(capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore) -> None:
    store.save(make_state(root))
    store.save(make_state(root, OTHER_SESSION, started_at=T0.replace(minute=1), iteration=3))
    assert run(capsys, "cancel", "--all", "--project", str(root)) == (
        0,
        f"Ralph loop cancelled by `ralph cancel` at iteration 1/8. (session {SESSION})\n"
        f"Ralph loop cancelled by `ralph cancel` at iteration 3/8. (session {OTHER_SESSION})\n",
        "",
    )
    assert files_under(store.paths.loops) == []
    assert [(loop.session_id, loop.outcome) for loop in store.history()] == [
        (SESSION, "cancelled"), (OTHER_SESSION, "cancelled")
    ]


def test_cancel_one_session(capsys: pytest.CaptureFixture[str], root: Path,
                            store: LoopStore) -> None:
    store.save(make_state(root))
    store.save(make_state(root, OTHER_SESSION))
    other_before = store.paths.loop_file(OTHER_SESSION).read_bytes()
    assert run(capsys, "cancel", "--session", SESSION, "--project", str(root)) == (
        0, f"Ralph loop cancelled by `ralph cancel` at iteration 1/8. (session {SESSION})\n", ""
    )
    assert files_under(store.paths.loops) == [f"{OTHER_SESSION}.json"]
    assert store.paths.loop_file(OTHER_SESSION).read_bytes() == other_before


def test_cancel_without_loops(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    assert run(capsys, "cancel", "--project", str(root)) == (
        1, "", f"ralph cancel: no active Ralph loop in {root}\n"
    )


def test_cancel_unknown_session(capsys: pytest.CaptureFixture[str], root: Path,
                                store: LoopStore) -> None:
    store.save(make_state(root))
    assert run(capsys, "cancel", "--session", OTHER_SESSION, "--project", str(root)) == (
        1, "", f"ralph cancel: session {OTHER_SESSION} has no active Ralph loop\n"
    )
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--session", "../x"], "not a session id: '../x'"),
        (["--session", SESSION, "--all"], "give --session ID or --all, not both"),
    ],
)
def test_cancel_usage_errors(capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore,
                             argv: list[str], message: str) -> None:
    store.save(make_state(root))
    assert run(capsys, "cancel", "--project", str(root), *argv) == (
        2, "",
        f"ralph cancel: {message} (see 'ralph cancel --help')\n",
    )
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]


# --- start ------------------------------------------------------------------------------------


def test_start(capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore) -> None:
    code, out, err = run(capsys, "start", "--project", str(root), "--session", SESSION,
                         "Fix it's tests; $(touch X)", "--max-iterations", "30",
                         "--completion-promise", "ALL  DONE", "--verify", "pytest -q")
    state = store.load(SESSION)
    assert state is not None
    assert (code, out, err) == (
        0,
        f"Started Ralph loop {state.loop_id} for session {SESSION}: up to 30 iterations, "
        "promise ALL DONE.\n",
        "warning: --max-iterations 30 is above 25: long loops burn quota; /cancel-ralph stops "
        "it at any time\n",
    )
    assert (state.prompt, state.promise, state.max_iterations, state.verify, state.started_at) == (
        "Fix it's tests; $(touch X)", "ALL DONE", 30, ["pytest -q"], T1
    )
    assert not (root / "X").exists()


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["go", "--max-iterations", "0"],
         "--max-iterations must be from 1 to 1000, not 0: a loop always has a cap; "
         "for example --max-iterations 8"),
        (["go", "--max-iterations", "lots"],
         "--max-iterations needs a whole number from 1 to 1000, not 'lots': "
         "for example --max-iterations 8"),
        (["go", "--bogus"], f"unknown option --bogus: type {USAGE}"),
        ([], f"the prompt is empty: type {USAGE}"),
        (["--prompt-file", "missing.md"],
         "--prompt-file missing.md: no such file under {root}; give a path relative to the "
         "project root"),
        (["go", "--completion-promise", "<b>"],
         "--completion-promise may not contain '<' or '>': use plain words, e.g. DONE"),
    ],
)
def test_start_grammar_errors(capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore,
                              words: list[str], message: str) -> None:
    assert run(capsys, "start", "--project", str(root), "--session", SESSION, *words) == (
        2, "", f"ralph start: {message.format(root=root)}\n"
    )
    assert files_under(store.paths.base) == []


def test_start_twice_is_refused(capsys: pytest.CaptureFixture[str], root: Path,
                                store: LoopStore) -> None:
    store.save(make_state(root))
    assert run(capsys, "start", "--project", str(root), "--session", SESSION, "again") == (
        2, "", "ralph start: a Ralph loop is already running in this session (iteration 1/8): "
               "/cancel-ralph first\n",
    )


def test_start_needs_a_valid_session(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    assert run(capsys, "start", "--project", str(root), "--session", "a/b", "go") == (
        2, "",
        "ralph start: not a session id: 'a/b' (see 'ralph start --help')\n",
    )


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    code, out, err = run(capsys, "status", "--bogus")
    assert (code, out) == (2, "")
    # click 8.1 and 8.2+ word it differently
    assert err in ("ralph status: No such option: --bogus (see 'ralph status --help')\n",
                   "ralph status: No such option '--bogus'. (see 'ralph status --help')\n")


# --- status history ---------------------------------------------------------------------------


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


# --- report -----------------------------------------------------------------------------------


def ended_loop(store: LoopStore, root: Path, suffix: str, minute: int, outcome: str = "limit",
               report_text: str | None = None, **fields: object) -> str:
    """Archive an ended loop whose report file holds `report_text`; returns its id."""
    loop_id = f"20261130T07{minute:02d}00Z-0b7c5c3e-{suffix}"
    report = store.paths.reports / f"{loop_id}.md"
    if report_text is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(report_text, encoding="utf-8")
    ended_at = T0.replace(minute=minute)
    store.archive(make_state(
        root, loop_id=loop_id, started_at=T0, updated_at=ended_at, ended_at=ended_at,
        outcome=outcome, end_message=f"ended {suffix}", report_path=str(report), **fields,
    ))
    return loop_id


def test_report_prints_the_latest_report(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    ended_loop(store, root, "aaa111", 10, report_text="# older\n")
    ended_loop(store, root, "bbb222", 30, report_text="# latest ✓\n\n- Status: limit\n")
    ended_loop(store, root, "ccc333", 20, report_text="# middle\n")
    assert run(capsys, "report", "--project", str(root)) == (
        0, "# latest ✓\n\n- Status: limit\n", ""
    )


def test_report_of_a_given_loop_by_its_id_or_a_prefix(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    older = ended_loop(store, root, "aaa111", 10, report_text="# older\n")
    ended_loop(store, root, "bbb222", 30, report_text="# latest\n")
    assert run(capsys, "report", "--project", str(root), older) == (0, "# older\n", "")
    assert run(capsys, "report", "--project", str(root), "20261130T0710") == (
        0, "# older\n", ""
    )


def test_report_json_is_the_whole_ended_state(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    loop_id = ended_loop(store, root, "aaa111", 10, outcome="blocked", blocker="no API key",
                         learnings=["the API needs a key"])
    code, out, err = run(capsys, "report", "--json", "--project", str(root))
    assert (code, err) == (0, "")
    [ended] = store.history()
    assert json.loads(out) == to_dict(ended)
    assert (ended.loop_id, ended.outcome, ended.blocker, ended.learnings) == (
        loop_id, "blocked", "no API key", ["the API needs a key"]
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], (1, "", "ralph report: no ended Ralph loop in {root}\n")),
        (["nope"], (1, "", "ralph report: no ended Ralph loop 'nope' in {root}\n")),
    ],
)
def test_report_without_ended_loops(capsys: pytest.CaptureFixture[str], root: Path,
                                    store: LoopStore, argv: list[str],
                                    expected: tuple[int, str, str]) -> None:
    store.save(make_state(root))  # an active loop has no report yet
    code, out, err = expected
    assert run(capsys, "report", "--project", str(root), *argv) == (
        code, out, err.format(root=root)
    )


def test_report_with_an_ambiguous_prefix(capsys: pytest.CaptureFixture[str], root: Path,
                                         store: LoopStore) -> None:
    ended_loop(store, root, "aaa111", 10, report_text="# a\n")
    ended_loop(store, root, "bbb222", 30, report_text="# b\n")
    assert run(capsys, "report", "--project", str(root), "20261130T07") == (
        2, "",
        "ralph report: 2 loops start with '20261130T07': give more of the id "
        "(see 'ralph report --help')\n",
    )


def test_report_file_missing(capsys: pytest.CaptureFixture[str], root: Path,
                             store: LoopStore) -> None:
    loop_id = ended_loop(store, root, "aaa111", 10)
    assert run(capsys, "report", "--project", str(root)) == (
        1, "", f"ralph report: the report of {loop_id} is missing; try --json\n"
    )


# --- resume -----------------------------------------------------------------------------------


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


# --- doctor -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("ok", "code", "mark"), [(True, 0, "ok "), (False, 1, "BAD")])
def test_doctor_exits_1_when_a_check_fails(capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch, ok: bool, code: int,
                                           mark: str) -> None:
    from finesse.support import health

    monkeypatch.setattr(health, "checks", lambda env: [
        health.Check("python", True, "3.11"), health.Check("claude", ok, "2.1.328")])
    assert run(capsys, "doctor") == (code, f"ok  python: 3.11\n{mark} claude: 2.1.328\n", "")
