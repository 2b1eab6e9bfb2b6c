"""Kill sweeps: `ralph run` (a headless loop, plain and in gate mode) and `ralph run --graph`
SIGKILLed right after each of their git calls in turn (tests/helpers/faults.py), then resumed
(`ralph resume`) or run again, against the fake `claude` (tests/helpers/streams.py). After each
kill the invariants hold: one agent at a time (each fake agent says whether another still ran
when it started), no user file lost or changed, git usable (no lock left, HEAD on its branch),
every loop file parses, the work done in the end, and no sub-workflow counted merged that was
not merged before the run again began. A few kill points always run; every one with
`-m slow`, two at a time, each in a copy of the prepared project (tests/helpers/sweeps.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import streams as s
from tests.helpers.faults import FaultyGit
from tests.helpers.graphs import PROMISE, write_plan
from tests.helpers.graphs import workflow as graph_workflow
from tests.helpers.repo import git, project_status, write
from tests.helpers.streams import FakeClaude
from tests.helpers.sweeps import fresh_copy, run_points, worker_slot
from tests.unit.headless.test_kills import (
    RALPH,
    gone,
    kill_when_started,
    merged_tasks,
    ralph_env,
    start_ralph,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the faulty git reads its caller from /proc")

# How many git calls each uninterrupted run makes is counted by the run itself (`calls`);
# these are the kill points that always run, as fractions of that count.
SLICE = (0.0, 0.5, 1.0)
MODES = {
    "plain": ("--verify", "test -f out.txt"),
    "gate": ("--gate", "test -f out.txt", "--allow-dirty", "--verify", "test -f out.txt"),
}
USER_FILES = {"mine.txt": "the user's own, untracked\n", "notes/keep.md": "kept\n"}


def agent_script() -> list[dict[str, Any]]:
    """Iteration 1 leaves work half done; every later iteration finishes it."""
    return [{"events": s.reply_events("Started."), "write": {"a.txt": "a\n"}}] + [
        {"events": s.reply_events("Done.\n<promise>DONE</promise>"),
         "write": {"out.txt": "made\n"}}] * 6


def git_env(faulty: FaultyGit, kill_at: int | None) -> dict[str, str]:
    return faulty.env(ralph_env(), kill_at=kill_at or 0, who="ralph.py")


def loop_records(root: Path) -> list[dict[str, Any]]:
    """Every loop file of the project, each parsed (a file that does not parse fails)."""
    folder = root / ".claude" / "ralph"
    return [json.loads(path.read_text()) for path in sorted(folder.rglob("*.json"))
            if {"loops", "history"} & set(path.parts)]


def check_git(root: Path, branch: str = "main") -> None:
    assert not (root / ".git" / "index.lock").exists()
    assert subprocess.run(["git", "status", "--porcelain"], cwd=root,
                          capture_output=True).returncode == 0
    assert git(root, "symbolic-ref", "--short", "HEAD") == branch


def check_agents(claude: FakeClaude) -> None:
    calls = claude.calls
    assert [call["overlap"] for call in calls] == [False] * len(calls)
    assert all(gone(call["pid"]) for call in calls)


def headless_once(root: Path, tmp: Path, mode: str, kill_at: int | None) -> int:
    """One headless run killed after git call `kill_at`, then resumed; the calls it made
    (the count of the whole uninterrupted run when `kill_at` is None)."""
    for name, text in USER_FILES.items():
        write(root, name, text)
    claude = FakeClaude(tmp / "bin", agent_script())
    faulty = FaultyGit(tmp / "git")
    args = ["run", "--claude-bin", str(claude.path), "Make out.txt", "--completion-promise",
            "DONE", *MODES[mode]]
    first = subprocess.run([*RALPH, *args], cwd=root, env=git_env(faulty, kill_at),
                           capture_output=True, text=True, timeout=120)
    calls = len(faulty.calls)
    if kill_at is None:
        assert first.returncode == 0, first.stdout + first.stderr
    else:
        assert faulty.killed and first.returncode == -9, first.stdout + first.stderr
        records = loop_records(root)
        active = [loop for loop in records if loop.get("ended_at") is None]
        # Killed before the loop existed, the run is simply run again; a loop left active is
        # resumed; one that had ended is done.
        redo = ["resume"] if active else [] if records else args
        if redo:
            again = subprocess.run([*RALPH, *redo], cwd=root, env=ralph_env(),
                                   capture_output=True, text=True, timeout=120)
            assert again.returncode == 0, (faulty.killed, again.stdout + again.stderr)
    records = loop_records(root)
    assert [loop["outcome"] for loop in records] == ["success"], (faulty.killed, records)
    assert (root / "out.txt").read_text() == "made\n"
    for name, text in USER_FILES.items():
        assert (root / name).read_text() == text, (faulty.killed, name)
    assert git(root, "show", "HEAD:README.md") == "project"
    check_git(root)
    check_agents(claude)
    status = subprocess.run([*RALPH, "status"], cwd=root, env=ralph_env(),
                            capture_output=True, text=True, timeout=60)
    assert status.returncode == 0, status.stdout + status.stderr
    return calls


def kill_points(total: int, every: bool) -> list[int]:
    return list(range(1, total + 1)) if every else sorted(
        {max(1, round(total * share)) for share in SLICE})


def fresh_project(tmp: Path, name: str) -> Path:
    root = tmp / name
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "README.md", "project\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    return root


def headless_point(base: Path, mode: str, kill_at: int) -> str:
    """One kill point, in this worker's copy of a fresh project: the call it was killed after."""
    def build(work: Path) -> None:
        work.mkdir()
        fresh_project(work, "project")

    work = fresh_copy(worker_slot(base), build)
    headless_once(work / "project", work, mode, kill_at)
    return (work / "git" / "killed").read_text().strip()


