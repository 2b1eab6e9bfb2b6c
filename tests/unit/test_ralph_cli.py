"""`ralph status | cancel | start` through main(argv): exit codes, stdout and stderr whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import finesse.cli.ralph
from finesse.cli.ralph import main
from finesse.models import IterationRecord, replace
from finesse.store import LoopStore
from tests.unit.states import OTHER_SESSION, SESSION, T0, T1, files_under, make_state, store_for

USAGE = (
    '/ralph-loop "PROMPT" [--max-iterations N] [--completion-promise TEXT] '
    "[--prompt-file PATH] [--completion-promise-file PATH] [--verify CMD]"
)


@pytest.fixture
def root(git_repo: Path) -> Path:
    return git_repo.resolve()


@pytest.fixture
def store(root: Path) -> LoopStore:
    return store_for(root)


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(finesse.cli.ralph, "utcnow", lambda: T1)


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
    record = IterationRecord(number=1, started_at=T0, ended_at=T1, result="continue",
                             reply_excerpt="first")
    store.save(make_state(root, iteration=2, iterations=[record], verify=["make test"],
                          last_reply_excerpt="first", updated_at=T1, iteration_started_at=T1))
    code, out, err = run(capsys, "status", "--json", "--project", str(root))
    assert (code, err) == (0, "")
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
                "result": "continue",
                "reply_excerpt": "first",
            }],
            "outcome": None,
            "ended_at": None,
            "end_message": "",
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
    assert ended == replace(make_state(root), **{
        "outcome": "cancelled", "ended_at": T1, "updated_at": T1,
        "end_message": "Ralph loop cancelled by `ralph cancel` at iteration 1/8.",
    })


def test_cancel_several_without_all_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    store.save(make_state(root))
    store.save(make_state(root, OTHER_SESSION))
    assert run(capsys, "cancel", "--project", str(root)) == (
        2,
        "",
        "Usage: ralph cancel [OPTIONS]\n"
        "Try 'ralph cancel --help' for help.\n"
        "\n"
        "Error: 2 loops are active: pick one with --session ID (see `ralph status`) or cancel "
        "them all with --all\n",
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
        1, "", f"Error: no active Ralph loop in {root}\n"
    )


def test_cancel_unknown_session(capsys: pytest.CaptureFixture[str], root: Path,
                                store: LoopStore) -> None:
    store.save(make_state(root))
    assert run(capsys, "cancel", "--session", OTHER_SESSION, "--project", str(root)) == (
        1, "", f"Error: session {OTHER_SESSION} has no active Ralph loop\n"
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
        f"Usage: ralph cancel [OPTIONS]\nTry 'ralph cancel --help' for help.\n\nError: {message}\n",
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
        2, "", f"ralph: {message.format(root=root)}\n"
    )
    assert files_under(store.paths.base) == []


def test_start_twice_is_refused(capsys: pytest.CaptureFixture[str], root: Path,
                                store: LoopStore) -> None:
    store.save(make_state(root))
    assert run(capsys, "start", "--project", str(root), "--session", SESSION, "again") == (
        2, "", "ralph: a Ralph loop is already running in this session (iteration 1/8): "
               "/cancel-ralph first\n",
    )


def test_start_needs_a_valid_session(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    assert run(capsys, "start", "--project", str(root), "--session", "a/b", "go") == (
        2, "",
        "Usage: ralph start [OPTIONS] [WORDS]...\nTry 'ralph start --help' for help.\n\n"
        "Error: not a session id: 'a/b'\n",
    )


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    code, out, err = run(capsys, "status", "--bogus")
    usage = "Usage: ralph status [OPTIONS]\nTry 'ralph status --help' for help.\n\n"
    assert (code, out) == (2, "")
    # click 8.1 and 8.2+ word it differently
    assert err in (usage + "Error: No such option: --bogus\n",
                   usage + "Error: No such option '--bogus'.\n")
