"""The hook handlers and entry points, in process, in a real temporary git repository."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from finesse.hooks import prompt_submit, stop
from finesse.hooks.boundary import run_hook
from finesse.loop.grammar import LOOP_USAGE as USAGE
from finesse.models import LoopState
from finesse.state.store import LoopStore
from finesse.support import git as gitstate
from tests.helpers.repo import git
from tests.helpers.states import OTHER_SESSION, SESSION, files_under, hold_lock, store_for

TRANSCRIPT = "/nonexistent/transcript.jsonl"
START_TEXT = (
    "A Ralph loop is running in this session (finesse plugin). You will be given the same task "
    "again each time you stop, until you output the completion promise or the iteration cap is "
    "reached.\n\n"
)
# The protocol notes of a loop without a plan or verification commands.
NOTES = (
    "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you.\n"
    "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
    "`Next: ...`."
)


def continues(number: int, cap: int, promise: str, task: str) -> dict[str, str]:
    """The Stop hook's output when the loop goes on to iteration `number`."""
    return {
        "decision": "block",
        "reason": f"Ralph iteration {number}/{cap}: output <promise>{promise}</promise> only "
                  f"when it is completely true\n\n{task}\n\n---\n\n{NOTES}",
        "systemMessage": f"Ralph iteration {number}/{cap}",
    }


def report_line(state: LoopState) -> str:
    return f"Report: .claude/ralph/reports/{state.loop_id}.md"


def prompt_input(prompt: str, session_id: str = SESSION, cwd: str = "/somewhere") -> bytes:
    return json.dumps({
        "session_id": session_id,
        "transcript_path": TRANSCRIPT,
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }).encode()


def stop_input(
    reply: str | None = "Still working on it.",
    session_id: str = SESSION,
    cwd: str = "/somewhere",
    transcript: str = TRANSCRIPT,
    **extra: Any,
) -> bytes:
    data: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": transcript,
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "background_tasks": [],
        "session_crons": [],
        **extra,
    }
    if reply is not None:
        data["last_assistant_message"] = reply
    return json.dumps(data).encode()


def env_for(root: Path) -> Mapping[str, str]:
    return {"CLAUDE_PROJECT_DIR": str(root)}


def submit(root: Path, prompt: str, session_id: str = SESSION) -> dict[str, Any] | None:
    return prompt_submit.handle(prompt_input(prompt, session_id, str(root)), env_for(root),
                                str(root))


def stop_hook(root: Path, raw: bytes) -> dict[str, Any] | None:
    return stop.handle(raw, env_for(root), str(root))


def active(root: Path, session_id: str = SESSION) -> LoopState:
    state = store_for(root).load(session_id)
    assert state is not None
    return state


def archived(root: Path) -> list[LoopState]:
    return store_for(root).history()


# --- UserPromptSubmit -------------------------------------------------------------------------


def test_start_writes_state_and_adds_context(git_repo: Path, store: LoopStore) -> None:
    prompt = "Fix it's \"bug\"; $(touch X) `y`\nsecond line"
    typed = '"Fix it\'s \\"bug\\"; $(touch X) `y`\nsecond line"'  # as the user typed it
    command = (f"/ralph-loop {typed} --max-iterations 3 "
               "--completion-promise 'ALL  DONE' --verify 'pytest -q'")
    output = submit(git_repo, command)
    state = active(git_repo)
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": (
                START_TEXT
                + "Ralph iteration 1/3: output <promise>ALL DONE</promise> only when it is "
                "completely true\n\n"
                f"The task, verbatim:\n<ralph-task>\n{prompt}\n</ralph-task>\n\n"
                "When you claim completion, the plugin runs `pytest -q` itself and rejects the "
                f"claim if any fails.\n{NOTES}"
            ),
        },
        "systemMessage": (
            "Ralph loop started: up to 3 iterations, ends on <promise>ALL DONE</promise>. "
            "/ralph-status to watch, /cancel-ralph to stop."
        ),
    }
    assert re.fullmatch(rf"\d{{8}}T\d{{6}}Z-{SESSION[:8]}-[0-9a-f]{{6}}", state.loop_id)
    assert state.started_at == state.updated_at == state.iteration_started_at
    assert state == LoopState(
        loop_id=state.loop_id,
        session_id=SESSION,
        project_root=str(git_repo),
        prompt=prompt,
        promise="ALL DONE",
        max_iterations=3,
        started_at=state.started_at,
        updated_at=state.started_at,
        iteration_started_at=state.started_at,
        verify=["pytest -q"],
        quiesce_after=2,
        baseline_commit=git(git_repo, "rev-parse", "HEAD"),
        tree_fingerprint=gitstate.tree_fingerprint(git_repo),
    )
    assert state.tree_fingerprint is not None
    assert not (git_repo / "X").exists()
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]


