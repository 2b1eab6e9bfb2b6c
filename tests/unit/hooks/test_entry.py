"""The one launcher, `python3 -S hooks/launch.py EVENT`, in real subprocesses with JSON on
stdin: whole loops driven through it, and the events it answers with the standard library
alone. Under an old python3 it hands over or refuses: tests/unit/hooks/test_relaunch.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from finesse.loop.status import start_context
from finesse.state.store import LoopStore
from tests.helpers.hooks import (
    continuation,
    prompt_input,
    session_end_input,
    session_start_input,
    stop_input,
)
from tests.helpers.launch import LAUNCHER, PROMPT_SUBMIT, STOP, hook_env, run_launcher
from tests.helpers.states import OTHER_SESSION, SESSION, T0, files_under, make_state, store_for
from tests.helpers.texts import NOTES, UNVERIFIED_END, UNVERIFIED_START

# --- a loop through the launcher: UserPromptSubmit and Stop ---------------------------------------


def test_three_iteration_loop_ending_on_the_promise(git_repo: Path) -> None:
    env = hook_env(git_repo)
    sub = git_repo / "sub"
    sub.mkdir()
    store = store_for(git_repo)

    started = run_launcher(
        PROMPT_SUBMIT,
        prompt_input("/ralph-loop \"Fix it's tests; $(touch PWNED)\" --max-iterations 5 "
                     "--completion-promise 'ALL DONE' --quiesce-after 3", cwd="/"),
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
                         "/cancel-ralph to stop.\n" + UNVERIFIED_START,
    }
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]

    for number, reply in ((2, "Read the code."), (3, "Fixed one test, one left.")):
        raw = stop_input(reply, cwd=str(sub), stop_hook_active=True)
        result = run_launcher(STOP, raw, env, sub)
        assert (result.code, result.stderr) == (0, "")
        assert result.output() == continuation(
            f"Ralph iteration {number}/5: output <promise>ALL DONE</promise> only when it is "
            f"completely true\n\nFix it's tests; $(touch PWNED)\n\n---\n\n{NOTES}",
            f"Ralph iteration {number}/5",
        )

    raw = stop_input("Both pass.\n<promise>ALL  DONE</promise>", cwd=str(sub),
                     stop_hook_active=True)
    done = run_launcher(STOP, raw, env, sub)
    assert (done.code, done.stderr) == (0, "")
    assert files_under(store.paths.loops) == []
    [ended] = store.history()
    assert done.output() == {
        "systemMessage": "Ralph loop done: <promise>ALL DONE</promise> at iteration 3/5"
                         + UNVERIFIED_END + "\nFiles modified: 0 (+0, -0)\n"
                         f"Report: .claude/ralph/reports/{ended.loop_id}.md"
    }
    assert (ended.outcome, ended.iteration, [r.result for r in ended.iterations]) == (
        "success", 3, ["continue", "continue", "success"]
    )
    assert not (git_repo / "PWNED").exists() and not (sub / "PWNED").exists()

    after = run_launcher(STOP, stop_input("anything", cwd="/", stop_hook_active=True), env, sub)
    assert (after.code, after.stdout, after.stderr) == (0, "", "")


def test_no_loop_prints_nothing(git_repo: Path) -> None:
    env = hook_env(git_repo)
    claim = stop_input("<promise>RALPH_LOOP_STOP</promise>", cwd="/", stop_hook_active=True)
    for raw in (claim, b"", b"garbage", b"[]"):
        result = run_launcher(STOP, raw, env, git_repo)
        assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert not (git_repo / ".claude").exists()


def test_other_sessions_loop_prints_nothing(git_repo: Path) -> None:
    env = hook_env(git_repo)
    run_launcher(PROMPT_SUBMIT, prompt_input("/ralph-loop theirs", OTHER_SESSION, "/"), env,
                 git_repo)
    path = store_for(git_repo).paths.loop_file(OTHER_SESSION)
    before = path.read_bytes()
    claim = stop_input("<promise>RALPH_LOOP_STOP</promise>", cwd="/", stop_hook_active=True)
    result = run_launcher(STOP, claim, env, git_repo)
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert path.read_bytes() == before


def test_ordinary_prompts_print_nothing(git_repo: Path) -> None:
    env = hook_env(git_repo)
    for raw in (prompt_input("Fix the tests", cwd="/"), prompt_input("/ralph-loopy x", cwd="/"),
                b"", b"{"):
        result = run_launcher(PROMPT_SUBMIT, raw, env, git_repo)
        assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert not (git_repo / ".claude").exists()


def test_bad_arguments_are_blocked_through_the_launcher(git_repo: Path) -> None:
    result = run_launcher(PROMPT_SUBMIT, prompt_input("/ralph-loop go --max-iterations 0", cwd="/"),
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
    run_launcher(PROMPT_SUBMIT, prompt_input("/ralph-loop go", cwd="/"), env, git_repo)
    del env["CLAUDE_PROJECT_DIR"]
    sub = git_repo / "deep" / "er"
    sub.mkdir(parents=True)
    raw = stop_input("working", cwd=str(sub), stop_hook_active=True)
    result = run_launcher(STOP, raw, env, sub)
    assert result.output() == continuation(
        "Ralph iteration 2/8: output <promise>RALPH_LOOP_STOP</promise> only when it is "
        f"completely true\n\ngo\n\n---\n\n{NOTES}",
        "Ralph iteration 2/8",
    )


def test_stray_names_in_the_loops_folder_do_not_stop_a_loop(git_repo: Path) -> None:
    # A file whose name is not UTF-8, or not ASCII, beside the loop file is no session's
    # loop: the launcher passes over it and this session's loop still continues.
    env = hook_env(git_repo)
    run_launcher(PROMPT_SUBMIT, prompt_input("/ralph-loop go", cwd="/"), env, git_repo)
    loops = store_for(git_repo).paths.loops
    (loops / os.fsdecode(b"caf\xe9.json")).write_bytes(b"{}")
    (loops / "r\u00e9sum\u00e9.json").write_text("{}")
    result = run_launcher(STOP, stop_input("working", cwd="/", stop_hook_active=True), env,
                          git_repo)
    assert (result.code, result.stderr) == (0, "")
    assert result.output() == continuation(
        "Ralph iteration 2/8: output <promise>RALPH_LOOP_STOP</promise> only when it is "
        f"completely true\n\ngo\n\n---\n\n{NOTES}",
        "Ralph iteration 2/8",
    )


def test_may_have_loop_passes_over_names_that_are_no_session(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Listed before the loop file, a stray name must neither raise nor hide the loop.
    from finesse.hooks import entry
    from finesse.support import layout

    names = [os.fsdecode(b"caf\xe9.json"), "r\u00e9sum\u00e9.json", "notes.txt", f"{SESSION}.json"]
    monkeypatch.setattr(layout, "loop_file_names", lambda root: names)
    assert entry.may_have_loop(stop_input("working"), "/nowhere")
    names.pop()
    assert not entry.may_have_loop(stop_input("working"), "/nowhere")


def test_stop_path_needs_no_plugin_environment(git_repo: Path, tmp_path: Path) -> None:
    # The Stop hook's active path is standard library only: with no virtualenv built and
    # no site-packages (python3 -S), the loop still continues.
    env = hook_env(git_repo)
    run_launcher(PROMPT_SUBMIT, prompt_input("/ralph-loop go", cwd="/"), env, git_repo)
    env.pop("FINESSE_RUNTIME")
    env["CLAUDE_PLUGIN_DATA"] = str(tmp_path / "empty-plugin-data")
    raw = stop_input("working", cwd="/", stop_hook_active=True)
    result = run_launcher(STOP, raw, env, git_repo)
    assert (result.code, result.stderr) == (0, "")
    assert result.output() == continuation(
        "Ralph iteration 2/8: output <promise>RALPH_LOOP_STOP</promise> only when it is "
        f"completely true\n\ngo\n\n---\n\n{NOTES}",
        "Ralph iteration 2/8",
    )
    assert not (tmp_path / "empty-plugin-data").exists()


# --- SessionStart and SessionEnd through the launcher ---------------------------------------------


def test_launcher_without_loop_state_imports_nothing_and_says_nothing(git_repo: Path) -> None:
    env = hook_env(git_repo)
    for event, raw in (("session-start", session_start_input("compact")),
                       ("session-end", session_end_input("clear")),
                       ("session-start", b"garbage"), ("session-end", b"")):
        result = run_launcher(event, raw, env, git_repo)
        assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert not (git_repo / ".claude").exists()


def test_launcher_re_states_and_archives(git_repo: Path, store: LoopStore) -> None:
    env = hook_env(git_repo)
    env.pop("FINESSE_RUNTIME")  # standard library only: no plugin environment needed
    state = make_state(git_repo, started_at=T0)
    store.save(state)
    started = run_launcher("session-start", session_start_input("compact"), env, git_repo)
    assert (started.code, started.stderr) == (0, "")
    assert started.output() == {"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": "(Re-stated after compact)\n" + start_context(state),
    }}
    ended = run_launcher("session-end", session_end_input("clear"), env, git_repo)
    assert (ended.code, ended.stdout, ended.stderr) == (0, "", "")
    [archived] = store.history()
    assert (archived.loop_id, archived.outcome, archived.end_message) == (
        state.loop_id, "cancelled", "Ralph loop cancelled by /clear at iteration 1/8."
    )
    told = run_launcher("session-start", session_start_input("clear", OTHER_SESSION), env, git_repo)
    assert told.output() == {
        "systemMessage": f"finesse: /clear ended the Ralph loop of the previous session "
                         f"({state.loop_id}); it was archived as cancelled. Start a new one "
                         "with /ralph-loop."
    }


def test_launcher_finds_the_root_from_a_subdirectory(git_repo: Path, store: LoopStore) -> None:
    env = hook_env(git_repo)
    del env["CLAUDE_PROJECT_DIR"]
    sub = git_repo / "src"
    sub.mkdir()
    state = make_state(git_repo)
    store.save(state)
    started = run_launcher("session-start", session_start_input("compact", cwd=str(sub)), env, sub)
    assert started.output() == {"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": "(Re-stated after compact)\n" + start_context(state),
    }}


# --- /goal typed while a loop runs ------------------------------------------------------------


def test_goal_typed_with_a_loop_ends_the_loop(git_repo: Path) -> None:
    # A UserPromptSubmit block cannot stop Claude Code from setting a goal, so a loop
    # beside it would fight it for the Stop hook: the loop ends, cancelled by /goal.
    env = hook_env(git_repo)
    run_launcher(PROMPT_SUBMIT, prompt_input("/ralph-loop go", cwd="/"), env, git_repo)
    store = store_for(git_repo)
    loop_file = store.paths.loop_file(SESSION)
    for harmless in ("/goal", "/goal clear", "  /goal   clear  ", "/goals are fine",
                     "tell me about /goal x"):
        quiet = run_launcher(PROMPT_SUBMIT, prompt_input(harmless, cwd="/"), env, git_repo)
        assert (quiet.code, quiet.stdout, quiet.stderr) == (0, "", "")
        assert loop_file.exists()
    other = run_launcher(PROMPT_SUBMIT, prompt_input("/goal ship it", OTHER_SESSION, "/"), env,
                         git_repo)
    assert (other.code, other.stdout) == (0, "")  # another session's goal: not this loop's
    assert loop_file.exists()
    typed = run_launcher(PROMPT_SUBMIT, prompt_input("/goal all tests pass", cwd="/"), env,
                         git_repo)
    assert (typed.code, typed.stderr) == (0, "")
    [ended] = store.history()
    assert typed.output() == {"systemMessage": (
        "finesse: /goal was set while a Ralph loop ran in this session; a goal and a loop "
        f"would fight over the Stop hook, so the loop {ended.loop_id} has ended (cancelled by "
        "/goal). Start it again after `/goal clear`.")}
    assert (ended.outcome, ended.ended_by) == ("cancelled", "/goal")
    assert not loop_file.exists()

# --- judge mode's hooks through the launcher ----------------------------------------------------


def test_pre_tool_use_without_a_judge_loop_imports_nothing(git_repo: Path) -> None:
    env = hook_env(git_repo)
    raw = json.dumps({"session_id": SESSION, "tool_name": "Write",
                      "tool_input": {"file_path": "x"}}).encode()
    for event in ("pre-tool-use", "subagent-start", "subagent-stop"):
        done = subprocess.run([sys.executable, "-S", "-X", "importtime", str(LAUNCHER), event],
                              input=raw, capture_output=True, env=env, cwd=git_repo, timeout=60)
        imported = {line.rsplit("|", 1)[-1].strip() for line in
                    done.stderr.decode().splitlines() if line.startswith("import time:")}
        assert (done.returncode, done.stdout) == (0, b"")
        assert {"json", "finesse.hooks.pre_tool_use", "finesse.hooks.subagent"} & imported == set()


def test_judge_mode_through_the_launcher(git_repo: Path) -> None:
    env = hook_env(git_repo)
    started = run_launcher(PROMPT_SUBMIT, prompt_input(
        '/ralph-loop "Write ok" --judge --criteria "ok.txt exists" --verify "test -f ok.txt"'),
        env, git_repo)
    assert started.output()["hookSpecificOutput"]["additionalContext"].startswith(  # type: ignore[index]
        "A Ralph loop in judge mode is running")
    write_call = json.dumps({"session_id": SESSION, "tool_name": "Write",
                             "tool_input": {"file_path": "ok.txt"}}).encode()
    denied = run_launcher("pre-tool-use", write_call, env, git_repo)
    assert denied.output() == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "judge mode: the orchestrator does not do the work: "
        'delegate this to the ralph-worker subagent (the Agent tool, subagent_type '
        '"finesse:ralph-worker")'}}
    worker = {"session_id": SESSION, "agent_id": "w1", "agent_type": "finesse:ralph-worker"}
    brief = run_launcher("subagent-start", json.dumps(worker).encode(), env, git_repo)
    assert brief.output()["hookSpecificOutput"]["hookEventName"] == "SubagentStart"  # type: ignore[index]
    stopped = run_launcher("subagent-stop", json.dumps(
        {**worker, "last_assistant_message": '{"summary": "x"}'}).encode(), env, git_repo)
    assert (stopped.code, stopped.stderr) == (0, "")
    assert stopped.output()["reason"].startswith(  # type: ignore[index]
        "Your final message does not hold the worker JSON the loop needs: changes: Field "
        "required;")


def test_an_iteration_of_a_headless_run_has_hooks_that_do_nothing(
    git_repo: Path, store: LoopStore
) -> None:
    # `ralph run` puts FINESSE_HEADLESS_CHILD in each iteration's environment: whatever the
    # session's id and input, none of the plugin's hooks starts, drives or ends a loop there,
    # not even one whose file has the session's own name.
    state = make_state(git_repo, started_at=T0)
    store.save(state)
    before = store.paths.loop_file(SESSION).read_bytes()
    env = hook_env(git_repo, FINESSE_HEADLESS_CHILD=OTHER_SESSION)
    for event, raw in (
        (STOP, stop_input("<promise>DONE</promise>", cwd="/", stop_hook_active=True)),
        (PROMPT_SUBMIT, prompt_input("/ralph-loop go --max-iterations 2", OTHER_SESSION, "/")),
        (PROMPT_SUBMIT, prompt_input("/cancel-ralph", cwd="/")),
        ("session-start", session_start_input("compact")),
        ("session-end", session_end_input("clear")),
    ):
        result = run_launcher(event, raw, env, git_repo)
        assert (result.code, result.stdout, result.stderr) == (0, "", ""), event
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]
    assert store.paths.loop_file(SESSION).read_bytes() == before
    assert store.history() == []
