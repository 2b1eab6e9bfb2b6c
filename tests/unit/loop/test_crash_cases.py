"""Issue 19's crash cases of the loop's own hooks, each as its own test, each proven by
killing the hook (SIGKILL) at the instant the issue names: through a `git` on PATH that
kills the hook after the call named (`tests.helpers.faults`), or a process that kills
itself in the middle of a write. After each kill, the next call must leave nothing lost and
nothing mislabelled."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from finesse.state.paths import StatePaths
from finesse.support.writes import write_atomic
from tests.helpers.cli import run
from tests.helpers.faults import FaultyGit, run_python
from tests.helpers.gate import GATE
from tests.helpers.hooks import prompt_input, stop_input
from tests.helpers.launch import LaunchedSession
from tests.helpers.repo import commits, files_in, git, write
from tests.helpers.states import OTHER_SESSION, SESSION, store_for

START = f'/ralph-loop Work --gate "{GATE}"'
NOTEBOOK = ("# Plan\n\n## Goal\nWork.\n\n## Attempts\n\n## Review\n")


def _stop_raw(root: Path, reply: str) -> bytes:
    return stop_input(reply, SESSION, str(root), stop_hook_active=True)


def _gate_loop(root: Path, notebook: bool = False) -> LaunchedSession:
    if notebook:
        write(root, "tasks/todo.md", NOTEBOOK)
        git(root, "add", "tasks/todo.md")
        git(root, "commit", "-q", "-m", "plan")
    claude = LaunchedSession(root, SESSION)
    output = claude.submit(START).output()
    assert output is not None and "hookSpecificOutput" in output, output
    return claude


def _ever_committed(root: Path) -> set[str]:
    """Every path any commit of HEAD's history added or changed."""
    out = git(root, "log", "--format=", "--name-only", "HEAD")
    return {line for line in out.splitlines() if line}


def _iteration_commits(root: Path, number: int) -> int:
    return sum(subject.startswith(f"ralph: iteration {number}:") for subject in commits(root))


# 1. A red iteration committed as green ------------------------------------------------------

def test_point1_a_revert_killed_after_its_restore_never_commits_the_red_files(
        git_repo: Path, tmp_path: Path) -> None:
    root = git_repo
    claude = _gate_loop(root)
    write(root, "broken.txt", "red\n")
    git(root, "add", "broken.txt")  # staged: the restore removes it, the gate turns green
    write(root, "red_new.txt", "made by the red iteration\n")
    claude.stop("Approach: a first try")  # red: the repair is asked
    killed = FaultyGit(tmp_path / "fault").run("stop", _stop_raw(root, "Approach: repair"),
                                                root, kill_on="restore")
    assert killed.killed, killed
    claude.stop("Approach: the stop after the crash")
    write(root, "good.txt", "green work\n")
    claude.stop("Approach: good work")
    assert "red_new.txt" not in _ever_committed(root)
    assert not (root / "red_new.txt").exists()
    assert "good.txt" in files_in(root)


# 2. Committed green work reverted later (or committed twice) ---------------------------------

def _green_commit_killed(root: Path, tmp_path: Path) -> LaunchedSession:
    """A gate loop whose green iteration's stop was killed right after its `git commit`."""
    claude = _gate_loop(root)
    write(root, "green.txt", "green work\n")
    killed = FaultyGit(tmp_path / "fault").run("stop", _stop_raw(root, "Approach: green"),
                                                root, kill_on="commit")
    assert killed.killed, killed
    return claude


def test_point2_a_commit_killed_before_the_state_save_is_never_reverted_nor_repeated(
        git_repo: Path, tmp_path: Path) -> None:
    root = git_repo
    claude = _green_commit_killed(root, tmp_path)
    write(root, "more.txt", "the next iteration's work\n")
    claude.stop("Approach: after the crash")
    write(root, "broken.txt", "red\n")
    claude.stop("Approach: broke it")  # red: repair
    claude.stop("Approach: still broken")  # still red: reverted
    assert (root / "green.txt").read_text() == "green work\n"
    assert "green.txt" in files_in(root)
    assert _iteration_commits(root, 1) == 1, commits(root)


# 6. Temp files in the user's tree ------------------------------------------------------------

def _stop_killed_at_rename(raw: Path, when: str) -> str:
    """A Stop hook run on `raw` that SIGKILLs itself at the rename whose target makes the
    Python expression `when` (of `target`, a str) true."""
    return f"""
import os, signal, sys
real = os.replace
def replace(source, target):
    target = str(target)
    if {when}:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(source, target)
os.replace = replace
from finesse.hooks.stop import main
main(stdin=open({str(raw)!r}, "rb"))
"""