def test_start_prefixed_command_with_prompt_file(git_repo: Path) -> None:
    (git_repo / "plans").mkdir()
    (git_repo / "plans" / "task.md").write_text("Task from the plan\n")
    (git_repo / "plans" / "done.txt").write_text("PLAN DONE\n")
    output = submit(git_repo, "/finesse:ralph-loop --prompt-file plans/task.md "
                              "--completion-promise-file plans/done.txt")
    assert output is not None and set(output) == {"hookSpecificOutput", "systemMessage"}
    state = active(git_repo)
    assert (state.prompt, state.promise, state.prompt_file, state.promise_file,
            state.max_iterations) == ("Task from the plan", "PLAN DONE", "plans/task.md",
                                      "plans/done.txt", 8)


def test_start_warns_above_25(git_repo: Path) -> None:
    output = submit(git_repo, "/ralph-loop go --max-iterations 30")
    assert output is not None
    assert output["systemMessage"] == (
        "Ralph loop started: up to 30 iterations, ends on <promise>RALPH_LOOP_STOP</promise>. "
        "/ralph-status to watch, /cancel-ralph to stop.\n"
        "warning: --max-iterations 30 is above 25: long loops burn quota; "
        "/cancel-ralph stops it at any time"
    )


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("/ralph-loop go --max-iterations 0",
         "finesse: --max-iterations must be from 1 to 1000, not 0: a loop always has a cap; "
         "for example --max-iterations 8"),
        ("/ralph-loop 'unclosed",
         "finesse: could not read the arguments (No closing quotation): close the quote, or put "
         "the prompt in a file and pass --prompt-file PATH"),
        ("/ralph-loop", f"finesse: the prompt is empty: type {USAGE}"),
        ("/ralph-loop go --frobnicate", f"finesse: unknown option --frobnicate: type {USAGE}"),
        ("/ralph-loop --prompt-file missing.md",
         "finesse: --prompt-file missing.md: no such file under {root}; give a path relative "
         "to the project root"),
    ],
)
def test_bad_arguments_block_with_one_line(
    git_repo: Path, store: LoopStore, command: str, reason: str
) -> None:
    output = submit(git_repo, command)
    assert output == {"decision": "block", "reason": reason.format(root=git_repo)}
    assert "\n" not in output["reason"]
    assert files_under(store.paths.base) == []


def test_second_start_in_the_same_session_is_refused(git_repo: Path) -> None:
    submit(git_repo, "/ralph-loop first")
    before = active(git_repo)
    assert submit(git_repo, "/ralph-loop second") == {
        "decision": "block",
        "reason": "finesse: a Ralph loop is already running in this session (iteration 1/8): "
                  "/cancel-ralph first",
    }
    assert active(git_repo) == before


def test_start_refused_while_the_kill_switch_exists(git_repo: Path, store: LoopStore) -> None:
    store.paths.base.mkdir(parents=True)
    store.paths.kill_switch.touch()
    assert submit(git_repo, "/ralph-loop go") == {
        "decision": "block",
        "reason": f"finesse: the kill switch {store.paths.kill_switch} exists, so every loop of "
                  "this project stops at once: delete it to start loops again",
    }
    assert store.load(SESSION) is None


