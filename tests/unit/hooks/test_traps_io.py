"""Issue 10's traps around what a hook reads and when, as the adversarial review reproduced
them: through the hook launcher in real subprocesses (and `ralph` from a terminal). FIFOs
wherever a path is read, a cancel that arrives while a stop runs its checks, and a subagent's
stop. Every launcher run has a timeout: a hang fails the test instead of stalling it."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.hooks import continuation, prompt_input, stop_input
from tests.helpers.launch import (
    PROMPT_SUBMIT,
    STOP,
    Run,
    finished,
    hook_env,
    run_launcher,
    run_ralph,
    start_launcher,
)
from tests.helpers.plans import PLAN, commit_plan
from tests.helpers.states import SESSION, active, files_under, only_archived, store_for
from tests.helpers.texts import NOTES

HANG_GUARD = 30  # seconds: far above any run here; only a hang reaches it


def _prompt(root: Path, prompt: str, transcript: str = "/nonexistent/t.jsonl") -> Run:
    return run_launcher(PROMPT_SUBMIT, prompt_input(prompt, cwd=str(root), transcript=transcript),
                        hook_env(root), root, timeout=HANG_GUARD)


def _stop(root: Path, reply: str | None = "working", **extra: object) -> Run:
    return run_launcher(STOP, stop_input(reply, cwd=str(root), stop_hook_active=True, **extra),
                        hook_env(root), root, timeout=HANG_GUARD)


def _continues(number: int, task: str = "go", notes: str = NOTES,
               promise: str = "RALPH_LOOP_STOP") -> dict[str, object]:
    return continuation(
        f"Ralph iteration {number}/8: output <promise>{promise}</promise> only when it is "
        f"completely true\n\n{task}\n\n---\n\n{notes}",
        f"Ralph iteration {number}/8",
    )


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _is_fifo(path: Path) -> bool:
    return stat.S_ISFIFO(os.lstat(path).st_mode)


# --- 9. FIFOs where a file is read ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        ("--prompt-file pipe", "--prompt-file"),
        ("go --completion-promise-file pipe", "--completion-promise-file"),
        ("--plan pipe", "--plan"),
        ("go --verify true --plan pipe", "--plan"),
    ],
)
def test_a_fifo_named_by_a_start_option_is_refused_in_one_line(git_repo: Path, options: str,
                                                              flag: str) -> None:
    _fifo(git_repo / "pipe")
    refused = _prompt(git_repo, f"/ralph-loop {options}")
    assert (refused.code, refused.stderr) == (0, "")
    assert refused.output() == {
        "decision": "block",
        "reason": f"finesse: {flag} pipe: not a regular file (a FIFO, device or socket); "
                  "give a plain file",
    }
    assert files_under(store_for(git_repo).paths.base) == []


@pytest.mark.parametrize(
    ("words", "flag"),
    [
        (["--prompt-file", "pipe"], "--prompt-file"),
        (["go", "--completion-promise-file", "pipe"], "--completion-promise-file"),
        (["--plan", "pipe"], "--plan"),
    ],
)
def test_ralph_start_refuses_a_fifo_in_one_line(git_repo: Path, words: list[str],
                                               flag: str) -> None:
    _fifo(git_repo / "pipe")
    refused = run_ralph(git_repo, "start", "--session", SESSION, *words, timeout=HANG_GUARD)
    assert refused == Run(2, "", f"ralph start: {flag} pipe: not a regular file (a FIFO, device "
                                 "or socket); give a plain file\n")
    assert files_under(store_for(git_repo).paths.base) == []


def test_a_fifo_notebook_is_never_read_nor_written(git_repo: Path) -> None:
    # tasks/todo.md is the loop's notebook when it is a plan; a FIFO there is passed over.
    _fifo(git_repo / "tasks" / "todo.md")
    started = _prompt(git_repo, "/ralph-loop go --quiesce-after 7")
    assert set(started.output() or {}) == {"hookSpecificOutput", "systemMessage"}
    assert active(git_repo).notebook is None
    assert _stop(git_repo).output() == _continues(2)
    assert _is_fifo(git_repo / "tasks" / "todo.md")


def test_a_fifo_transcript_is_passed_over(git_repo: Path, tmp_path: Path) -> None:
    transcript = str(_fifo(tmp_path / "transcript.jsonl"))
    started = _prompt(git_repo, "/ralph-loop go --quiesce-after 7", transcript=transcript)
    assert set(started.output() or {}) == {"hookSpecificOutput", "systemMessage"}
    # No last_assistant_message: the reply would come from the transcript, a FIFO.
    assert _stop(git_repo, None, transcript=transcript).output() == _continues(2)
    assert _stop(git_repo, "working", transcript=transcript).output() == _continues(3)
    state = active(git_repo)
    assert (state.cursor, [r.tool_calls for r in state.iterations]) == (
        None, [None, None])


def test_a_fifo_loop_done_file_is_no_signal_and_is_left_alone(git_repo: Path) -> None:
    store = store_for(git_repo)
    done = store.paths.loop_done_file(SESSION)
    _fifo(done)
    _prompt(git_repo, "/ralph-loop go --quiesce-after 7")
    assert not done.exists()  # a stale one at the start is removed, whatever it is
    _fifo(done)
    assert _stop(git_repo).output() == _continues(2)
    assert _is_fifo(done) and active(git_repo).iteration == 2


def test_a_fifo_quota_file_is_passed_over(git_repo: Path) -> None:
    # The status line's figures are read at every stop of a --stop-at-quota loop.
    _prompt(git_repo, "/ralph-loop go --quiesce-after 7 --stop-at-quota 80")
    quota = _fifo(store_for(git_repo).paths.base / "quota.json")
    assert _stop(git_repo).output() == _continues(2)
    assert _is_fifo(quota) and active(git_repo).iteration == 2


def _lock_problem(root: Path, reason: str) -> str:
    lock = store_for(root).paths.lock_file(SESSION)
    return (f"cannot lock {lock}: {reason}; remove what is there, or make "
            f"{store_for(root).paths.locks} a writable folder, then try again")


def test_a_fifo_lock_file_never_hangs_a_hook_nor_ralph(git_repo: Path) -> None:
    """Opening a FIFO to write waits for a reader: the Stop hook hung until Claude Code's
    timeout (an hour) and `ralph cancel` for ever. Each says so in one line instead, and the
    loop is left as it was."""
    _prompt(git_repo, "/ralph-loop go --quiesce-after 7")
    store = store_for(git_repo)
    lock = store.paths.lock_file(SESSION)
    lock.unlink()
    _fifo(lock)
    before = store.paths.loop_file(SESSION).read_bytes()
    problem = _lock_problem(git_repo, "not a regular file (a FIFO, device or socket)")
    assert _stop(git_repo).output() == {
        "systemMessage": f"finesse: {problem}; this stop went ahead"}
    assert _prompt(git_repo, "/cancel-ralph").output() == {
        "decision": "block", "reason": f"finesse: {problem}"}
    assert run_ralph(git_repo, "cancel", timeout=HANG_GUARD) == Run(
        1, "", f"ralph cancel: {problem}\n")
    assert store.paths.loop_file(SESSION).read_bytes() == before and _is_fifo(lock)


PLAN_NOTES = (
    "The plan is tasks/todo.md: re-read it now; your attempts are recorded under its "
    "`## Attempts`.\n"
    "When you claim completion, the plugin runs `test -f README.md` itself and rejects the "
    "claim if any fails.\n" + NOTES
)
PLAN_TASK = ("Work through the plan in tasks/todo.md: read it, take the first incomplete, "
             "unblocked task, do it (test first for behaviour changes), run its verification, "
             "and tick it off in the plan.")


def test_a_plan_replaced_by_a_fifo_between_stops(git_repo: Path) -> None:
    store = store_for(git_repo)
    plan = commit_plan(git_repo, PLAN)
    _prompt(git_repo, "/ralph-loop --plan tasks/todo.md --quiesce-after 7")
    assert _stop(git_repo, "Approach: read it").output() == _continues(2, PLAN_TASK, PLAN_NOTES)
    plan.unlink()
    _fifo(plan)
    assert _stop(git_repo, "Approach: go on").output() == _continues(3, PLAN_TASK, PLAN_NOTES)
    ended = _stop(git_repo, "Approach: done\n<promise>RALPH_LOOP_STOP</promise>").output()
    loop = only_archived(git_repo)
    assert ended == {"systemMessage": (
        "Ralph loop done: <promise>RALPH_LOOP_STOP</promise> at iteration 3/8 and verified: "
        "`test -f README.md` exit 0.\nFiles modified: 0 (+0, -0)\n"
        f"Report: .claude/ralph/reports/{loop.loop_id}.md")}
    assert _is_fifo(plan)
    notes = [line.split(" ", 1)[1] for line in store.paths.log.read_text().splitlines()]
    cannot = (f"loop {loop.loop_id}: could not write the plan {plan}: {plan}: not a regular "
              "file (a FIFO, device or socket); give a plain file")
    assert notes and set(notes) == {cannot}


# --- 10. a cancel while a stop runs its checks ----------------------------------------------------

# The verification command: it says it has started, then waits until the cancel has been
# recorded, and passes. So the cancel surely arrives while the check runs, and with no cancel
# the claim would be verified: a success. It waits 10 s at most: a check of a few seconds. A
# cancel must not wait for the stop's lock for longer (it waited 15 s, then the stop had
# long decided "success", and the cancel found no loop).
CHECK = """\
import os, sys, time
open(sys.argv[1], "w").close()
for _ in range(200):
    if os.path.exists(sys.argv[2]):
        break
    time.sleep(0.05)