def test_point6_a_notebook_write_killed_before_its_rename_leaves_no_temp_to_commit(
        git_repo: Path, tmp_path: Path) -> None:
    root = git_repo
    claude = _gate_loop(root, notebook=True)
    write(root, "green.txt", "green work\n")
    raw = tmp_path / "stop.json"
    raw.write_bytes(_stop_raw(root, "Approach: green"))
    code = run_python(_stop_killed_at_rename(raw, 'target.endswith("todo.md")'), root)
    assert code == -9
    write(root, "more.txt", "more\n")
    claude.stop("Approach: more")
    claude.stop("Approach: and more")
    committed = _ever_committed(root)
    assert not [name for name in committed if name.endswith(".tmp")], committed
    left = [str(path.relative_to(root)) for path in root.rglob("*.tmp")
            if ".claude" not in path.relative_to(root).parts]
    assert left == []


# 7. Notebook entries written twice -----------------------------------------------------------

def test_point7_a_stop_killed_after_its_notebook_write_leaves_one_entry(
        git_repo: Path, tmp_path: Path) -> None:
    root = git_repo
    write(root, "tasks/todo.md", NOTEBOOK)
    claude = LaunchedSession(root, SESSION)
    output = claude.submit("/ralph-loop Work --max-iterations 5").output()
    assert output is not None and "hookSpecificOutput" in output, output
    # The stop's own fingerprint is the first `git status`; the one after the notebook
    # write, the second.
    killed = FaultyGit(tmp_path / "fault").run("stop", _stop_raw(root, "Approach: one"),
                                                root, kill_on="status", nth=2)
    assert killed.killed, killed
    claude.stop("Approach: one, once more")
    claude.stop("Approach: two")
    plan = (root / "tasks/todo.md").read_text()
    assert plan.count("### Iteration 1 (") == 1, plan
    assert plan.count("### Iteration 2 (") == 1, plan


# 8. Links and permissions kept ---------------------------------------------------------------