def sweep_headless(tmp_path: Path, mode: str, every: bool) -> dict[int, str]:
    total = headless_once(fresh_project(tmp_path, "calibrate"), tmp_path / "c", mode, None)
    assert total > 0
    points = kill_points(total, every)
    return dict(zip(points, run_points(headless_point, [(tmp_path, mode, kill_at)
                                                        for kill_at in points]), strict=True))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_headless_run_killed_after_some_git_calls_resumes_whole(
    tmp_path: Path, mode: str
) -> None:
    swept = sweep_headless(tmp_path, mode, every=False)
    assert len(swept) == len(SLICE)


@pytest.mark.slow
@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_headless_run_killed_after_each_git_call_resumes_whole(
    tmp_path: Path, mode: str
) -> None:
    swept = sweep_headless(tmp_path, mode, every=True)
    print(f"headless {mode}: {len(swept)} kill points swept")


# A graph of three tasks in two waves: two worktrees added, run and merged in one wave (a
# kill between the two merges), then a wave that needs both merged. (Two tasks, one a wave,
# would sweep in two thirds of the time, but without a wave of two.)
THREE_TASKS = (("alpha", ()), ("beta", ()), ("gamma", ("alpha", "beta")))
Tasks = tuple[tuple[str, tuple[str, ...]], ...]


def graph_project(tmp: Path, name: str, tasks: Tasks) -> Path:
    root = fresh_project(tmp, name)
    write_plan(root, "demo", [graph_workflow(task, list(needs)) for task, needs in tasks])
    return root


