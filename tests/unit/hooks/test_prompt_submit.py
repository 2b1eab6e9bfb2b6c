"""The UserPromptSubmit hook in process, in a real temporary git repository: /ralph-loop,
/ralph-status, /cancel-ralph, /ralph-help and /ralph-resume answered before the model sees them."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from finesse.hooks import prompt_submit
from finesse.loop.grammar import LOOP_USAGE as USAGE
from finesse.loop.grammar import RESUME_USAGE
from finesse.loop.status import start_context
from finesse.models import LoopState
from finesse.results import Cursor
from finesse.state.store import LoopStore
from finesse.support import git as gitstate
from tests.helpers.hooks import Session, env_for, prompt_input, stop_hook, stop_input, submit
from tests.helpers.plans import PLAN
from tests.helpers.repo import git
from tests.helpers.states import (
    OTHER_SESSION,
    SESSION,
    active,
    archived,
    files_under,
    only_archived,
)
from tests.helpers.texts import NOTES, START_TEXT, UNVERIFIED_END, UNVERIFIED_START, stopped_banner
from tests.unit.authoring.prompt_check.test_validate import BASE

# --- /ralph-loop ----------------------------------------------------------------------------------


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
            "/ralph-status to watch, /cancel-ralph to stop.\n"
            "Completion is verified: `pytest -q` must pass when Claude claims it."
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
        cursor=Cursor(0, ""),  # no transcript yet (a session's first prompt): from its start
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
        "/ralph-status to watch, /cancel-ralph to stop.\n" + UNVERIFIED_START + "\n"
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
         "finesse: the ' quote at character 1 is never closed: close it, escape it with a "
         "backslash, or put the prompt in a file and pass --prompt-file PATH"),
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


def test_plan_without_verification_is_refused_before_any_loop(
    session: Session, protocol_plan: Path, store: LoopStore
) -> None:
    protocol_plan.write_text(PLAN.replace("- `test -f README.md`\n", ""), encoding="utf-8")
    assert session.submit("/ralph-loop --plan tasks/todo.md") == {
        "decision": "block",
        "reason": 'finesse: tasks/todo.md has no command under "## Verification Commands": list '
                  "each in backticks, e.g. `pytest -q`, or pass --verify CMD",
    }
    assert files_under(store.paths.base) == []


# --- /ralph-status, /cancel-ralph, /ralph-help ----------------------------------------------------

# An answer (not an error) leaves out Claude Code's "Original prompt: ..." echo.
ANSWERED = {"hookEventName": "UserPromptSubmit", "suppressOriginalPrompt": True}



def test_status_without_a_loop(git_repo: Path) -> None:
    assert submit(git_repo, "/ralph-status") == {
        "decision": "block", "reason": "finesse: no Ralph loop is running in this session.",
        "hookSpecificOutput": ANSWERED,
    }


def test_status_with_loops(git_repo: Path) -> None:
    submit(git_repo, "/ralph-loop Fix it --verify 'pytest -q'")
    submit(git_repo, "/ralph-loop Other work", OTHER_SESSION)
    stop_hook(git_repo, stop_input("I looked at the failing test."))
    loop_id = active(git_repo).loop_id
    assert submit(git_repo, "/finesse:ralph-status") == {
        "decision": "block", "hookSpecificOutput": ANSWERED,
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
        "decision": "block", "hookSpecificOutput": ANSWERED,
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
        "decision": "block", "hookSpecificOutput": ANSWERED,
        "reason": "finesse: no Ralph loop is running in this session; nothing to cancel.",
    }
    assert active(git_repo, OTHER_SESSION).outcome is None


def test_help(git_repo: Path) -> None:
    output = submit(git_repo, "/ralph-help")
    assert output == {"decision": "block", "reason": prompt_submit.HELP,
                      "hookSpecificOutput": ANSWERED}
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


# --- /ralph-resume --------------------------------------------------------------------------------


def test_resume_after_the_cap_goes_on_with_the_history(
    session: Session, store: LoopStore
) -> None:
    session.submit("/ralph-loop Fix it --completion-promise DONE --max-iterations 2")
    assert session.submit("/ralph-resume") == {
        "decision": "block",
        "reason": "finesse: no ended Ralph loop in this session to resume; start one with "
                  "/ralph-loop",
    }
    session.stop("Approach: first\nLearning: one")
    output = session.stop("Approach: second")
    limited = only_archived(session.root)
    assert output == {"systemMessage": stopped_banner(
        "Ralph loop stopped: 2 iterations made without <promise>DONE</promise>.",
        limited.loop_id, ["/ralph-resume --max-iterations 4"], learnings=1)}
    assert session.submit("/ralph-resume --max-iterations 2") == {
        "decision": "block",
        "reason": "finesse: --max-iterations 2 leaves no room: the loop has made 2 iterations; "
                  "give a larger number, e.g. 4",
    }
    resumed = session.submit("/finesse:ralph-resume --max-iterations 4")
    state = store.load(SESSION)
    assert state is not None
    assert resumed == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                               "additionalContext": start_context(state)},
        "systemMessage": "Ralph loop resumed at iteration 3/4 (it had ended: limit).",
    }
    assert (state.loop_id, state.iteration, state.max_iterations, state.outcome,
            [r.approach for r in state.iterations], state.learnings) == (
        limited.loop_id, 3, 4, None, ["first", "second"], ["one"]
    )
    assert session.submit("/ralph-resume") == {
        "decision": "block",
        "reason": "finesse: a Ralph loop is already running in that session: /cancel-ralph "
                  "first",
    }
    session.stop("Approach: third")
    output = session.stop("Approach: fourth\n<promise>DONE</promise>")
    [ended] = store.history()
    assert output == {"systemMessage": (
        "Ralph loop done: <promise>DONE</promise> at iteration 4/4" + UNVERIFIED_END
        + "\nFiles modified: 0 (+0, -0)\n"
        f"Report: .claude/ralph/reports/{ended.loop_id}.md"
    )}
    assert (ended.loop_id, [r.approach for r in ended.iterations], len(ended.resumes)) == (
        limited.loop_id, ["first", "second", "third", "fourth"], 1
    )
    assert session.submit("/ralph-resume") == {
        "decision": "block",
        "reason": f"finesse: the last loop ({ended.loop_id}) ended in success, which cannot be "
                  "resumed: start a new one with /ralph-loop",
    }


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("/ralph-resume now", f"finesse: /ralph-resume takes only options: type {RESUME_USAGE}"),
        ("/ralph-resume --max-iterations 0",
         "finesse: --max-iterations must be from 1 to 1000, not 0: a loop always has a cap; "
         "for example --max-iterations 8"),
    ],
)
def test_resume_argument_errors_block_with_one_line(session: Session, store: LoopStore,
                                                    command: str, reason: str) -> None:
    assert session.submit(command) == {"decision": "block", "reason": reason}
    assert files_under(store.paths.base) == []


# --- what is not ours, or not usable --------------------------------------------------------------


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


# --- the entry point ------------------------------------------------------------------------------


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
            "/ralph-status to watch, /cancel-ralph to stop.\n" + UNVERIFIED_START
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


# --- /goal ----------------------------------------------------------------------------------------


def test_a_loop_is_refused_while_the_session_has_an_active_goal(session: Session,
                                                                 store: LoopStore) -> None:
    session._write({"type": "attachment", "attachment": {
        "type": "goal_status", "met": False, "sentinel": True, "condition": "docs written"}})
    assert session.submit("/ralph-loop go") == {
        "decision": "block",
        "reason": "finesse: this session has an active /goal ('docs written'); a goal and a "
                  "Ralph loop would both drive the Stop hook: type `/goal clear` first, or "
                  "start the loop in a new session",
    }
    assert not store.paths.loops.exists() or files_under(store.paths.loops) == []
    session._write({"type": "attachment", "attachment": {
        "type": "goal_status", "met": True, "sentinel": True, "condition": "docs written"}})
    output = session.submit("/ralph-loop go")
    assert output is not None and "hookSpecificOutput" in output  # cleared: it starts
    assert active(session.root).prompt == "go"


def test_finesse_execute_checks_the_prompt_with_its_own_cap(git_repo: Path) -> None:
    """The prompt states no cap: /finesse:finesse-execute judges it with its own
    --max-iterations, so 8 runs it and 40 is refused on the iteration limit alone."""
    (git_repo / "finesse-plans").mkdir()
    (git_repo / "finesse-plans" / "task.md").write_text(BASE.replace("Max iterations: 10\n", ""))
    (git_repo / "finesse-plans" / "task-promise.txt").write_text("DONE\n")
    command = ("/finesse:finesse-execute --prompt-file finesse-plans/task.md "
               "--completion-promise-file finesse-plans/task-promise.txt --max-iterations ")
    refused = submit(git_repo, command + "40")
    assert refused == {"decision": "block", "reason": (
        "finesse: finesse-plans/task.md fails the loop-prompt check (iteration-limit): fix it "
        "(`finesse validate finesse-plans/task.md` says how) or add --force")}
    started = submit(git_repo, command + "8")
    assert started is not None and "systemMessage" in started
    assert active(git_repo).max_iterations == 8


@pytest.mark.parametrize("prompt", ["/ralph-loop go", "/ralph-status", "/cancel-ralph"])
def test_a_project_folder_that_no_longer_exists_is_never_made_again(
        tmp_path: Path, prompt: str) -> None:
    """CLAUDE_PROJECT_DIR names the folder Claude Code started in; removed since (a worktree
    cleaned up, a checkout deleted), /ralph-loop made it again, with .claude/ralph/ inside,
    outside any project. One line says so, and nothing is made."""
    gone = tmp_path / "removed" / "project"
    raw = prompt_input(prompt, cwd=str(tmp_path))
    assert prompt_submit.handle(raw, {"CLAUDE_PROJECT_DIR": str(gone)}, str(tmp_path)) == {
        "decision": "block",
        "reason": f"finesse: the project folder {gone} (CLAUDE_PROJECT_DIR) does not exist "
                  "any more: start Claude Code again in your project"}
    assert not (tmp_path / "removed").exists()