def test_point8_a_write_through_a_symlink_updates_the_target_and_keeps_the_link(
        tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "settings.json"
    write(tmp_path, "dotfiles/settings.json", "{}\n")
    link = tmp_path / "project" / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    write_atomic(link, '{"a": 1}\n')
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == '{"a": 1}\n'


def test_point8_a_rewrite_keeps_the_mode(tmp_path: Path) -> None:
    secret = write(tmp_path, "settings.json", '{"token": "x"}\n')
    secret.chmod(0o600)
    write_atomic(secret, '{"token": "y"}\n')
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600


def test_point8_statusline_install_writes_through_the_link(
        git_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = git_repo.parent / "dotfiles" / "settings.json"
    target.parent.mkdir()
    target.write_text('{"theme": "dark"}\n')
    target.chmod(0o600)
    link = git_repo / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(target)
    code, out, err = run(capsys, "statusline", "--install", "--project", str(git_repo))
    assert code == 0, (out, err)
    assert link.is_symlink()
    assert "statusline" in json.loads(target.read_text())["statusLine"]["command"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_point8_a_symlinked_notebook_stays_a_link(git_repo: Path) -> None:
    root = git_repo
    write(root, "notes/todo.md", NOTEBOOK)
    (root / "tasks").mkdir()
    (root / "tasks" / "todo.md").symlink_to("../notes/todo.md")
    claude = LaunchedSession(root, SESSION)
    claude.submit("/ralph-loop Work --max-iterations 5")
    claude.stop("Approach: one")
    assert (root / "tasks" / "todo.md").is_symlink()
    assert "### Iteration 1 (" in (root / "notes" / "todo.md").read_text()


# 9. A start is one step ----------------------------------------------------------------------

def test_point9_a_start_that_fails_after_its_save_leaves_no_loop_untold(git_repo: Path) -> None:
    root = git_repo
    write(root, ".claude/settings.local.json", "[" * 200_000)
    claude = LaunchedSession(root, SESSION)
    output = claude.submit("/ralph-loop Work --stop-at-quota 80").output()
    told = output is not None and "hookSpecificOutput" in output
    assert told or store_for(root).peek(SESSION) is None, output


_KILL_AFTER_SAVE = """
import os, signal, sys
import finesse.hooks.prompt_submit as hook
def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
hook.add_context = killed
hook.main(stdin=open(sys.argv[1], "rb"))
"""


def test_point9_a_start_killed_before_telling_the_model_is_not_left_active(
        git_repo: Path, tmp_path: Path) -> None:
    root = git_repo
    raw = tmp_path / "prompt.json"
    raw.write_bytes(prompt_input("/ralph-loop Work --max-iterations 5", SESSION, str(root)))
    code = run_python(_KILL_AFTER_SAVE.replace("sys.argv[1]", repr(str(raw))), root)
    assert code == -9
    claude = LaunchedSession(root, SESSION)
    after = claude.stop("Hello").output()
    assert store_for(root).peek(SESSION) is None
    assert after is not None and "was interrupted" in after.get("systemMessage", ""), after


def test_point9_a_start_failing_after_its_save_is_rolled_back(
        git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import finesse.hooks.prompt_submit as hook
    from tests.helpers.hooks import submit
    from tests.helpers.states import only_archived

    def broken(*args: object, **kwargs: object) -> list[str]:
        raise RuntimeError("a reader broke")

    monkeypatch.setattr(hook, "start_notes", broken)
    with pytest.raises(RuntimeError):
        submit(git_repo, "/ralph-loop Work --max-iterations 5")
    assert store_for(git_repo).peek(SESSION) is None
    ended = only_archived(git_repo)
    assert ended.outcome == "cancelled" and "its start failed" in ended.end_message


def test_point6_a_temp_left_beside_the_notebook_is_never_committed(git_repo: Path) -> None:
    """A temp file a killed write left beside the plan (the old writer put them there, and
    still does when `.claude/ralph/` is on another file system) is removed before a commit."""
    root = git_repo
    claude = _gate_loop(root, notebook=True)
    write(root, "tasks/.todo.md.999999.123.tmp", "half a plan")
    write(root, "green.txt", "green work\n")
    claude.stop("Approach: green")
    assert "tasks/.todo.md.999999.123.tmp" not in _ever_committed(root)
    assert not (root / "tasks/.todo.md.999999.123.tmp").exists()


def test_point6_the_notebooks_temp_files_live_in_the_plugins_folder(
        git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = os.replace

    def replace(source: str, target: str) -> None:
        seen.append(str(source))
        real(source, target)

    root = git_repo
    claude_root = _gate_loop(root, notebook=True).root
    monkeypatch.setattr(os, "replace", replace)
    from tests.helpers.hooks import stop_reply

    write(root, "green.txt", "green work\n")
    stop_reply(claude_root, "Approach: green")
    notebook_temps = [name for name in seen if ".todo.md." in name]
    assert notebook_temps and all(
        Path(name).parent == root / ".claude" / "ralph" / "tmp" for name in notebook_temps)


def test_status_lists_an_interrupted_gate_step_and_the_next_stop_says_what_it_did(
        git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = git_repo
    claude = _green_commit_killed(root, tmp_path)
    code, _, err = run(capsys, "status", "--project", str(root))
    assert code == 0 and "(its commit) was interrupted; the loop's next stop finishes it" in err
    after = claude.stop("Approach: after the crash").output()
    assert after is not None
    assert "the gate step of iteration 1 was interrupted (the hook was killed): its commit" \
        in after["systemMessage"], after
    assert "was interrupted" in (root / ".claude/ralph/finesse.log").read_text()
    code, _, err = run(capsys, "status", "--project", str(root))
    assert code == 0 and "interrupted" not in err


# The one writer, killed at each of its steps --------------------------------------------------

_WRITE = """
import sys
from pathlib import Path
from finesse.support.writes import write_atomic
write_atomic(Path(sys.argv[1]), "new text\\n" * 1000, temp_dir=Path(sys.argv[2]), durable=True)
"""


def test_the_writer_killed_at_each_step_leaves_the_old_file_or_the_new_one(
        tmp_path: Path) -> None:
    from finesse.support.writes import FAULT_ENV, remove_stale_temps

    project = tmp_path / "project"
    own = project / ".claude" / "ralph" / "tmp"
    outcomes = []
    for step in range(1, 6):
        target = write(project, "tasks/todo.md", "old text\n")
        target.chmod(0o640)
        script = tmp_path / "write.py"
        script.write_text(_WRITE)
        code = run_python(f"import sys; sys.argv = ['', {str(target)!r}, {str(own)!r}]; "
                          f"exec(open({str(script)!r}).read())", project,
                          **{FAULT_ENV: str(step)})
        text = target.read_text()
        assert text in ("old text\n", "new text\n" * 1000), (step, text[:40])
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
        assert sorted(path.name for path in (project / "tasks").iterdir()) == ["todo.md"]
        remove_stale_temps(own)
        assert not own.exists() or list(own.iterdir()) == []
        outcomes.append((code, text == "old text\n"))
    # killed after the temp file and after its bytes: the old file; after the rename and
    # after the folder sync: the new one; a fifth step does not exist: not killed
    assert outcomes == [(-9, True), (-9, True), (-9, False), (-9, False), (0, False)]


def test_a_recovery_killed_half_way_is_finished_by_the_next_stop(
        git_repo: Path, tmp_path: Path) -> None:
    """Recovery is itself a gate step under the same intent: killed in the middle of
    finishing the revert, the stop after it finishes it again."""
    root = git_repo
    claude = _gate_loop(root)
    write(root, "broken.txt", "red\n")
    git(root, "add", "broken.txt")
    write(root, "red_new.txt", "made by the red iteration\n")
    claude.stop("Approach: a first try")  # red: the repair is asked
    faults = FaultyGit(tmp_path / "fault")
    first = faults.run("stop", _stop_raw(root, "Approach: repair"), root, kill_on="restore")
    second = faults.run("stop", _stop_raw(root, "Approach: again"), root, kill_on="ls-files")
    assert first.killed and second.killed, (first, second)
    output = claude.stop("Approach: the stop after both crashes").output()
    assert output is not None and "its revert to" in output["systemMessage"], output
    write(root, "good.txt", "green work\n")
    claude.stop("Approach: good work")
    assert "red_new.txt" not in _ever_committed(root)
    assert not (root / "red_new.txt").exists()
    assert "good.txt" in files_in(root)
    assert store_for(root).load(SESSION) is not None


def test_another_sessions_calls_leave_an_interrupted_step_to_its_own_loop(
        git_repo: Path, tmp_path: Path) -> None:
    root = git_repo
    claude = _green_commit_killed(root, tmp_path)
    intent = StatePaths(root).intent_file(SESSION)
    assert intent.exists()
    other = LaunchedSession(root, OTHER_SESSION)
    other.submit('/ralph-loop "Other work" --max-iterations 3')  # started or refused beside
    other.submit("/ralph-status")
    other.stop("Other work, done for now.")
    assert intent.exists()  # not theirs to finish or roll back
    claude.stop("Approach: after the crash")
    assert not intent.exists()
    assert (root / "green.txt").read_text() == "green work\n"
    assert _iteration_commits(root, 1) == 1, commits(root)


# Temps of our own state files ---------------------------------------------------------------

def test_a_state_save_killed_before_its_rename_leaves_a_temp_the_next_start_removes(
        git_repo: Path, tmp_path: Path) -> None:
    root = git_repo
    claude = LaunchedSession(root, SESSION)
    claude.submit('/ralph-loop "Work" --max-iterations 5')
    raw = tmp_path / "stop.json"
    raw.write_bytes(_stop_raw(root, "Some work."))
    in_loops = 'os.path.basename(os.path.dirname(target)) == "loops"'
    code = run_python(_stop_killed_at_rename(raw, in_loops), root)
    assert code == -9
    loops = StatePaths(root).loops
    assert [p.name for p in loops.iterdir() if p.name.endswith(".tmp")]  # the killed save's
    LaunchedSession(root, OTHER_SESSION).submit('/ralph-loop "Other work" --max-iterations 3')
    assert [p.name for p in loops.iterdir() if p.name.endswith(".tmp")] == []
    state = store_for(root).load(SESSION)  # the killed stop's loop: as it was before it
    assert state is not None and state.iteration == 1
    live = loops / f".{SESSION}.json.{os.getpid()}.1.tmp"  # a live writer's temp stays
    live.write_text("{}")
    LaunchedSession(root, "third-session").submit('/ralph-loop "Third" --max-iterations 3')
    assert live.exists()


# A cancel after a killed gate step --------------------------------------------------------
# Esc during a long gate command kills the Stop hook; the person then cancels the loop. The
# cancel must finish the interrupted step as the loop's next stop would have, not end the
# loop on a half-reverted tree or with a committed iteration its record never names.

def _revert_killed_after_restore(root: Path, tmp_path: Path) -> LaunchedSession:
    claude = _gate_loop(root)
    write(root, "broken.txt", "red\n")
    git(root, "add", "broken.txt")
    write(root, "red_new.txt", "made by the red iteration\n")
    claude.stop("Approach: a first try")  # red: the repair is asked
    killed = FaultyGit(tmp_path / "fault").run("stop", _stop_raw(root, "Approach: repair"),
                                                root, kill_on="restore")
    assert killed.killed, killed
    return claude


def test_a_cancel_after_a_revert_killed_half_way_finishes_the_revert(
        git_repo: Path, tmp_path: Path) -> None:
    from tests.helpers.states import only_archived

    root = git_repo
    claude = _revert_killed_after_restore(root, tmp_path)
    output = claude.submit("/cancel-ralph").output()
    assert output is not None and "cancelled" in output["reason"], output
    assert not (root / "red_new.txt").exists()  # the revert finished: nothing of it left
    assert not (root / "broken.txt").exists()
    assert "red_new.txt" not in _ever_committed(root)
    ended = only_archived(root)
    assert ended.outcome == "cancelled"
    assert [(item.number, item.gate_action) for item in ended.iterations] == [
        (1, "repair"), (2, "reverted")], ended.iterations
    assert not StatePaths(root).intent_file(SESSION).exists()


def test_a_cancel_after_a_commit_killed_before_its_save_records_the_committed_iteration(
        git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers.states import only_archived

    root = git_repo
    _green_commit_killed(root, tmp_path)
    code, out, err = run(capsys, "cancel", "--project", str(root))
    assert code == 0, (out, err)
    ended = only_archived(root)
    sha = git(root, "rev-parse", "HEAD")  # the iteration's commit, made before the kill
    assert commits(root)[0].startswith("ralph: iteration 1: "), commits(root)
    assert [(item.number, item.gate_action, item.commit) for item in ended.iterations] == [
        (1, "committed", sha)], ended.iterations
    assert "- Iterations: 1 of at most" in Path(ended.report_path).read_text()
    assert _iteration_commits(root, 1) == 1, commits(root)
    assert not StatePaths(root).intent_file(SESSION).exists()


def test_the_kill_switch_after_a_revert_killed_half_way_still_finishes_the_revert(
        git_repo: Path, tmp_path: Path) -> None:
    from tests.helpers.states import only_archived

    root = git_repo
    claude = _revert_killed_after_restore(root, tmp_path)
    write(root, ".claude/ralph/STOP", "")
    output = claude.stop("Approach: the stop after the crash").output()
    assert output is not None and "kill switch" in output["systemMessage"], output
    assert not (root / "red_new.txt").exists()
    assert "red_new.txt" not in _ever_committed(root)
    ended = only_archived(root)
    assert ended.outcome == "cancelled"
    assert ended.iterations[-1].gate_action == "reverted", ended.iterations
    assert not StatePaths(root).intent_file(SESSION).exists()


# A judge loop's resume, killed at each step of its writes --------------------------------

def test_a_judge_loop_resumed_and_killed_is_never_active_without_its_marker(
        judge_session: object) -> None:
    """The hot judge hooks (PreToolUse, SubagentStart, SubagentStop) act only where the
    session's marker is: a judge loop active without it would let the orchestrator write
    and count no attempt."""
    from finesse.support.writes import FAULT_ENV
    from tests.helpers.judging import FAIL, WORKER, JudgeSession
    from tests.helpers.launch import hook_env, run_launcher

    assert isinstance(judge_session, JudgeSession)
    root = judge_session.root
    judge_session.start('"Fix it" --judge --criteria "it is fixed" --verify "false" '
                        '--max-iterations 1')
    judge_session.worker("w1", {**WORKER, "verifier_runs": [
        {"cmd": "false", "status": "fail", "output_excerpt": ""}]})
    judge_session.stop()
    judge_session.judge("j1", FAIL)
    judge_session.stop()  # the cap: the loop ends, resumable
    paths = StatePaths(root)
    history = {path.name: path.read_bytes() for path in paths.history.iterdir()}
    resume = prompt_input("/ralph-resume", SESSION, str(root))
    write_tool = json.dumps({
        "session_id": SESSION, "cwd": str(root), "hook_event_name": "PreToolUse",
        "transcript_path": "/nonexistent/transcript.jsonl", "tool_name": "Write",
        "tool_input": {"file_path": str(root / "x.txt"), "content": "x"}}).encode()
    outcomes = []
    for step in range(1, 6):
        for name, data in history.items():  # the loop as it ended, for each kill
            (paths.history / name).write_bytes(data)
        paths.loop_file(SESSION).unlink(missing_ok=True)
        paths.judge_marker(SESSION).unlink(missing_ok=True)
        done = run_launcher("prompt", resume, hook_env(root, **{FAULT_ENV: str(step)}), root)
        active = store_for(root).peek(SESSION) is not None
        outcomes.append((done.code, active))
        if active:  # the orchestrator's own write is refused, as in any judge loop
            guard = run_launcher("pre-tool-use", write_tool, hook_env(root), root)
            assert "deny" in guard.stdout, f"killed after write step {step}: {guard}"
    assert (-9, False) in outcomes and (-9, True) in outcomes, outcomes


# An ending killed right after its archive -------------------------------------------------

_KILL_AFTER_ARCHIVE = """
import os, signal, sys
from finesse.state.store import LoopStore
real = LoopStore.archive
def archive(self, state):
    real(self, state)
    os.kill(os.getpid(), signal.SIGKILL)
LoopStore.archive = archive
from finesse.cli.ralph import main
main(["cancel", "--project", sys.argv[1]])
"""


def test_an_ending_killed_after_its_archive_leaves_both_reports(git_repo: Path) -> None:
    """Once the history holds the loop nothing runs its ending again: every report it has
    is written before the archive."""
    from tests.helpers.states import only_archived

    root = git_repo
    claude = _gate_loop(root)
    write(root, "green.txt", "green work\n")
    claude.stop("Approach: green")
    from tests.helpers.launch import REPO_ROOT

    code = run_python(_KILL_AFTER_ARCHIVE.replace("sys.argv[1]", repr(str(root))), root,
                      PYTHONPATH=str(REPO_ROOT / "scripts"))  # this checkout's package
    assert code == -9
    ended = only_archived(root)
    assert ended.outcome == "cancelled" and store_for(root).peek(SESSION) is None
    report = Path(ended.report_path)
    assert report.is_file()
    assert report.with_suffix(".html").is_file()


@pytest.mark.slow
def test_a_cancel_killed_at_every_write_step_ends_the_loop_once(
        git_repo: Path, tmp_path: Path) -> None:
    """`ralph cancel` killed after each step of its writes (the notebook, both reports, the
    archive), then run again while the loop is still active: the loop ends once, cancelled,
    with both reports and one entry in the plan, and `ralph status` says it has ended."""
    import shutil
    import subprocess
    import sys

    from finesse.support.writes import FAULT_ENV
    from tests.helpers.launch import RALPH, hook_env, run_ralph
    from tests.helpers.states import only_archived

    root = git_repo
    _gate_loop(root, notebook=True)
    claude = LaunchedSession(root, SESSION)
    write(root, "green.txt", "green work\n")
    claude.stop("Approach: green")
    template = tmp_path / "template"
    shutil.copytree(root, template, symlinks=True)
    for step in range(1, 40):
        shutil.rmtree(root)
        shutil.copytree(template, root, symlinks=True)
        killed = subprocess.run([sys.executable, str(RALPH), "cancel"], cwd=root,
                                env=hook_env(root, **{FAULT_ENV: str(step)}),
                                capture_output=True, timeout=60)
        if store_for(root).peek(SESSION) is not None:
            again = run_ralph(root, "cancel")
            assert again.code == 0, (step, again)
        where = f"killed after write step {step}"
        ended = only_archived(root)
        assert ended.outcome == "cancelled", where
        assert Path(ended.report_path).is_file(), where
        assert Path(ended.report_path).with_suffix(".html").is_file(), where
        assert (root / "tasks/todo.md").read_text().count("### Iteration 1 (") == 1, where
        assert "No active Ralph loop" in run_ralph(root, "status").stdout, where
        assert (root / "green.txt").read_text() == "green work\n", where
        if killed.returncode == 0:
            return
    raise AssertionError("over 40 write steps")


# A kill while the user's own git hook runs in a gate commit ----------------------------------

def _stop_in_its_own_group(root: Path, reply: str) -> int:
    """The Stop hook in a process group of its own (as a terminal or Claude Code may kill a
    whole group); its exit code."""
    import subprocess
    import sys

    from tests.helpers.launch import LAUNCHER, hook_env

    hook = subprocess.Popen([sys.executable, "-S", str(LAUNCHER), "stop"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=root, env=hook_env(root),
                            start_new_session=True)
    hook.communicate(_stop_raw(root, reply), timeout=60)
    return hook.returncode


@pytest.mark.parametrize("killed", ["the hook's whole group", "the Stop hook alone"])
def test_a_kill_while_the_users_prepare_commit_msg_hook_runs(
        git_repo: Path, tmp_path: Path, killed: str) -> None:
    """The user's prepare-commit-msg hook (it runs despite --no-verify) is where the gate
    commit is when the Stop hook is killed: with its git and the hook (git's index.lock
    left behind), or alone (git goes on and makes the commit). The next stop finds the
    commit or makes it, once, and git is usable."""
    from tests.helpers.repo import install_hook

    root = git_repo
    claude = _gate_loop(root)
    once = tmp_path / "killed-once"
    # /proc/PID/stat's fifth field is the process group; the fourth the parent (git).
    victim = ("-$(cut -d' ' -f5 /proc/$$/stat)" if killed == "the hook's whole group"
              else "$(cut -d' ' -f4 /proc/$PPID/stat)")
    install_hook(root, "prepare-commit-msg",
                 f"[ -e '{once}' ] && exit 0\ntouch '{once}'\nkill -9 {victim}\nsleep 1")
    write(root, "green.txt", "green work\n")
    assert _stop_in_its_own_group(root, "Approach: green") == -9
    claude.stop("Approach: after the crash")
    write(root, "more.txt", "more\n")
    claude.stop("Approach: more")
    assert not (root / ".git" / "index.lock").exists()
    assert git(root, "status", "--porcelain") == "?? .claude/"
    assert "green.txt" in files_in(root) and "more.txt" in files_in(root)
    assert _iteration_commits(root, 1) == 1, commits(root)
    assert store_for(root).load(SESSION) is not None


def test_the_next_prompt_after_a_revert_killed_half_way_finishes_it_before_the_agent_works(
        git_repo: Path, tmp_path: Path) -> None:
    """A killed Stop hook lets Claude stop; the person's next prompt sets the agent working
    again. The half-done revert is finished before that (UserPromptSubmit), not by the next
    stop over the agent's new work, which the gate would then never see."""
    root = git_repo
    claude = _revert_killed_after_restore(root, tmp_path)
    output = claude.submit("Please go on.").output()
    assert not (root / "red_new.txt").exists()  # finished before the agent works
    assert output is not None and "its revert to" in output["systemMessage"], output
    write(root, "new_work.txt", "the agent's work after the prompt\n")
    claude.stop("Approach: new work")
    assert (root / "new_work.txt").read_text() == "the agent's work after the prompt\n"
    assert "new_work.txt" in files_in(root)  # gated green and committed
    assert "red_new.txt" not in _ever_committed(root)
    assert "broken.txt" not in _ever_committed(root)
    assert not StatePaths(root).intent_file(SESSION).exists()


def test_point6_a_temp_left_beside_the_notebook_is_removed_in_a_loop_without_a_gate(
        git_repo: Path) -> None:
    """A temp file a killed write left beside the plan (`.claude/ralph/` was on another file
    system) is the plugin's, in the user's tree: the next write of the plan removes it, gate
    or no gate."""
    root = git_repo
    write(root, "tasks/todo.md", NOTEBOOK)
    claude = LaunchedSession(root, SESSION)
    claude.submit("/ralph-loop Work --max-iterations 5")
    write(root, "tasks/.todo.md.999999.123.tmp", "half a plan")
    claude.stop("Approach: one")
    assert "### Iteration 1 (" in (root / "tasks/todo.md").read_text()
    assert not (root / "tasks/.todo.md.999999.123.tmp").exists()


def test_ralph_ci_killed_in_its_write_leaves_no_temp_once_run_again(git_repo: Path) -> None:
    """`ralph ci` writes into the user's tree (`.github/workflows/`), its temp file beside
    the workflow; killed before the rename and run again, nothing of the killed write is
    left there to be committed with the workflow."""
    import subprocess
    import sys

    from finesse.support.writes import FAULT_ENV
    from tests.helpers.graphs import workflow, write_plan
    from tests.helpers.launch import RALPH, hook_env

    root = git_repo
    write_plan(root, "demo", [workflow("alpha"), workflow("beta", ["alpha"])])
    command = [sys.executable, str(RALPH), "ci", "finesse-plans/demo", "--finesse",
               "git+https://example.com/finesse@abc123"]
    killed = subprocess.run(command, cwd=root, env=hook_env(root, **{FAULT_ENV: "1"}),
                            capture_output=True, timeout=60)
    assert killed.returncode == -9
    again = subprocess.run(command, cwd=root, env=hook_env(root), capture_output=True,
                           timeout=60)
    assert again.returncode == 0, again
    assert sorted(path.name for path in (root / ".github" / "workflows").iterdir()) == [
        "ralph-demo.yml"]


def test_point7_a_second_loop_in_a_plan_notes_its_own_iterations(session: object) -> None:
    """An entry already in the plan is skipped only when it is this loop's (a stop killed
    after its notebook write, run again): a later loop's iteration 1 is noted beside an
    earlier loop's, not taken for it."""
    from tests.helpers.hooks import Session

    assert isinstance(session, Session)
    write(session.root, "tasks/todo.md", NOTEBOOK)
    session.submit("/ralph-loop Work --max-iterations 5")
    session.stop("Approach: the first loop's try")
    session.submit("/cancel-ralph")
    session.submit("/ralph-loop Work again --max-iterations 5")
    session.stop("Approach: the second loop's try")
    plan = (session.root / "tasks/todo.md").read_text()
    assert plan.count("### Iteration 1 (") == 2, plan
    assert "- Approach: the second loop's try\n" in plan, plan


def test_point7_the_entry_a_killed_stop_wrote_is_replaced_by_the_one_recorded(
        git_repo: Path, tmp_path: Path) -> None:
    """The stop killed after its notebook write never saved its record; the next stop
    records the iteration as it saw it, and the plan says the same: one entry, the
    recorded one, not the killed stop's."""
    root = git_repo
    write(root, "tasks/todo.md", NOTEBOOK)
    claude = LaunchedSession(root, SESSION)
    claude.submit("/ralph-loop Work --max-iterations 5")
    killed = FaultyGit(tmp_path / "fault").run(
        "stop", _stop_raw(root, "Approach: the killed stop's try"), root, kill_on="status",
        nth=2)
    assert killed.killed, killed
    claude.stop("Approach: the try recorded")
    [recorded] = store_for(root).load(SESSION).iterations  # type: ignore[union-attr]
    plan = (root / "tasks/todo.md").read_text()
    assert plan.count("### Iteration 1 (") == 1, plan
    assert recorded.approach == "the try recorded"
    assert "- Approach: the try recorded\n" in plan, plan
    assert "the killed stop's try" not in plan, plan


def test_a_judges_verdict_killed_after_its_plan_entry_is_noted_as_the_next_judge_found(
        judge_session: object) -> None:
    """SubagentStop of a judge killed after the plan's entry, before the state's save: the
    attempt is still open, a new judge gives the verdict that counts, and the plan says so."""
    from finesse.support.writes import FAULT_ENV
    from tests.helpers.judging import FAIL, JUDGE_TYPE, PASS, WORKER, JudgeSession
    from tests.helpers.launch import hook_env, run_launcher

    assert isinstance(judge_session, JudgeSession)
    root = judge_session.root
    write(root, "tasks/todo.md", "## Goal\nFix it.\n\n## Acceptance Criteria\n- it is fixed\n\n"
                                 "## Verification Commands\n- `true`\n\n## Attempts\n\n"
                                 "## Review\n")
    judge_session.start("--judge --plan tasks/todo.md")
    judge_session.worker("w1", {**WORKER, "verifier_runs": [
        {"cmd": "true", "status": "pass", "output_excerpt": ""}]})
    judge_session.stop()
    judge_session.subagent_start("j1", JUDGE_TYPE)
    verdict = json.dumps({
        "session_id": SESSION, "cwd": str(root), "hook_event_name": "SubagentStop",
        "transcript_path": "/nonexistent/transcript.jsonl", "agent_id": "j1",
        "agent_type": JUDGE_TYPE, "stop_hook_active": False,
        "last_assistant_message": "```json\n" + json.dumps(FAIL) + "\n```"}).encode()
    # write steps 1-4: the plan's entry; 5-8: the state's save
    killed = run_launcher("subagent-stop", verdict, hook_env(root, **{FAULT_ENV: "3"}), root)
    assert killed.code == -9
    assert "- Result: failed" in (root / "tasks/todo.md").read_text()
    judge_session.stop()  # the verdict never counted: a new judge is asked for
    judge_session.judge("j2", PASS)
    judge_session.stop()
    plan = (root / "tasks/todo.md").read_text()
    assert plan.count("### Iteration 1 (") == 1, plan
    assert "- Result: success" in plan and "- Result: failed" not in plan, plan


def test_a_judge_start_killed_before_its_save_leaves_no_marker_once_recovered(
        git_repo: Path) -> None:
    """The marker is made before the save (so a judge loop is never active without it);
    killed between them, the session's next start rolls the start back, marker too: every
    tool call of the session would otherwise load a loop state that is not there."""
    from finesse.support.writes import FAULT_ENV
    from tests.helpers.launch import hook_env, run_launcher

    root = git_repo
    start = prompt_input('/ralph-loop "Fix it" --judge --criteria "it is fixed" --verify true',
                         SESSION, str(root))
    killed = run_launcher("prompt", start, hook_env(root, **{FAULT_ENV: "5"}), root)
    assert killed.code == -9  # steps 1-4: the start's intent; 5: the loop's temp file
    marker = StatePaths(root).judge_marker(SESSION)
    assert marker.exists() and store_for(root).peek(SESSION) is None
    claude = LaunchedSession(root, SESSION)
    output = claude.submit("/ralph-loop Work --max-iterations 3").output()
    assert output is not None and "hookSpecificOutput" in output, output
    assert not marker.exists()