def graph_once(root: Path, tmp: Path, tasks: Tasks, kill_at: int | None) -> int:
    """The graph of `tasks` (planned in `root`) killed after git call `kill_at`, then run
    again; the calls it made (the count of the whole uninterrupted run when `kill_at` is
    None)."""
    for name, text in USER_FILES.items():
        write(root, name, text)
    claude = FakeClaude(tmp / "bin", [
        {"events": s.reply_events(f"Done.\n<promise>{PROMISE}</promise>"),
         "write": {"{cwd_name}/done.txt": "done\n"}}] * 8)
    faulty = FaultyGit(tmp / "git")
    args = ["run", "--claude-bin", str(claude.path), "--graph", "finesse-plans/demo",
            "--jobs", "1", "--json"]
    first = subprocess.run([*RALPH, *args], cwd=root, env=git_env(faulty, kill_at),
                           capture_output=True, text=True, timeout=240)
    calls = len(faulty.calls)
    if kill_at is None:
        assert first.returncode == 0, first.stdout + first.stderr
    else:
        assert faulty.killed and first.returncode == -9, first.stdout + first.stderr
        merged = set(merged_tasks(root))
        again = subprocess.run([*RALPH, *args], cwd=root, env=ralph_env(),
                               capture_output=True, text=True, timeout=240)
        assert again.returncode == 0, (faulty.killed, again.stdout + again.stderr)
        report = json.loads(again.stdout)
        counted = {row["name"] for row in report["workflows"]
                   if row["outcome"] == "merged before"}
        assert counted <= merged, (faulty.killed, counted, merged)
    assert merged_tasks(root) == sorted(task for task, _ in tasks), faulty.killed
    for name, text in USER_FILES.items():
        assert (root / name).read_text() == text, (faulty.killed, name)
    check_git(root)
    check_agents(claude)
    loop_records(root)
    assert project_status(root) == "?? mine.txt\n?? notes/keep.md", faulty.killed
    return calls


def graph_point(base: Path, tasks: Tasks, kill_at: int) -> str:
    """One kill point, in this worker's copy of the planned project: the call it was killed
    after."""
    def build(work: Path) -> None:
        work.mkdir()
        graph_project(work, "project", tasks)

    work = fresh_copy(worker_slot(base), build)
    graph_once(work / "project", work, tasks, kill_at)
    return (work / "git" / "killed").read_text().strip()


def sweep_graph(tmp_path: Path, tasks: Tasks, every: bool) -> dict[int, str]:
    total = graph_once(graph_project(tmp_path, "calibrate", tasks), tmp_path / "c", tasks, None)
    assert total > 0
    points = kill_points(total, every)
    return dict(zip(points, run_points(graph_point, [(tmp_path, tasks, kill_at)
                                                     for kill_at in points]), strict=True))


def test_a_graph_run_killed_after_some_git_calls_runs_again_whole(tmp_path: Path) -> None:
    swept = sweep_graph(tmp_path, THREE_TASKS, every=False)
    assert len(swept) == len(SLICE)


@pytest.mark.slow
def test_a_graph_run_killed_after_each_git_call_runs_again_whole(tmp_path: Path) -> None:
    swept = sweep_graph(tmp_path, THREE_TASKS, every=True)
    print(f"graph: {len(swept)} kill points swept")


def test_the_faulty_git_kills_only_its_ralph(tmp_path: Path) -> None:
    # The sweeps would pass vacuously if no kill happened, and must never kill anyone else.
    faulty = FaultyGit(tmp_path / "git")
    env = faulty.env(dict(os.environ), kill_at=1, who="ralph.py")
    done = subprocess.run([sys.executable, "-c", "import subprocess; "
                           "subprocess.run(['git', '--version'])"], env=env, timeout=60)
    assert (done.returncode, faulty.calls, faulty.killed) == (0, ["--version"], [])
    faulty.reset()
    script = tmp_path / "ralph.py"
    script.write_text("import subprocess, time; subprocess.run(['git', '--version']); "
                      "time.sleep(30)")
    done = subprocess.run([sys.executable, str(script)], env=env, timeout=60)
    assert (done.returncode, faulty.killed) == (-9, ["1 --version"])


