"""SessionStart and SessionEnd in process: a loop is re-stated after compaction or resume, and
`/clear` archives it as cancelled and says so."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from finesse.engine import end_loop
from finesse.hooks.session import handle_end, handle_start, main_end, main_start
from finesse.loop.status import start_context
from finesse.models import LoopState
from finesse.record import replace
from finesse.state.store import LoopStore
from tests.helpers.hooks import env_for, session_end_input, session_start_input
from tests.helpers.states import (
    OTHER_SESSION,
    SESSION,
    T1,
    command_result,
    files_under,
    make_state,
)

pytestmark = pytest.mark.usefixtures("session_hooks_clock")
CLEARED = "Ralph loop cancelled by /clear at iteration 3/8."


def running(root: Path, **fields: Any) -> LoopState:
    return make_state(root, iteration=3, verify=["pytest -q"], **fields)


# --- SessionStart ---------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["compact", "resume"])
def test_the_loop_is_re_stated(git_repo: Path, store: LoopStore, source: str) -> None:
    state = running(git_repo, last_verification=[command_result("pytest -q", 1),
                                                  command_result("ruff check .", 0)])
    store.save(state)
    before = store.paths.loop_file(SESSION).read_bytes()
    assert handle_start(session_start_input(source), env_for(git_repo), str(git_repo)) == {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": (
                f"(Re-stated after {source})\n"
                "A Ralph loop is running in this session (finesse plugin). You will be given the "
                "same task again each time you stop, until you output the completion promise or "
                "the iteration cap is reached.\n\n"
                "Ralph iteration 3/8: output <promise>DONE</promise> only when it is completely "
                "true\n\n"
                "The task, verbatim:\n<ralph-task>\nMake the tests pass\n</ralph-task>\n\n"
                "When you claim completion, the plugin runs `pytest -q` itself and rejects the "
                "claim if any fails.\n"
                "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks "
                "you and what the user must do; that ends the loop as blocked, whatever else "
                "the reply says.\n"
                "End your reply with four lines: `Approach: ...`, `Evidence: ...`, "
                "`Learning: ...`, `Next: ...`.\n\n"
                "Last verification: red: pytest -q"
            ),
        },
    }
    assert store.paths.loop_file(SESSION).read_bytes() == before


def test_re_stated_with_a_green_verification_or_none(git_repo: Path, store: LoopStore) -> None:
    state = running(git_repo, last_verification=[command_result("pytest -q", 0)])
    store.save(state)
    output = handle_start(session_start_input("compact"), env_for(git_repo), str(git_repo))
    assert output == {"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": "(Re-stated after compact)\n" + start_context(state)
                             + "\n\nLast verification: green",
    }}
    store.save(replace(state, last_verification=[]))
    output = handle_start(session_start_input("resume"), env_for(git_repo), str(git_repo))
    assert output == {"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": "(Re-stated after resume)\n" + start_context(state),
    }}


@pytest.mark.parametrize("source", ["startup", "compact", "resume", "clear", "", None])
def test_nothing_to_say_without_a_loop(git_repo: Path, store: LoopStore,
                                       source: str | None) -> None:
    store.save(running(git_repo, session_id=OTHER_SESSION))
    assert handle_start(session_start_input(source), env_for(git_repo), str(git_repo)) is None


def test_startup_says_nothing_even_with_a_loop(git_repo: Path, store: LoopStore) -> None:
    store.save(running(git_repo))
    assert handle_start(session_start_input("startup"), env_for(git_repo), str(git_repo)) is None


@pytest.mark.parametrize(
    "raw",
    [b"", b"garbage", b"[]", b"{}", b'{"session_id": "../x", "source": "compact"}',
     b'{"session_id": 5, "source": "compact"}', b"\xff"],
)
def test_unusable_start_and_end_input(git_repo: Path, store: LoopStore, raw: bytes) -> None:
    store.save(running(git_repo))
    before = store.paths.loop_file(SESSION).read_bytes()
    assert handle_start(raw, env_for(git_repo), str(git_repo)) is None
    assert handle_end(raw, env_for(git_repo), str(git_repo)) is None
    assert store.paths.loop_file(SESSION).read_bytes() == before


# --- SessionEnd and /clear ------------------------------------------------------------------------


def test_clear_archives_the_loop_as_cancelled(git_repo: Path, store: LoopStore) -> None:
    state = running(git_repo)
    store.save(state)
    assert handle_end(session_end_input("clear"), env_for(git_repo), str(git_repo)) is None
    report = store.paths.reports / f"{state.loop_id}.md"
    assert store.history() == [replace(
        end_loop(state, "cancelled", CLEARED, T1), report_path=str(report), ended_by="/clear"
    )]
    assert files_under(store.paths.loops) == []
    assert report.read_text(encoding="utf-8").startswith(
        f"# Ralph loop report: cancelled\n\n- Task: Make the tests pass\n"
        f"- Status: CANCELLED - {CLEARED}\n"
    )


@pytest.mark.parametrize("reason", ["logout", "prompt_input_exit", "other", "", None])
def test_other_session_ends_keep_the_loop(git_repo: Path, store: LoopStore,
                                          reason: str | None) -> None:
    store.save(running(git_repo))
    before = store.paths.loop_file(SESSION).read_bytes()
    assert handle_end(session_end_input(reason), env_for(git_repo), str(git_repo)) is None
    assert store.paths.loop_file(SESSION).read_bytes() == before
    assert store.history() == []


def test_clear_of_a_session_without_a_loop(git_repo: Path, store: LoopStore) -> None:
    store.save(running(git_repo, session_id=OTHER_SESSION))
    assert handle_end(session_end_input("clear"), env_for(git_repo), str(git_repo)) is None
    assert store.history() == []
    assert files_under(store.paths.loops) == [f"{OTHER_SESSION}.json"]


def test_the_new_session_after_clear_is_told(git_repo: Path, store: LoopStore) -> None:
    state = running(git_repo)
    store.save(state)
    handle_end(session_end_input("clear"), env_for(git_repo), str(git_repo))
    # /clear starts a session with a new id.
    assert handle_start(session_start_input("clear", OTHER_SESSION), env_for(git_repo),
                        str(git_repo)) == {
        "systemMessage": f"finesse: /clear ended the Ralph loop of the previous session "
                         f"({state.loop_id}); it was archived as cancelled. Start a new one "
                         "with /ralph-loop."
    }


@pytest.mark.parametrize(
    ("ended", "by", "told"),
    [
        (T1 - timedelta(minutes=3), "/clear", False),  # too long ago: another /clear's
        (T1 - timedelta(seconds=30), "/cancel-ralph", False),
        (T1 - timedelta(seconds=30), "/clear", True),
    ],
)
def test_only_a_recent_clear_is_told(git_repo: Path, store: LoopStore, ended: Any,
                                     by: str, told: bool) -> None:
    # A /clear is recognised by who ended the loop, recorded in its state, not by its words.
    store.archive(replace(end_loop(running(git_repo), "cancelled", CLEARED, ended),
                          ended_by=by))

    output = handle_start(session_start_input("clear", OTHER_SESSION), env_for(git_repo),
                          str(git_repo))
    assert (output is not None) is told


def test_cwd_in_a_subdirectory_finds_the_root(git_repo: Path, store: LoopStore) -> None:
    sub = git_repo / "src"
    sub.mkdir()
    store.save(running(git_repo))
    output = handle_start(session_start_input("compact", cwd=str(sub)), {}, str(sub))
    assert output is not None and set(output) == {"hookSpecificOutput"}
    assert handle_end(session_end_input("clear", cwd=str(sub)), {}, str(sub)) is None
    assert [loop.outcome for loop in store.history()] == ["cancelled"]
    assert not (sub / ".claude").exists()


# --- the entry points -----------------------------------------------------------------------------


def test_main_start_and_main_end(git_repo: Path, store: LoopStore,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(git_repo))
    state = running(git_repo)
    store.save(state)
    out = io.StringIO()
    assert main_start(stdin=io.BytesIO(session_start_input("compact")), stdout=out) == 0
    assert out.getvalue().count("\n") == 1
    assert json.loads(out.getvalue()) == {"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": "(Re-stated after compact)\n" + start_context(state),
    }}
    out = io.StringIO()
    assert main_end(stdin=io.BytesIO(session_end_input("clear")), stdout=out) == 0
    assert out.getvalue() == ""
    assert [loop.outcome for loop in store.history()] == ["cancelled"]
