"""`ralph run` killed outright (SIGKILL: a closed terminal, the OOM killer), then resumed or run
again: its agent does not outlive it, or is ended before another starts; no user file is
lost; the loop file parses. The real `ralph` runs as a process of its own against the fake
`claude` (tests/helpers/streams.py), whose every instance says whether another was still
running when it started."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import streams as s
from tests.helpers.graphs import PROMISE, write_plan
from tests.helpers.graphs import workflow as graph_workflow
from tests.helpers.repo import git, project_status, write
from tests.helpers.streams import FakeClaude

REPO_ROOT = Path(__file__).resolve().parents[3]
RALPH = [sys.executable, str(REPO_ROOT / "scripts" / "ralph.py")]
WAIT_SECONDS = 60.0
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the parent-death signal is Linux's")


def ralph_env(**extra: str) -> dict[str, str]:
    clean = {key: value for key, value in os.environ.items()
             if not key.startswith(("FINESSE_", "CLAUDE_"))}
    return {**clean, **extra}


def gone(pid: int) -> bool:
    """Whether the process has exited (a zombie nobody reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def start_ralph(root: Path, *args: str, env: dict[str, str] | None = None
                ) -> subprocess.Popen[str]:
    return subprocess.Popen([*RALPH, *args], cwd=root, env=env or ralph_env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def kill_when_started(process: subprocess.Popen[str], marker: Path) -> None:
    """SIGKILL `ralph` (itself only) once its agent has written `marker`."""
    wait_for(lambda: marker.exists() or process.poll() is not None, f"{marker} written")
    assert process.poll() is None, process.communicate()
    os.kill(process.pid, signal.SIGKILL)
    process.communicate()


def loop_files(root: Path) -> list[dict[str, Any]]:
    folder = root / ".claude" / "ralph"
    return [json.loads(path.read_text()) for path in sorted(folder.rglob("*.json"))
            if "loops" in path.parts or "history" in path.parts]


@pytest.fixture
def survivors() -> Any:
    """Pids the test's agents ran as; any still running at the end is ended (they are the
    test's own)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)


@linux_only
def test_an_agent_dies_with_its_ralph_run(git_repo: Path, tmp_path: Path,
                                          survivors: list[int]) -> None:
    # Issue 19, point 4: the child had a session of its own and outlived `ralph run`.
    marker = tmp_path / "started"
    claude = FakeClaude(tmp_path / "bin", [
        {"events": [s.init()], "touch": str(marker), "sleep": 120}])
    process = start_ralph(git_repo, "run", "--claude-bin", str(claude.path), "Work a while",
                          "--completion-promise", "DONE")
    kill_when_started(process, marker)
    (call,) = claude.calls
    survivors.append(call["pid"])
    wait_for(lambda: gone(call["pid"]), f"the agent {call['pid']} ended with its ralph run")


@linux_only
def test_resume_ends_the_agent_left_running_before_it_starts_another(
    git_repo: Path, tmp_path: Path, survivors: list[int]
) -> None:
    # Issue 19, point 4: `ralph resume` started a second agent beside the first, which went on
    # writing files after the resumed loop had reported success. This agent ignores SIGTERM
    # (so the parent-death signal does not end it): only the loop's record of it can.
    marker = tmp_path / "started"
    late = git_repo / "late.txt"
    claude = FakeClaude(tmp_path / "bin", [
        {"events": [s.init()], "touch": str(marker), "sleep": 120, "ignore_term": True},
        {"events": s.reply_events("Done.\n<promise>DONE</promise>"),
         "write": {"out.txt": "made\n"}},
    ])
    write(git_repo, "mine.txt", "the user's own\n")
    process = start_ralph(git_repo, "run", "--claude-bin", str(claude.path), "Make out.txt",
                          "--completion-promise", "DONE", "--verify", "test -f out.txt")
    kill_when_started(process, marker)
    first = claude.calls[0]["pid"]
    survivors.append(first)
    assert not gone(first)
    resumed = subprocess.run([*RALPH, "resume"], cwd=git_repo, env=ralph_env(),
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert gone(first)
    assert [call["overlap"] for call in claude.calls] == [False, False]
    assert f"ended the agent (claude pid {first})" in resumed.stdout
    assert not late.exists()
    assert (git_repo / "mine.txt").read_text() == "the user's own\n"
    assert [loop["outcome"] for loop in loop_files(git_repo)] == ["success"]


def test_a_recorded_pid_that_is_no_longer_the_agent_is_never_signalled(
    git_repo: Path, tmp_path: Path, survivors: list[int]
) -> None:
    # The pid was reused by another process: the loop's record does not identify it, so
    # `ralph resume` leaves it alone and says so.
    marker = tmp_path / "started"
    claude = FakeClaude(tmp_path / "bin", [
        {"events": [s.init()], "touch": str(marker), "sleep": 120},
        {"events": s.reply_events("Done.\n<promise>DONE</promise>")},
    ])
    process = start_ralph(git_repo, "run", "--claude-bin", str(claude.path), "Do it",
                          "--completion-promise", "DONE", "--verify", "true")
    kill_when_started(process, marker)
    first = claude.calls[0]["pid"]
    survivors.append(first)
    wait_for(lambda: gone(first) or not sys.platform.startswith("linux"), "the agent ended")
    if not gone(first):
        os.kill(first, signal.SIGKILL)
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    survivors.append(bystander.pid)
    (loop_file,) = (git_repo / ".claude" / "ralph" / "loops").glob("*.json")
    state = json.loads(loop_file.read_text())
    state["headless"]["agent"]["pid"] = bystander.pid  # same record, someone else's pid
    loop_file.write_text(json.dumps(state))
    resumed = subprocess.run([*RALPH, "resume"], cwd=git_repo, env=ralph_env(),
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert bystander.poll() is None
    assert f"left pid {bystander.pid} alone" in resumed.stdout
    bystander.kill()
    bystander.wait()
    git(git_repo, "status")


def graph_plan(root: Path) -> None:
    write_plan(root, "demo", [graph_workflow("alpha"), graph_workflow("beta"),
                              graph_workflow("gamma", ["alpha", "beta"])])


def finished(reply: str = "Done.") -> dict[str, Any]:
    """A sub-workflow's agent that does its task at once: `<task>/done.txt` in its worktree."""
    return {"events": s.reply_events(f"{reply}\n<promise>{PROMISE}</promise>"),
            "write": {"{cwd_name}/done.txt": "done\n"}}


def merged_tasks(root: Path) -> list[str]:
    """The tasks whose `<task>/done.txt` the starting branch holds."""
    names = git(root, "ls-files", "*/done.txt").split()
    return sorted(name.split("/")[0] for name in names)


@pytest.mark.parametrize("working", [1, 2, 3])  # alpha, beta (wave 1), gamma (wave 2)
def test_a_graph_killed_while_an_agent_works_runs_it_again_and_never_calls_it_merged(
    git_repo: Path, tmp_path: Path, survivors: list[int], working: int
) -> None:
    # Issue 19, point 5: wave 1's fresh branches still pointed at the start commit, so the run
    # again counted them "merged before", skipped wave 1, and exited 0 saying every
    # sub-workflow succeeded and was merged.
    graph_plan(git_repo)
    marker = tmp_path / "started"
    claude = FakeClaude(tmp_path / "bin", [finished()] * (working - 1) + [
        {"events": [s.init()], "touch": str(marker), "sleep": 120}] + [finished()] * 3)
    args = ("run", "--claude-bin", str(claude.path), "--graph", "finesse-plans/demo",
            "--jobs", "1")
    process = start_ralph(git_repo, *args)
    kill_when_started(process, marker)
    survivors.append(claude.calls[-1]["pid"])
    merged = merged_tasks(git_repo)
    again = subprocess.run([*RALPH, *args], cwd=git_repo, env=ralph_env(),
                           capture_output=True, text=True, timeout=240)
    said = again.stdout + again.stderr
    assert again.returncode == 0, said
    assert merged_tasks(git_repo) == ["alpha", "beta", "gamma"], said
    before = [line.split()[2].rstrip(":") for line in again.stdout.splitlines()
              if line.endswith(": merged before")]
    assert (before, merged) == ((["alpha", "beta"], ["alpha", "beta"]) if working == 3
                                else ([], [])), said
    assert "every sub-workflow succeeded and was merged" in said
    assert [call["overlap"] for call in claude.calls] == [False] * 4  # each task once more
    assert project_status(git_repo) == ""


# `ralph resume` of a headless loop, killed at each step of its writes ------------------------
# Write steps of `ralph resume --claude-bin NEW`: 1-4 the state's save, then any more. The
# first kill after the save's rename (3) always runs; every step with `-m slow`.

def _limited_run(root: Path, tmp_path: Path) -> Path:
    """A headless loop ended at its cap (resumable), whose CLI is gone since; the copy of
    its state folder to start each kill from."""
    old = FakeClaude(tmp_path / "old", [{"events": s.reply_events("Started.")}])
    done = subprocess.run([*RALPH, "run", "--claude-bin", str(old.path), "Work",
                           "--completion-promise", "DONE", "--max-iterations", "1"],
                          cwd=root, env=ralph_env(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr  # the cap: resumable
    old.path.unlink()
    saved = tmp_path / "saved"
    shutil.copytree(root / ".claude" / "ralph", saved)
    return saved


def _resume_killed_then_again(root: Path, tmp_path: Path, saved: Path, step: int) -> None:
    own = root / ".claude" / "ralph"
    shutil.rmtree(own)
    shutil.copytree(saved, own)
    new = FakeClaude(tmp_path / f"new-{step}",
                     [{"events": s.reply_events("Done.\n<promise>DONE</promise>")}] * 2)
    killed = subprocess.run([*RALPH, "resume", "--claude-bin", str(new.path)], cwd=root,
                            env=ralph_env(FINESSE_FAULT_DIE_AFTER_WRITE_STEP=str(step)),
                            capture_output=True, text=True, timeout=120)
    again = subprocess.run([*RALPH, "resume", "--claude-bin", str(new.path)], cwd=root,
                           env=ralph_env(), capture_output=True, text=True, timeout=120)
    said = f"killed after write step {step} ({killed.returncode}): {again.stdout}{again.stderr}"
    assert [loop["outcome"] for loop in loop_files(root)] == ["success"], said
    assert len(new.calls) == 1, said


@pytest.mark.parametrize("step", [3])
def test_a_headless_resume_killed_after_its_save_goes_on_with_the_cli_it_was_given(
        git_repo: Path, tmp_path: Path, step: int) -> None:
    saved = _limited_run(git_repo, tmp_path)
    _resume_killed_then_again(git_repo, tmp_path, saved, step)


@pytest.mark.slow
def test_a_headless_resume_killed_at_every_write_step(git_repo: Path, tmp_path: Path) -> None:
    saved = _limited_run(git_repo, tmp_path)
    for step in range(1, 9):
        _resume_killed_then_again(git_repo, tmp_path, saved, step)


@linux_only
def test_a_run_picked_up_after_its_kill_runs_the_cli_resume_was_given(
        git_repo: Path, tmp_path: Path, survivors: list[int]) -> None:
    # `ralph run` killed; its CLI is gone since (upgraded, moved): `ralph resume --claude-bin
    # NEW` picks the loop up, and must run NEW, not end the loop blocked on the old one.
    marker = tmp_path / "started"
    old = FakeClaude(tmp_path / "old", [
        {"events": [s.init()], "touch": str(marker), "sleep": 120}])
    process = start_ralph(git_repo, "run", "--claude-bin", str(old.path), "Work",
                          "--completion-promise", "DONE")
    kill_when_started(process, marker)
    (call,) = old.calls
    survivors.append(call["pid"])
    wait_for(lambda: gone(call["pid"]), "the agent ended with its ralph run")
    old.path.unlink()
    new = FakeClaude(tmp_path / "new", [
        {"events": s.reply_events("Done.\n<promise>DONE</promise>")}])
    resumed = subprocess.run([*RALPH, "resume", "--claude-bin", str(new.path)], cwd=git_repo,
                             env=ralph_env(), capture_output=True, text=True, timeout=120)
    said = resumed.stdout + resumed.stderr
    assert "Picking up Ralph run" in said, said
    assert [loop["outcome"] for loop in loop_files(git_repo)] == ["success"], said
    assert len(new.calls) == 1, said
