"""Issue 10's traps, as the adversarial review reproduced them: through the hook launcher in
real subprocesses (and `ralph` from a terminal). Here: file names that are not UTF-8, a NUL
byte in the agent's `Approach:` line, lone surrogates in a prompt and in a reply. Every one
must leave a loop that still cancels, stops, reports and commits, and say so in one line."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from finesse.support.files import shown_name
from tests.helpers.hooks import continuation, prompt_input, stop_input
from tests.helpers.launch import PROMPT_SUBMIT, STOP, Run, hook_env, run_launcher, run_ralph
from tests.helpers.repo import git, head
from tests.helpers.states import SESSION, active, files_under, gate_of, only_archived, store_for
from tests.helpers.texts import NOTES

TRACKED = os.fsdecode(b"caf\xe9.txt")  # not UTF-8: the name holds the byte 0xE9
UNTRACKED = os.fsdecode(b"notes-\xff.txt")
MADE = os.fsdecode(b"new-\xfe.txt")  # created by the agent during the loop


def _prompt(root: Path, prompt: str) -> Run:
    return run_launcher(PROMPT_SUBMIT, prompt_input(prompt, cwd=str(root)), hook_env(root), root)


def _stop(root: Path, reply: str | None, **extra: str) -> Run:
    return run_launcher(STOP, stop_input(reply, cwd=str(root), stop_hook_active=True, **extra),
                        hook_env(root), root)


def _project_with_odd_names(root: Path) -> None:
    """A tracked file and an untracked one whose names are not UTF-8."""
    (root / TRACKED).write_bytes(b"v1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "odd name")
    (root / UNTRACKED).write_bytes(b"mine\n")


def _one_line(run: Run) -> str:
    assert (run.code, run.stderr) == (0, "")
    assert run.stdout.endswith("\n") and run.stdout.count("\n") == 1, run.stdout
    return run.stdout


def _continues(number: int, task: str = "go", notes: str = NOTES) -> dict[str, object]:
    return continuation(
        f"Ralph iteration {number}/8: output <promise>RALPH_LOOP_STOP</promise> only when it "
        f"is completely true\n\n{task}\n\n---\n\n{notes}",
        f"Ralph iteration {number}/8",
    )


# --- 7. file names that are not UTF-8 -------------------------------------------------------------


def test_a_loop_with_undecodable_names_continues_cancels_and_reports(git_repo: Path) -> None:
    _project_with_odd_names(git_repo)
    store = store_for(git_repo)
    started = _prompt(git_repo, "/ralph-loop go --quiesce-after 7")
    assert set(started.output() or {}) == {"hookSpecificOutput", "systemMessage"}
    (git_repo / MADE).write_bytes(b"made by the agent\n")
    (git_repo / TRACKED).write_bytes(b"v2\n")
    assert _stop(git_repo, "Edited both files.").output() == _continues(2)

    cancelled = _prompt(git_repo, "/cancel-ralph")
    assert cancelled.output() == {
        "decision": "block",
        "reason": "finesse: Ralph loop cancelled by /cancel-ralph at iteration 2/8. Its record "
                  f"is in {store.paths.history}.",
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                               "suppressOriginalPrompt": True},
    }
    ended = only_archived(git_repo)
    assert (ended.outcome, files_under(store.paths.loops)) == ("cancelled", [])
    after = _stop(git_repo, "Still here?")
    assert (after.code, after.stdout, after.stderr) == (0, "", "")

    # The report names both changed files, escaped into readable ASCII; the untracked file
    # that was there before the loop is not the loop's change.
    report = (store.paths.reports / f"{ended.loop_id}.md").read_bytes().decode("utf-8")
    changed = report.split("\n## Files changed\n\n", 1)[1].split("\n\n", 1)[0]
    assert changed.splitlines() == [f"- `{shown_name(TRACKED)}`", f"- `{shown_name(MADE)}`"]
    assert changed.splitlines() == ["- `'caf\\udce9.txt'`", "- `'new-\\udcfe.txt'`"]
    assert not (store.paths.log.exists() and "error" in store.paths.log.read_text())


def test_ralph_status_and_cancel_with_undecodable_names(git_repo: Path) -> None:
    _project_with_odd_names(git_repo)
    _prompt(git_repo, "/ralph-loop go --quiesce-after 7")
    (git_repo / MADE).write_bytes(b"made by the agent\n")
    loop_id = active(git_repo).loop_id

    status = run_ralph(git_repo, "status")
    assert (status.code, status.stderr) == (0, "")
    assert status.stdout == (
        f"Ralph loop {loop_id}: iteration 1/8, promise <promise>RALPH_LOOP_STOP</promise>, "
        f"running 0 min (session {SESSION})\ntask: go\n"
    )
    cancelled = run_ralph(git_repo, "cancel")
    assert (cancelled.code, cancelled.stdout, cancelled.stderr) == (
        0, f"Ralph loop cancelled by `ralph cancel` at iteration 1/8. (session {SESSION})\n", ""
    )
    assert run_ralph(git_repo, "status") == Run(0, f"No active Ralph loop in {git_repo}.\n", "")
    assert only_archived(git_repo).outcome == "cancelled"


def test_the_kill_switch_refuses_a_start_in_one_line(git_repo: Path) -> None:
    _project_with_odd_names(git_repo)
    store = store_for(git_repo)
    store.paths.base.mkdir(parents=True)
    store.paths.kill_switch.touch()
    refused = _prompt(git_repo, "/ralph-loop go")
    _one_line(refused)
    assert refused.output() == {
        "decision": "block",
        "reason": f"finesse: the kill switch {store.paths.kill_switch} exists, so every loop of "
                  "this project stops at once: delete it to start loops again",
    }
    assert files_under(store.paths.loops) == []


def test_gate_mode_commits_a_file_whose_name_is_not_utf8(git_repo: Path) -> None:
    (git_repo / TRACKED).write_bytes(b"v1\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "odd name")
    started = _prompt(git_repo, "/ralph-loop go --gate true")
    assert set(started.output() or {}) == {"hookSpecificOutput", "systemMessage"}
    before = head(git_repo)
    (git_repo / MADE).write_bytes(b"made by the agent\n")
    (git_repo / TRACKED).write_bytes(b"v2\n")
    output = _stop(git_repo, "Approach: add the odd files").output()
    assert output is not None and set(output) == {"hookSpecificOutput", "systemMessage"}
    sha = head(git_repo)
    assert sha != before and git(git_repo, "log", "-1", "--format=%s") == (
        "ralph: iteration 1: add the odd files")
    names = subprocess.run(["git", "show", "--name-only", "-z", "--format=", sha], cwd=git_repo,
                           capture_output=True, check=True).stdout
    assert sorted(names.strip(b"\0").split(b"\0")) == [b"caf\xe9.txt", b"new-\xfe.txt"]
    assert git(git_repo, "status", "--porcelain", "--", ".", ":(exclude).claude") == ""
    assert gate_of(active(git_repo)).iteration_base == sha


# --- 13. a NUL byte in the Approach line, lone surrogates -----------------------------------------


def _transcript(path: Path, reply: str) -> Path:
    entry = {"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
                                              "content": [{"type": "text", "text": reply}]}}
    path.write_text(json.dumps(entry) + "\n")
    return path


def test_a_nul_in_the_approach_line_is_committed_as_a_replacement_character(
        git_repo: Path, tmp_path: Path) -> None:
    _prompt(git_repo, "/ralph-loop go --gate true")
    (git_repo / "one.txt").write_text("1\n")
    # The reply as Claude Code leaves it: the transcript's last assistant message.
    transcript = _transcript(tmp_path / "t.jsonl", "Approach: add \x00 one\nEvidence: gate")
    first = _stop(git_repo, None, transcript=str(transcript))
    assert set(first.output() or {}) == {"hookSpecificOutput", "systemMessage"}
    assert git(git_repo, "log", "-1", "--format=%s") == "ralph: iteration 1: add \ufffd one"
    (git_repo / "two.txt").write_text("2\n")
    second = _stop(git_repo, "Approach: add\x00two\x00\nEvidence: gate")
    assert set(second.output() or {}) == {"hookSpecificOutput", "systemMessage"}
    assert git(git_repo, "log", "-1", "--format=%s") == "ralph: iteration 2: add\ufffdtwo\ufffd"
    assert [r.approach for r in active(git_repo).iterations] == ["add \x00 one", "add\x00two\x00"]


def test_a_lone_surrogate_in_a_loop_prompt(git_repo: Path) -> None:
    store = store_for(git_repo)
    started = _prompt(git_repo, '/ralph-loop "fix \ud800 it" --quiesce-after 7')
    _one_line(started)
    context = (started.output() or {})["hookSpecificOutput"]["additionalContext"]
    assert "<ralph-task>\nfix \ud800 it\n</ralph-task>" in context
    raw = store.paths.loop_file(SESSION).read_bytes()
    assert json.loads(raw)["prompt"] == "fix \ud800 it" and raw.isascii()

    assert _stop(git_repo, "working").output() == _continues(2, "fix \ud800 it")
    status = _prompt(git_repo, "/ralph-status")
    assert "task: fix \ud800 it" in (status.output() or {})["reason"]
    shown = run_ralph(git_repo, "status")
    assert (shown.code, shown.stderr) == (0, "")
    assert "task: fix \\ud800 it\n" in shown.stdout

    cancelled = _prompt(git_repo, "/cancel-ralph")
    assert (cancelled.output() or {})["reason"].startswith(
        "finesse: Ralph loop cancelled by /cancel-ralph at iteration 2/8.")
    ended = only_archived(git_repo)
    report = (store.paths.reports / f"{ended.loop_id}.md").read_bytes().decode("utf-8")
    assert "\n## Task\n\nfix \ufffd it\n" in report


def test_a_lone_surrogate_in_a_reply_is_recorded_and_the_loop_goes_on(git_repo: Path) -> None:
    # Claude Code's JSON may carry a lone surrogate (JavaScript strings can hold one); the
    # stop hashed the reply as strict UTF-8 and failed, so the loop silently stood still.
    _prompt(git_repo, "/ralph-loop go --quiesce-after 7")
    assert _stop(git_repo, "Approach: half \udce9 done").output() == _continues(2)
    assert _stop(git_repo, "Approach: half \ud800 done").output() == _continues(3)
    state = active(git_repo)
    assert [r.approach for r in state.iterations] == ["half \udce9 done", "half \ud800 done"]
    assert json.loads(store_for(git_repo).paths.loop_file(SESSION).read_bytes())["iteration"] == 3
    shown = run_ralph(git_repo, "status")
    assert (shown.code, shown.stderr) == (0, "")
    assert "last reply: Approach: half \\ud800 done\n" in shown.stdout


def test_a_lone_surrogate_in_a_gate_loop_reply_is_committed_and_recorded(git_repo: Path) -> None:
    _prompt(git_repo, "/ralph-loop go --gate true")
    (git_repo / "one.txt").write_text("1\n")
    output = _stop(git_repo, "Approach: lone \ud800 surrogate").output()
    assert set(output or {}) == {"hookSpecificOutput", "systemMessage"}
    assert git(git_repo, "log", "-1", "--format=%s") == (
        "ralph: iteration 1: lone \ufffd surrogate")
    state = active(git_repo)
    assert (state.iteration, gate_of(state).iteration_base) == (2, head(git_repo))