def test_status_without_a_loop(git_repo: Path) -> None:
    assert submit(git_repo, "/ralph-status") == {
        "decision": "block", "reason": "finesse: no Ralph loop is running in this session.",
    }


def test_status_with_loops(git_repo: Path) -> None:
    submit(git_repo, "/ralph-loop Fix it --verify 'pytest -q'")
    submit(git_repo, "/ralph-loop Other work", OTHER_SESSION)
    stop_hook(git_repo, stop_input("I looked at the failing test."))
    loop_id = active(git_repo).loop_id
    assert submit(git_repo, "/finesse:ralph-status") == {
        "decision": "block",
        "reason": (
            f"Ralph loop {loop_id}: iteration 2/8, promise <promise>RALPH_LOOP_STOP</promise>, "
            f"running 0 min (session {SESSION})\n"
            "task: Fix it\n"
            "verify: pytest -q\n"
            "last reply: I looked at the failing test.\n"
            "(1 other loop(s) run in other sessions of this project: `ralph status` lists them.)"
        ),
    }


def test_cancel(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop go")
    loop_id = active(git_repo).loop_id
    assert submit(git_repo, "/cancel-ralph") == {
        "decision": "block",
        "reason": "finesse: Ralph loop cancelled by /cancel-ralph at iteration 1/8. "
                  f"Its record is in {store.paths.history}.",
    }
    assert files_under(store.paths.loops) == []
    [ended] = archived(git_repo)
    assert (ended.loop_id, ended.outcome, ended.end_message) == (
        loop_id, "cancelled", "Ralph loop cancelled by /cancel-ralph at iteration 1/8."
    )


def test_cancel_without_a_loop(git_repo: Path) -> None:
    submit(git_repo, "/ralph-loop other", OTHER_SESSION)
    assert submit(git_repo, "/cancel-ralph") == {
        "decision": "block",
        "reason": "finesse: no Ralph loop is running in this session; nothing to cancel.",
    }
    assert active(git_repo, OTHER_SESSION).outcome is None


def test_help(git_repo: Path) -> None:
    output = submit(git_repo, "/ralph-help")
    assert output == {"decision": "block", "reason": prompt_submit.HELP}
    for command in ("/ralph-loop", "/ralph-status", "/cancel-ralph", "--max-iterations",
                    "--completion-promise", "--prompt-file", "--completion-promise-file",
                    "--verify", ".claude/ralph/STOP", "--plan", "--quiesce-after",
                    "--timeout-minutes", "/ralph-resume", "ralph report", "ralph resume"):
        assert command in prompt_submit.HELP


@pytest.mark.parametrize("command", ["/cancel-ralph now", "/ralph-status all", "/ralph-help me"])
def test_commands_without_arguments_refuse_them(git_repo: Path, command: str) -> None:
    name = command.split()[0]
    assert submit(git_repo, command) == {
        "decision": "block", "reason": f"finesse: {name} takes no arguments: type {name}",
    }


@pytest.mark.parametrize(
    "prompt", ["Fix the tests", "/ralph-loopy go", "/help", "/compact", "", "  "]
)
def test_other_prompts_get_no_output(git_repo: Path, store: LoopStore, prompt: str) -> None:
    assert submit(git_repo, prompt) is None
    assert files_under(store.paths.base) == []


@pytest.mark.parametrize(
    "raw",
    [b"", b"not json", b"[]", b"{}", b'{"prompt": "/ralph-loop go"}',
     b'{"session_id": 5, "prompt": "/ralph-loop go"}', b'{"session_id": "x"}', b"\xff\xfe"],
)
def test_unusable_prompt_input_gets_no_output(git_repo: Path, store: LoopStore, raw: bytes) -> None:
    assert prompt_submit.handle(raw, env_for(git_repo), str(git_repo)) is None
    assert files_under(store.paths.base) == []


def test_session_id_that_cannot_be_a_file_name(git_repo: Path, store: LoopStore) -> None:
    assert submit(git_repo, "/ralph-loop go", "../../etc/passwd") == {
        "decision": "block",
        "reason": "finesse: this session id cannot hold a loop: '../../etc/passwd'",
    }
    assert files_under(store.paths.base) == []


def test_prompt_submit_main(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(git_repo))
    monkeypatch.chdir(git_repo)
    out = io.StringIO()
    code = prompt_submit.main(stdin=io.BytesIO(prompt_input("/ralph-loop go")), stdout=out)
    assert code == 0
    text = out.getvalue()
    assert text.endswith("}\n") and text.count("\n") == 1
    assert json.loads(text) == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": (
                START_TEXT + "Ralph iteration 1/8: output <promise>RALPH_LOOP_STOP</promise> "
                "only when it is completely true\n\n"
                f"The task, verbatim:\n<ralph-task>\ngo\n</ralph-task>\n\n{NOTES}"
            ),
        },
        "systemMessage": (
            "Ralph loop started: up to 8 iterations, ends on <promise>RALPH_LOOP_STOP</promise>. "
            "/ralph-status to watch, /cancel-ralph to stop."
        ),
    }
    assert active(git_repo).prompt == "go"