def agent_killed_once(root: Path, tmp: Path, mode: str, iteration: int) -> None:
    """`ralph run` killed while the agent of `iteration` works, an agent that ignores SIGTERM
    (so it outlives its `ralph run` even on Linux), then resumed: the resumed loop ends it
    before it starts another."""
    for name, text in USER_FILES.items():
        write(root, name, text)
    marker = tmp / "started"
    script = agent_script()
    script[iteration - 1] = {"events": [s.init()], "touch": str(marker), "sleep": 120,
                             "ignore_term": True}
    claude = FakeClaude(tmp / "bin", script)
    process = start_ralph(root, "run", "--claude-bin", str(claude.path), "Make out.txt",
                          "--completion-promise", "DONE", *MODES[mode])
    try:
        kill_when_started(process, marker)
        again = subprocess.run([*RALPH, "resume"], cwd=root, env=ralph_env(),
                               capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "ended the agent (claude pid" in again.stdout
        check_agents(claude)
    finally:
        for call in claude.calls:
            if not gone(call["pid"]):
                os.kill(call["pid"], signal.SIGKILL)
    assert [loop["outcome"] for loop in loop_records(root)] == ["success"]
    for name, text in USER_FILES.items():
        assert (root / name).read_text() == text
    check_git(root)


def test_a_run_killed_while_its_second_agent_works_resumes_with_one_agent(
    tmp_path: Path
) -> None:
    agent_killed_once(fresh_project(tmp_path, "project"), tmp_path, "gate", 2)


@pytest.mark.slow
@pytest.mark.parametrize("iteration", [1, 2])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_run_killed_while_each_agent_works_resumes_with_one_agent(
    tmp_path: Path, mode: str, iteration: int
) -> None:
    agent_killed_once(fresh_project(tmp_path, "project"), tmp_path, mode, iteration)


def test_a_run_killed_half_way_through_a_revert_finishes_it_before_the_next_agent(
        tmp_path: Path) -> None:
    """`ralph run` killed after a revert's `git restore`, before the iteration's new files
    are removed: picked up, it finishes the revert before an agent works again. (It started
    the agent on the half-reverted tree and then finished the revert over the agent's new
    work, which was removed without the gate ever seeing it.)"""
    root = fresh_project(tmp_path, "project")
    claude = FakeClaude(tmp_path / "bin", [
        {"events": s.reply_events("Started."),
         "write": {"README.md": "changed\n", "broken.txt": "red\n"}},
        {"events": s.reply_events("Trying."), "write": {"red_new.txt": "red too\n"}},
        {"events": s.reply_events("Fresh work.\n<promise>DONE</promise>"),
         "write": {"first.txt": "the resumed agent's work\n"}},
        {"events": s.reply_events("Again.\n<promise>DONE</promise>"),
         "write": {"second.txt": "later work\n"}},
    ])
    faulty = FaultyGit(tmp_path / "git")
    first = subprocess.run(
        [*RALPH, "run", "--claude-bin", str(claude.path), "Work", "--completion-promise",
         "DONE", "--gate", "test ! -e broken.txt", "--max-iterations", "6"],
        cwd=root, env=faulty.env(ralph_env(), kill_on="restore", who="ralph.py"),
        capture_output=True, text=True, timeout=120)
    assert first.returncode == -9 and faulty.killed, first.stdout + first.stderr
    assert (root / "red_new.txt").exists()  # half reverted
    again = subprocess.run([*RALPH, "resume"], cwd=root, env=ralph_env(),
                           capture_output=True, text=True, timeout=120)
    said = again.stdout + again.stderr
    assert [loop["outcome"] for loop in loop_records(root)] == ["success"], said
    assert (root / "first.txt").exists(), said  # never removed unseen by the gate
    assert git(root, "show", "HEAD:first.txt") == "the resumed agent's work", said
    assert git(root, "show", "HEAD:README.md") == "project"
    committed = git(root, "log", "--format=", "--name-only", "HEAD").split()
    assert "broken.txt" not in committed and "red_new.txt" not in committed
    check_git(root)
    check_agents(claude)
