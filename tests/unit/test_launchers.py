"""The stdlib launchers in real subprocesses: a whole loop driven through stdin JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.launch import LAUNCHER, PROMPT_SUBMIT, STOP, hook_env, run_launcher
from tests.helpers.states import OTHER_SESSION, SESSION, files_under, store_for

NOTES = (
    "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you.\n"
    "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
    "`Next: ...`."
)


def stop_json(reply: str, session_id: str = SESSION, cwd: Path | None = None) -> bytes:
    return json.dumps({
        "session_id": session_id, "transcript_path": "/nonexistent.jsonl",
        "cwd": str(cwd) if cwd else "/", "permission_mode": "default",
        "hook_event_name": "Stop", "stop_hook_active": True,
        "last_assistant_message": reply,
    }).encode()


def prompt_json(prompt: str, session_id: str = SESSION) -> bytes:
    return json.dumps({
        "session_id": session_id, "transcript_path": "/nonexistent.jsonl", "cwd": "/",
        "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt,
    }).encode()


def test_three_iteration_loop_ending_on_the_promise(git_repo: Path) -> None:
    env = hook_env(git_repo)
    sub = git_repo / "sub"
    sub.mkdir()
    store = store_for(git_repo)

    started = run_launcher(
        PROMPT_SUBMIT,
        prompt_json("/ralph-loop \"Fix it's tests; $(touch PWNED)\" --max-iterations 5 "
                    "--completion-promise 'ALL DONE' --quiesce-after 3"),
        env, sub,
    )
    assert (started.code, started.stderr) == (0, "")
    assert started.output() == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": (
                "A Ralph loop is running in this session (finesse plugin). You will be given the "
                "same task again each time you stop, until you output the completion promise or "
                "the iteration cap is reached.\n\n"
                "Ralph iteration 1/5: output <promise>ALL DONE</promise> only when it is "
                "completely true\n\n"
                "The task, verbatim:\n<ralph-task>\nFix it's tests; $(touch PWNED)\n</ralph-task>"
                f"\n\n{NOTES}"
            ),
        },
        "systemMessage": "Ralph loop started: up to 5 iterations, ends on "
                         "<promise>ALL DONE</promise>. /ralph-status to watch, "
                         "/cancel-ralph to stop.",
    }
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]

    for number, reply in ((2, "Read the code."), (3, "Fixed one test, one left.")):
        result = run_launcher(STOP, stop_json(reply, cwd=sub), env, sub)
        assert (result.code, result.stderr) == (0, "")
        assert result.output() == {
            "decision": "block",
            "reason": f"Ralph iteration {number}/5: output <promise>ALL DONE</promise> only "
                      "when it is completely true\n\nFix it's tests; $(touch PWNED)"
                      f"\n\n---\n\n{NOTES}",
            "systemMessage": f"Ralph iteration {number}/5",
        }

    done = run_launcher(STOP, stop_json("Both pass.\n<promise>ALL  DONE</promise>", cwd=sub),
                        env, sub)
    assert (done.code, done.stderr) == (0, "")
    assert files_under(store.paths.loops) == []
    [ended] = store.history()
    assert done.output() == {
        "systemMessage": "Ralph loop done: <promise>ALL DONE</promise> seen at iteration 3/5.\n"
                         f"Report: .claude/ralph/reports/{ended.loop_id}.md"
    }
    assert (ended.outcome, ended.iteration, [r.result for r in ended.iterations]) == (
        "success", 3, ["continue", "continue", "success"]
    )
    assert not (git_repo / "PWNED").exists() and not (sub / "PWNED").exists()

    after = run_launcher(STOP, stop_json("anything"), env, sub)
    assert (after.code, after.stdout, after.stderr) == (0, "", "")


def test_no_loop_prints_nothing(git_repo: Path) -> None:
    env = hook_env(git_repo)
    for raw in (stop_json("<promise>RALPH_LOOP_STOP</promise>"), b"", b"garbage", b"[]"):
        result = run_launcher(STOP, raw, env, git_repo)
        assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert not (git_repo / ".claude").exists()


def test_other_sessions_loop_prints_nothing(git_repo: Path) -> None:
    env = hook_env(git_repo)
    run_launcher(PROMPT_SUBMIT, prompt_json("/ralph-loop theirs", OTHER_SESSION), env, git_repo)
    path = store_for(git_repo).paths.loop_file(OTHER_SESSION)
    before = path.read_bytes()
    result = run_launcher(STOP, stop_json("<promise>RALPH_LOOP_STOP</promise>"), env, git_repo)
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert path.read_bytes() == before


def test_ordinary_prompts_print_nothing(git_repo: Path) -> None:
    env = hook_env(git_repo)
    for raw in (prompt_json("Fix the tests"), prompt_json("/ralph-loopy x"), b"", b"{"):
        result = run_launcher(PROMPT_SUBMIT, raw, env, git_repo)
        assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert not (git_repo / ".claude").exists()


def test_bad_arguments_are_blocked_through_the_launcher(git_repo: Path) -> None:
    result = run_launcher(PROMPT_SUBMIT, prompt_json("/ralph-loop go --max-iterations 0"),
                          hook_env(git_repo), git_repo)
    assert (result.code, result.stderr) == (0, "")
    assert result.output() == {
        "decision": "block",
        "reason": "finesse: --max-iterations must be from 1 to 1000, not 0: a loop always has a "
                  "cap; for example --max-iterations 8",
    }
    assert not (git_repo / ".claude").exists()


def test_stop_finds_the_root_from_cwd_without_project_dir(git_repo: Path) -> None:
    env = hook_env(git_repo)
    run_launcher(PROMPT_SUBMIT, prompt_json("/ralph-loop go"), env, git_repo)
    del env["CLAUDE_PROJECT_DIR"]
    sub = git_repo / "deep" / "er"
    sub.mkdir(parents=True)
    result = run_launcher(STOP, stop_json("working", cwd=sub), env, sub)
    assert result.output() == {
        "decision": "block",
        "reason": "Ralph iteration 2/8: output <promise>RALPH_LOOP_STOP</promise> only when it "
                  f"is completely true\n\ngo\n\n---\n\n{NOTES}",
        "systemMessage": "Ralph iteration 2/8",
    }


def test_stop_path_needs_no_plugin_environment(git_repo: Path, tmp_path: Path) -> None:
    # The Stop hook's active path is standard library only: with no virtualenv built and
    # no site-packages (python3 -S), the loop still continues.
    env = hook_env(git_repo)
    run_launcher(PROMPT_SUBMIT, prompt_json("/ralph-loop go"), env, git_repo)
    env.pop("FINESSE_RUNTIME")
    env["CLAUDE_PLUGIN_DATA"] = str(tmp_path / "empty-plugin-data")
    result = run_launcher(STOP, stop_json("working"), env, git_repo)
    assert (result.code, result.stderr) == (0, "")
    assert result.output() == {
        "decision": "block",
        "reason": "Ralph iteration 2/8: output <promise>RALPH_LOOP_STOP</promise> only when it "
                  f"is completely true\n\ngo\n\n---\n\n{NOTES}",
        "systemMessage": "Ralph iteration 2/8",
    }
    assert not (tmp_path / "empty-plugin-data").exists()


@pytest.mark.parametrize("version", [(3, 10, 13), (3, 8, 18)])
def test_prompt_launcher_refuses_an_old_python_in_one_line(version: tuple[int, int, int]) -> None:
    # The launcher is run as on an old interpreter: only its version check is under test.
    pretend = (
        "import runpy, sys; "
        f"sys.version_info = {(*version, 'final', 0)!r}; "
        f"sys.argv = ['launch.py', 'prompt']; "
        f"runpy.run_path({str(LAUNCHER)!r}, run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", pretend],
        input=b'{"session_id": "abc", "prompt": "/ralph-status", "cwd": "/"}',
        capture_output=True, timeout=30,
    )
    assert done.returncode == 0
    found = ".".join(map(str, version))
    assert done.stdout.decode().strip() == (
        '{"decision": "block", "reason": "finesse: needs Python 3.11 or newer as python3, '
        f'found {found}; see `ralph doctor`"}}'
    )