def test_prompt_submit_main_prints_nothing_for_other_prompts(
    git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(git_repo))
    out = io.StringIO()
    assert prompt_submit.main(stdin=io.BytesIO(prompt_input("hello")), stdout=out) == 0
    assert out.getvalue() == ""


# --- Stop -------------------------------------------------------------------------------------


def test_stop_continues_with_the_same_prompt(git_repo: Path) -> None:
    submit(git_repo, "/ralph-loop 'Fix it' --completion-promise DONE --max-iterations 5")
    output = stop_hook(git_repo, stop_input("Working on it."))
    assert output == continues(2, 5, "DONE", "Fix it")
    state = active(git_repo)
    assert (state.iteration, state.last_reply_excerpt, [r.result for r in state.iterations]) == (
        2, "Working on it.", ["continue"]
    )


def test_stop_ends_on_the_promise(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop 'Fix it' --completion-promise DONE")
    stop_hook(git_repo, stop_input("Not yet."))
    output = stop_hook(git_repo, stop_input("All green.\n\n<promise>DONE</promise>"))
    assert files_under(store.paths.loops) == []
    [ended] = archived(git_repo)
    assert output == {
        "systemMessage": "Ralph loop done: <promise>DONE</promise> seen at iteration 2/8.\n"
                         + report_line(ended)
    }
    assert files_under(store.paths.reports) == [f"{ended.loop_id}.md"]
    assert (ended.outcome, ended.iteration, [r.result for r in ended.iterations]) == (
        "success", 2, ["continue", "success"]
    )
    assert stop_hook(git_repo, stop_input("after the end")) is None


def test_stop_ends_at_the_cap(git_repo: Path, store: LoopStore) -> None:
    # Talk-only iterations: quiescence is pushed past the cap so the cap is what ends it.
    submit(git_repo, "/ralph-loop go --max-iterations 2 --completion-promise DONE "
                     "--quiesce-after 7")
    assert stop_hook(git_repo, stop_input("one")) == continues(2, 2, "DONE", "go")
    output = stop_hook(git_repo, stop_input("two"))
    assert files_under(store.paths.loops) == []
    [ended] = archived(git_repo)
    assert output == {
        "systemMessage": "Ralph loop stopped: 2 iterations made without <promise>DONE</promise>."
                         "\nResume: /ralph-resume --max-iterations 4\n" + report_line(ended)
    }
    assert (ended.outcome, [r.result for r in ended.iterations]) == (
        "limit", ["continue", "limit"]
    )


def test_talk_only_stops_quiesce_before_the_cap(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    assert stop_hook(git_repo, stop_input("Thinking about it.")) == continues(2, 8, "DONE", "go")
    output = stop_hook(git_repo, stop_input("Still thinking."))
    [ended] = archived(git_repo)
    assert output == {
        "systemMessage": "Ralph loop quiesced at iteration 2/8: 2 iterations in a row with no "
                         "tool call and no change to the project.\nResume: /ralph-resume\n"
                         + report_line(ended)
    }
    assert (ended.outcome, ended.idle_iterations, [r.result for r in ended.iterations]) == (
        "quiesced", 2, ["continue", "quiesced"]
    )
    assert files_under(store.paths.loops) == []


def test_stop_of_a_session_without_a_loop(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop go")
    before = store.paths.loop_file(SESSION).read_bytes()
    assert stop_hook(git_repo, stop_input("<promise>RALPH_LOOP_STOP</promise>",
                                          OTHER_SESSION)) is None
    assert store.paths.loop_file(SESSION).read_bytes() == before
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]


def test_two_sessions_leave_each_other_alone(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop mine")
    submit(git_repo, "/ralph-loop theirs", OTHER_SESSION)
    theirs = store.paths.loop_file(OTHER_SESSION).read_bytes()
    stop_hook(git_repo, stop_input("working"))
    stop_hook(git_repo, stop_input("<promise>RALPH_LOOP_STOP</promise>"))
    assert store.paths.loop_file(OTHER_SESSION).read_bytes() == theirs
    assert [loop.session_id for loop in archived(git_repo)] == [SESSION]


def test_cwd_in_a_subdirectory_changes_nothing(git_repo: Path, store: LoopStore) -> None:
    sub = git_repo / "src" / "pkg"
    sub.mkdir(parents=True)
    submit(git_repo, "/ralph-loop go --completion-promise DONE --quiesce-after 7")
    raw = stop_input("working", cwd=str(sub))
    assert stop.handle(raw, env_for(git_repo), str(sub)) == continues(2, 8, "DONE", "go")
    # Without CLAUDE_PROJECT_DIR the git top level of the cwd is the root.
    assert stop.handle(stop_input("still", cwd=str(sub)), {}, str(sub)) == continues(
        3, 8, "DONE", "go"
    )
    assert not (sub / ".claude").exists()
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]
    assert active(git_repo).iteration == 3


def test_corrupt_state_is_reported_and_moved_aside(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop go")
    store.paths.loop_file(SESSION).write_text('{"half": ')
    output = stop_hook(git_repo, stop_input())
    [moved] = files_under(store.paths.corrupt)
    moved_to = store.paths.corrupt / moved
    message = (
        f"the loop state {SESSION}.json was unreadable (the file: not valid JSON "
        f"(Expecting value: line 1 column 10 (char 9))); it was moved to {moved_to} and the "
        "loop has stopped"
    )
    assert output == {"systemMessage": f"finesse: {message}"}
    assert moved_to.read_text() == '{"half": '
    assert files_under(store.paths.loops) == []
    assert store.paths.log.read_text().split(" ", 1)[1] == message + "\n"
    assert stop_hook(git_repo, stop_input()) is None


def test_kill_switch_cancels(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    store.paths.kill_switch.touch()
    output = stop_hook(git_repo, stop_input("<promise>DONE</promise>"))
    assert files_under(store.paths.loops) == []
    [ended] = archived(git_repo)
    assert output == {
        "systemMessage": "Ralph loop cancelled at iteration 1/8.\n" + report_line(ended)
    }
    assert (ended.outcome, [r.result for r in ended.iterations]) == ("cancelled", ["cancelled"])


def _transcript(path: Path, reply: str) -> Path:
    lines = [
        {"type": "user", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
                                          "content": [{"type": "thinking", "thinking": "t"}]}},
        {"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
                                          "content": [{"type": "text", "text": reply}]}},
        {"type": "system", "subtype": "info", "content": "x"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_transcript_is_the_fallback(git_repo: Path, tmp_path: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    transcript = _transcript(tmp_path / "t.jsonl", "Finished. <promise>DONE</promise>")
    output = stop_hook(git_repo, stop_input(None, transcript=str(transcript)))
    [ended] = archived(git_repo)
    assert output == {"systemMessage": "Ralph loop done: <promise>DONE</promise> seen at "
                                       "iteration 1/8.\n" + report_line(ended)}
    assert ended.last_reply_excerpt == "Finished. <promise>DONE</promise>"


def test_last_assistant_message_beats_the_transcript(git_repo: Path, tmp_path: Path) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    transcript = _transcript(tmp_path / "t.jsonl", "Stale. <promise>DONE</promise>")
    output = stop_hook(git_repo, stop_input("Newer reply, not done", transcript=str(transcript)))
    assert output is not None and output["decision"] == "block"
    assert active(git_repo).last_reply_excerpt == "Newer reply, not done"


def test_no_reply_at_all_continues(git_repo: Path) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    output = stop_hook(git_repo, stop_input(None, transcript="/nonexistent/t.jsonl"))
    assert output == continues(2, 8, "DONE", "go")


@pytest.mark.parametrize(
    "raw",
    [b"", b"garbage", b"[1]", b"{}", b'{"session_id": null}',
     b'{"session_id": "../x"}', b'{"session_id": "ok", "last_assistant_message": 5}'],
)
def test_unusable_stop_input_gets_no_output(git_repo: Path, store: LoopStore, raw: bytes) -> None:
    submit(git_repo, "/ralph-loop go")
    before = store.paths.loop_file(SESSION).read_bytes()
    assert stop_hook(git_repo, raw) is None
    assert store.paths.loop_file(SESSION).read_bytes() == before


def test_lock_held_too_long_lets_the_stop_go_ahead(
    git_repo: Path, store: LoopStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import finesse.state.store

    submit(git_repo, "/ralph-loop go")
    before = store.paths.loop_file(SESSION).read_bytes()
    monkeypatch.setattr(finesse.state.store, "LOCK_TIMEOUT_SECONDS", 0.05)
    with hold_lock(store.paths.lock_file(SESSION)):
        output = stop_hook(git_repo, stop_input())
    assert output == {
        "systemMessage": f"finesse: another process holds {store.paths.lock_file(SESSION)} for "
                         "over 0 s; try again, or run `ralph status`; this stop went ahead"
    }
    assert store.paths.loop_file(SESSION).read_bytes() == before


def test_stop_main(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(git_repo))
    monkeypatch.chdir(git_repo)
    out = io.StringIO()
    assert stop.main(stdin=io.BytesIO(stop_input("working")), stdout=out) == 0
    assert out.getvalue().count("\n") == 1
    assert json.loads(out.getvalue()) == continues(2, 8, "DONE", "go")
    out = io.StringIO()
    assert stop.main(stdin=io.BytesIO(stop_input("x", OTHER_SESSION)), stdout=out) == 0
    assert out.getvalue() == ""


def test_boundary_swallows_errors_and_logs(git_repo: Path, store: LoopStore) -> None:
    def broken(raw: bytes, env: Mapping[str, str], cwd: str) -> dict[str, Any] | None:
        raise RuntimeError("kaboom\nsecond line")

    out = io.StringIO()
    code = run_hook("Stop", broken, io.BytesIO(b"{}"), out, env_for(git_repo), str(git_repo))
    assert (code, out.getvalue()) == (0, "")
    [line] = store.paths.log.read_text().splitlines()
    assert line.split(" ", 1)[1].startswith("Stop hook error, the stop went ahead: ")
    assert line.endswith("RuntimeError: kaboom | second line")


def test_boundary_survives_an_unwritable_log(tmp_path: Path) -> None:
    def broken(raw: bytes, env: Mapping[str, str], cwd: str) -> dict[str, Any] | None:
        raise ValueError("bad")

    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    out = io.StringIO()
    assert run_hook("Stop", broken, io.BytesIO(b""), out, env_for(blocker), str(tmp_path)) == 0
    assert out.getvalue() == ""