"""


def _wait_for(path: Path) -> None:
    for _ in range(HANG_GUARD * 20):
        if path.exists():
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


@pytest.mark.parametrize("where", ["/cancel-ralph", "ralph cancel"])
def test_a_cancel_while_the_stop_verifies_wins(git_repo: Path, tmp_path: Path,
                                              where: str) -> None:
    store = store_for(git_repo)
    check, started = tmp_path / "check.py", tmp_path / "started"
    check.write_text(CHECK)
    request = store.paths.request_file(SESSION)
    _prompt(git_repo, f"/ralph-loop go --verify '{sys.executable} {check} {started} {request}'")

    stop = start_launcher(STOP, stop_input("All done. <promise>RALPH_LOOP_STOP</promise>",
                                           cwd=str(git_repo), stop_hook_active=True),
                          hook_env(git_repo), git_repo)
    try:
        _wait_for(started)  # the stop holds the lock and runs the check
        if where == "/cancel-ralph":
            cancel = _prompt(git_repo, "/cancel-ralph")
            assert cancel.output() == {
                "decision": "block",
                "reason": "finesse: the loop's stop is busy (running its checks); the cancel "
                          "is recorded and the loop ends as soon as that stop decides.",
                "hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                       "suppressOriginalPrompt": True},
            }
        else:
            cancel = run_ralph(git_repo, "cancel", timeout=HANG_GUARD)
            assert cancel == Run(0, f"The loop of session {SESSION} is busy (running its "
                                    "checks): the cancel is recorded; it ends as soon as that "
                                    "stop decides.\n", "")
    finally:
        ended = finished(stop, timeout=HANG_GUARD)

    loop = only_archived(git_repo)
    by = "/cancel-ralph" if where == "/cancel-ralph" else "`ralph cancel`"
    assert ended.output() == {"systemMessage": (
        f"Ralph loop cancelled by {by} at iteration 1/8.\n"
        f"Report: .claude/ralph/reports/{loop.loop_id}.md")}
    assert (loop.outcome, loop.ended_by) == ("cancelled", by)
    assert files_under(store.paths.loops) == [] and not request.exists()
    assert _stop(git_repo, "<promise>RALPH_LOOP_STOP</promise>") == Run(0, "", "")


def test_a_stale_cancel_request_never_cancels_the_next_loop(git_repo: Path) -> None:
    # A request left behind (its loop ended before the busy stop could read it) belongs to
    # that loop alone.
    store = store_for(git_repo)
    store.request_cancel(SESSION, "/cancel-ralph")
    _prompt(git_repo, "/ralph-loop go --quiesce-after 7")
    assert _stop(git_repo).output() == _continues(2)


# --- 17. a subagent's stop ------------------------------------------------------------------------


@pytest.mark.parametrize("event", ["SubagentStop", "Stop"])
def test_a_subagent_stop_never_advances_the_main_loop(git_repo: Path, event: str) -> None:
    store = store_for(git_repo)
    _prompt(git_repo, "/ralph-loop go --verify 'touch verified'")
    before = store.paths.loop_file(SESSION).read_bytes()
    for reply in ("working", "<promise>RALPH_LOOP_STOP</promise>", "RESULT: BLOCKED\nno key"):
        run = _stop(git_repo, reply, agent_id="a1b2c3", agent_type="general-purpose",
                    hook_event_name=event)
        assert run == Run(0, "", "")
    assert store.paths.loop_file(SESSION).read_bytes() == before
    assert not (git_repo / "verified").exists() and store.history() == []
