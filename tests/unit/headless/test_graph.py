"""The graph scheduler on real temporary repositories, its loops replaced by a fake that
writes files in its worktree and ends as it is told: dependencies, jobs, failures, the merge
order, conflicts, hooks that fail a merge, and a run picked up again after a stop."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from finesse.authoring.workflows.folder import LoadedGraph, load_execution_graph
from finesse.errors import UsageError
from finesse.headless import graph_report, worktrees
from finesse.headless.child import Cancel
from finesse.headless.graph import GraphRun, prepare, run_graph
from finesse.headless.subworkflow import Task
from finesse.models import IterationRecord, LoopState
from tests.helpers.graphs import workflow, write_plan
from tests.helpers.repo import branch, branches, git, status, write
from tests.helpers.states import T0, T1, make_state


@dataclass
class FakeLoops:
    """Instead of `claude -p` loops: each task writes `writes[name]` in its project (and
    checks `expects[name]` are there), then ends with `outcomes[name]` (success if absent)."""

    writes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    outcomes: Mapping[str, str] = field(default_factory=dict)
    expects: Mapping[str, list[str]] = field(default_factory=dict)
    pause: float = 0.0
    seen: list[str] = field(default_factory=list)
    worktrees: dict[str, Path] = field(default_factory=dict)
    running: int = 0
    most: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    hook: Callable[[Task, Cancel], None] | None = None

    def __call__(self, task: Task, cancel: Cancel) -> LoopState:
        name = task.workflow.name
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.seen.append(name)
            self.worktrees[name] = task.worktree
        try:
            missing = [f for f in self.expects.get(name, []) if not (task.project / f).exists()]
            assert missing == [], f"{name} does not see {missing}"
            for path, text in self.writes.get(name, {name + "/done.txt": "done\n"}).items():
                write(task.project, path, text)
            if self.hook is not None:
                self.hook(task, cancel)
            time.sleep(self.pause)
            worktrees.commit_leftovers(task.worktree, name)
        finally:
            with self.lock:
                self.running -= 1
        outcome = self.outcomes.get(name, "success")
        entry = IterationRecord(number=1, started_at=T0, ended_at=T1, result=outcome)
        return make_state(task.project, session_id=str(uuid.uuid4()), outcome=outcome,
                          verified=outcome == "success", ended_at=T1, iterations=[entry])


def plan(root: Path, *flows: dict[str, object], session: str = "demo") -> LoadedGraph:
    return load_execution_graph(write_plan(root, session, flows))


def run(root: Path, loaded: LoadedGraph, loops: FakeLoops, jobs: int = 2,
        cancel: Cancel | None = None) -> GraphRun:
    said: list[str] = []
    done = run_graph(prepare(root, loaded), loaded, [], loops, jobs=jobs,
                     cancel=cancel or Cancel(), say=said.append)
    return done


def first_parent(root: Path) -> list[str]:
    return git(root, "log", "--first-parent", "--format=%s").splitlines()


def tracked_changes(root: Path) -> str:
    """Changes to tracked files (the kept worktrees are untracked folders)."""
    return git(root, "status", "--porcelain", "--untracked-files=no")


def rows(done: GraphRun) -> list[tuple[str, str, bool]]:
    return [(row.name, row.outcome, row.merge_commit is not None) for row in done.rows]


THREE = (workflow("alpha"), workflow("beta"), workflow("gamma", ["alpha", "beta"]))


def test_two_waves_merge_in_the_graphs_order_and_wave_two_sees_the_merged_result(
    git_repo: Path
) -> None:
    loaded = plan(git_repo, *THREE)
    loops = FakeLoops(expects={"gamma": ["alpha/done.txt", "beta/done.txt"]})
    done = run(git_repo, loaded, loops)
    assert rows(done) == [("alpha", "success (verified)", True),
                          ("beta", "success (verified)", True),
                          ("gamma", "success (verified)", True)]
    assert (done.stopped, done.conflicts, done.exit_code) == ("", [], 0)
    assert first_parent(git_repo) == [
        "ralph: merge gamma (wave 2 of demo)", "ralph: merge beta (wave 1 of demo)",
        "ralph: merge alpha (wave 1 of demo)", "plan demo", "initial"]
    assert git(git_repo, "log", "-1", "--format=%s", "ralph/demo/gamma") == (
        "ralph: gamma: the work left uncommitted at its end")
    assert sorted(git(git_repo, "ls-files", "alpha", "beta", "gamma").split()) == [
        "alpha/done.txt", "beta/done.txt", "gamma/done.txt"]
    assert len(set(loops.worktrees.values())) == 3
    assert all(not path.exists() for path in loops.worktrees.values())
    assert not (git_repo / worktrees.WORKTREES).exists()
    assert {name for name in branches(git_repo)} == {
        "main", "ralph/demo/alpha", "ralph/demo/beta", "ralph/demo/gamma"}
    assert (branch(git_repo), status(git_repo)) == ("main", "")


def test_the_merge_commits_come_in_the_graphs_order_whatever_order_the_loops_end(
    git_repo: Path
) -> None:
    loaded = plan(git_repo, workflow("alpha"), workflow("beta"))

    def slow_alpha(task: Task, cancel: Cancel) -> None:
        if task.workflow.name == "alpha":
            time.sleep(0.5)

    run(git_repo, loaded, FakeLoops(hook=slow_alpha))
    assert first_parent(git_repo)[:2] == ["ralph: merge beta (wave 1 of demo)",
                                          "ralph: merge alpha (wave 1 of demo)"]


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_at_most_jobs_sub_workflows_run_at_once(git_repo: Path, jobs: int) -> None:
    loaded = plan(git_repo, *(workflow(name) for name in ("a1", "a2", "a3", "a4")))
    loops = FakeLoops(pause=0.3)
    done = run(git_repo, loaded, loops, jobs=jobs)
    assert loops.most == jobs and done.exit_code == 0
    assert sorted(loops.seen) == ["a1", "a2", "a3", "a4"]


def test_a_failed_sub_workflow_stops_its_dependents_and_independent_ones_go_on(
    git_repo: Path
) -> None:
    loaded = plan(git_repo, workflow("alpha"), workflow("beta"),
                  workflow("gamma", ["alpha"]), workflow("delta", ["beta"]))
    loops = FakeLoops(outcomes={"alpha": "limit"})
    done = run(git_repo, loaded, loops)
    assert rows(done) == [("alpha", "limit reached", False), ("beta", "success (verified)", True),
                          ("gamma", "skipped", False), ("delta", "success (verified)", True)]
    assert done.row("gamma").note == "depends on alpha, which did not succeed and merge"
    assert (done.stopped, done.exit_code) == ("", 3)
    assert loops.seen.count("gamma") == 0
    assert Path(done.row("alpha").worktree).is_dir()  # kept: not merged
    assert graph_report.verdict(done) == ("ran every wave; some sub-workflows did not succeed "
                                          "(below)")


def test_a_conflict_stops_the_run_before_the_next_wave(git_repo: Path) -> None:
    loaded = plan(git_repo, *THREE)
    before = branches(git_repo)["main"]
    loops = FakeLoops(writes={"alpha": {"shared.txt": "from alpha\n"},
                              "beta": {"shared.txt": "from beta\n"}})
    done = run(git_repo, loaded, loops)
    assert rows(done) == [("alpha", "success (verified)", True),
                          ("beta", "success (verified)", False), ("gamma", "not run", False)]
    assert done.conflicts == ["shared.txt"]
    assert done.stopped == ("merging ralph/demo/beta into main failed (conflicts in shared.txt); "
                            "every branch is left as it is")
    assert done.row("beta").note == ("merge failed and was undone: conflicts in shared.txt")
    assert done.row("gamma").note.startswith("not run: merging ralph/demo/beta into main")
    assert (done.exit_code, "gamma" in loops.seen) == (1, False)
    assert (tracked_changes(git_repo), branch(git_repo)) == ("", "main")
    assert git(git_repo, "rev-parse", "HEAD^1") == before  # only alpha's merge went in
    assert (git_repo / "shared.txt").read_text() == "from alpha\n"
    assert set(branches(git_repo)) == {"main", "ralph/demo/alpha", "ralph/demo/beta"}
    assert Path(done.row("beta").worktree).is_dir()
    report = graph_report.render(done, loaded.task)
    assert "- Conflicting files: `shared.txt`" in report
    assert "| 1 | beta | success (verified) | 1 | 0 | `ralph/demo/beta` | - |" in report


def test_a_hook_that_fails_the_merge_is_undone_and_stops_the_run(git_repo: Path) -> None:
    # Hostile world: prepare-commit-msg runs even with --no-verify; this one refuses merges.
    loaded = plan(git_repo, *THREE)
    hook = git_repo / ".git" / "hooks" / "prepare-commit-msg"
    hook.write_text('#!/bin/sh\n[ "$2" = merge ] && { echo "no merges here" >&2; exit 1; }\n'
                    "exit 0\n")
    hook.chmod(0o755)
    before = branches(git_repo)["main"]
    done = run(git_repo, loaded, FakeLoops())
    assert rows(done) == [("alpha", "success (verified)", False),
                          ("beta", "success (verified)", False), ("gamma", "not run", False)]
    assert done.row("alpha").note.startswith(
        f"merge failed and was undone: the repository's prepare-commit-msg hook {hook} rejected "
        "the merge commit")
    assert (done.conflicts, done.exit_code) == ([], 1)
    assert (branches(git_repo)["main"], tracked_changes(git_repo)) == (before, "")
    assert not (git_repo / ".git" / "MERGE_HEAD").exists()


def test_a_project_that_ignores_claude_and_the_worktrees_runs_the_same(git_repo: Path) -> None:
    write(git_repo, ".gitignore", ".claude/\n.ralph-worktrees/\n")
    git(git_repo, "add", ".gitignore")
    git(git_repo, "commit", "-q", "-m", "ignore")
    done = run(git_repo, plan(git_repo, *THREE), FakeLoops())
    assert (done.exit_code, [row.merge_commit is not None for row in done.rows]) == (
        0, [True, True, True])


def test_a_graph_in_a_monorepo_project_works_inside_the_project(monorepo: Path) -> None:
    # The worktree checks out the whole repository; each loop works in its `pkg/`.
    top = monorepo.parent
    loops = FakeLoops(expects={"gamma": ["alpha/done.txt", "beta/done.txt"]})
    done = run(monorepo, plan(monorepo, *THREE), loops)
    assert rows(done) == [("alpha", "success (verified)", True),
                          ("beta", "success (verified)", True),
                          ("gamma", "success (verified)", True)]
    assert sorted(git(top, "ls-files", "alpha", "beta", "gamma", "pkg/alpha", "pkg/beta",
                      "pkg/gamma").split()) == [
        "pkg/alpha/done.txt", "pkg/beta/done.txt", "pkg/gamma/done.txt"]
    assert (branch(top), status(top)) == ("main", "")


def test_a_run_again_counts_merged_branches_as_done(git_repo: Path) -> None:
    loaded = plan(git_repo, *THREE)
    loops = FakeLoops(writes={"alpha": {"shared.txt": "a\n"}, "beta": {"shared.txt": "b\n"}})
    first = run(git_repo, loaded, loops)
    assert first.conflicts == ["shared.txt"]
    # The person merges beta by hand, then runs the graph again: only gamma is left.
    git(git_repo, "merge", "-q", "ralph/demo/beta", "-m", "merge beta", "-X", "theirs")
    git(git_repo, "worktree", "remove", "--force", first.row("beta").worktree)
    again = FakeLoops()
    done = run(git_repo, loaded, again)
    assert rows(done) == [("alpha", "merged before", False), ("beta", "merged before", False),
                          ("gamma", "success (verified)", True)]
    assert (again.seen, done.exit_code) == (["gamma"], 0)


def test_a_branch_of_the_graph_that_is_not_merged_is_refused(git_repo: Path) -> None:
    loaded = plan(git_repo, *THREE)
    git(git_repo, "branch", "ralph/demo/beta")
    write(git_repo, "other.txt", "x\n")
    git(git_repo, "add", "other.txt")
    git(git_repo, "commit", "-q", "-m", "moved on")
    git(git_repo, "switch", "-q", "ralph/demo/beta")
    write(git_repo, "beta.txt", "x\n")
    git(git_repo, "add", "beta.txt")
    git(git_repo, "commit", "-q", "-m", "unmerged")
    git(git_repo, "switch", "-q", "main")
    with pytest.raises(UsageError, match=r"^ralph/demo/beta already exist\(s\) and are not "
                                         r"merged into main: merge them"):
        prepare(git_repo, loaded)


@pytest.mark.parametrize(("setup", "message"), [
    (lambda root: write(root, "README.md", "changed\n"),
     r"--graph merges into main and README.md has uncommitted changes: commit or stash them"),
    (lambda root: git(root, "switch", "-q", "--detach"),
     r"--graph merges each wave into the branch it starts on and HEAD is detached at "),
])
def test_a_project_that_cannot_hold_a_graph_run_is_refused(
    git_repo: Path, setup: Callable[[Path], object], message: str
) -> None:
    loaded = plan(git_repo, *THREE)
    setup(git_repo)
    with pytest.raises(UsageError, match=message):
        prepare(git_repo, loaded)


def test_outside_git_a_graph_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"--graph needs a git repository and .* is not in one"):
        worktrees.starting_point(tmp_path)


def test_a_cancel_stops_the_run_before_any_merge(git_repo: Path) -> None:
    loaded = plan(git_repo, *THREE)
    cancel = Cancel()

    def interrupt(task: Task, given: Cancel) -> None:
        given.request("SIGTERM", 15)

    before = branches(git_repo)["main"]
    done = run(git_repo, loaded, FakeLoops(hook=interrupt), cancel=cancel)
    assert (done.stopped, done.exit_code) == ("cancelled by SIGTERM", 143)
    assert branches(git_repo)["main"] == before
    assert done.row("gamma").note == "not run: cancelled by SIGTERM"


def test_the_graph_report_has_a_row_per_sub_workflow(git_repo: Path) -> None:
    loaded = plan(git_repo, *THREE)
    done = run(git_repo, loaded, FakeLoops(outcomes={"beta": "blocked"}))
    data = graph_report.as_dict(done, loaded.task)
    assert [(w["name"], w["wave"], w["outcome"], w["verified"], w["iterations"], w["branch"],
             w["merge_commit"] is not None) for w in data["workflows"]] == [
        ("alpha", 1, "success (verified)", True, 1, "ralph/demo/alpha", True),
        ("beta", 1, "blocked", False, 1, "ralph/demo/beta", False),
        ("gamma", 2, "skipped", None, 0, "ralph/demo/gamma", False)]
    assert (data["exit_code"], data["branch"], data["stopped"]) == (1, "main", "")


class Died(BaseException):
    """The run killed in the middle of wave 1 (nothing after it runs, as after a SIGKILL)."""


def test_a_wave_that_was_interrupted_is_run_again_not_counted_merged(git_repo: Path) -> None:
    # Issue 19, point 5: wave 1's branches, made at the start commit, looked merged.
    loaded = plan(git_repo, *THREE)

    def die(task: Task, cancel: Cancel) -> None:
        raise Died

    with pytest.raises(Died):
        run(git_repo, loaded, FakeLoops(hook=die), jobs=1)
    assert {"ralph/demo/alpha", "ralph/demo/beta"} <= set(branches(git_repo))
    again = FakeLoops()
    done = run(git_repo, loaded, again)
    assert rows(done) == [("alpha", "success (verified)", True),
                          ("beta", "success (verified)", True),
                          ("gamma", "success (verified)", True)]
    assert (sorted(again.seen), done.exit_code) == (["alpha", "beta", "gamma"], 0)
    assert sorted(git(git_repo, "ls-files", "alpha", "beta", "gamma").split()) == [
        "alpha/done.txt", "beta/done.txt", "gamma/done.txt"]
    # And once merged, a third run counts each as merged before, by its recorded merge.
    third = FakeLoops()
    done = run(git_repo, loaded, third)
    assert [row.outcome for row in done.rows] == ["merged before"] * 3
    assert third.seen == []


def test_a_branch_merged_by_hand_counts_as_merged_without_a_record(git_repo: Path) -> None:
    loaded = plan(git_repo, *THREE)
    git(git_repo, "switch", "-q", "-c", "ralph/demo/alpha")
    write(git_repo, "alpha/done.txt", "by hand\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "alpha by hand")
    git(git_repo, "switch", "-q", "main")
    git(git_repo, "merge", "-q", "--no-ff", "-m", "merge alpha", "ralph/demo/alpha")
    git(git_repo, "branch", "ralph/demo/beta", "HEAD~1")  # made, holding nothing of its own
    with pytest.raises(UsageError, match=r"^ralph/demo/beta already exist"):
        prepare(git_repo, loaded)
    git(git_repo, "branch", "-D", "ralph/demo/beta")
    graph = prepare(git_repo, loaded)
    assert [row.outcome for row in graph.rows] == ["merged before", "not run", "not run"]


def test_a_merge_of_the_graph_left_unfinished_is_undone_and_no_other(git_repo: Path) -> None:
    # A run killed between a merge that conflicted and its `git merge --abort`.
    loaded = plan(git_repo, *THREE)
    git(git_repo, "switch", "-q", "-c", "side")
    write(git_repo, "README.md", "side\n")
    git(git_repo, "commit", "-q", "-am", "side")
    git(git_repo, "switch", "-q", "main")
    write(git_repo, "README.md", "main\n")
    git(git_repo, "commit", "-q", "-am", "main")
    write(git_repo, "mine.txt", "the user's\n")

    def conflicted(message: str) -> None:
        merging = subprocess.run(["git", "merge", "--no-ff", "-m", message, "side"],
                                 cwd=git_repo, capture_output=True)
        assert merging.returncode != 0

    conflicted(worktrees.merge_message("alpha", 1, "other"))  # another graph's: left alone
    with pytest.raises(UsageError, match=r"README\.md has uncommitted changes"):
        prepare(git_repo, loaded)
    git(git_repo, "merge", "--abort")
    conflicted(worktrees.merge_message("alpha", 1, "demo"))
    graph = prepare(git_repo, loaded)
    assert graph.recovered == ("undid the unfinished merge 'ralph: merge alpha (wave 1 of "
                               "demo)' a stopped run left")
    assert (status(git_repo), (git_repo / "mine.txt").read_text()) == (
        "?? mine.txt\n", "the user's\n")


def test_an_unreadable_progress_record_is_moved_aside_and_the_run_goes_on(
    git_repo: Path
) -> None:
    from finesse.headless import graph_progress

    loaded = plan(git_repo, *THREE)
    record = graph_progress.progress_path(git_repo, "demo")
    record.parent.mkdir(parents=True)
    record.write_bytes(b"\xff{ not json")
    done = run(git_repo, loaded, FakeLoops())
    assert (done.exit_code, [row.outcome for row in done.rows]) == (
        0, ["success (verified)"] * 3)
    assert record.with_name("demo.json.unreadable").read_bytes() == b"\xff{ not json"
    assert set(json.loads(record.read_text())["tasks"]) == {"alpha", "beta", "gamma"}


def test_a_run_stopped_between_a_merge_and_its_worktrees_removal_removes_it_next_time(
    git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = plan(git_repo, *THREE)
    removed = worktrees.remove_worktree

    def die(root: Path, path: Path) -> str:
        raise Died

    monkeypatch.setattr(worktrees, "remove_worktree", die)
    with pytest.raises(Died):
        run(git_repo, loaded, FakeLoops())
    monkeypatch.setattr(worktrees, "remove_worktree", removed)
    assert (git_repo / worktrees.WORKTREES / "demo" / "alpha").is_dir()
    again = FakeLoops()
    done = run(git_repo, loaded, again)
    assert [row.outcome for row in done.rows] == [
        "merged before", "success (verified)", "success (verified)"]
    assert (again.seen, done.exit_code) == (["beta", "gamma"], 0)
    assert not (git_repo / worktrees.WORKTREES).exists()
    assert status(git_repo) == ""


def test_a_branch_of_the_graph_whose_worktree_was_removed_gets_it_back(git_repo: Path) -> None:
    loaded = plan(git_repo, *THREE)

    def die(task: Task, cancel: Cancel) -> None:
        raise Died

    with pytest.raises(Died):
        run(git_repo, loaded, FakeLoops(hook=die), jobs=1)
    alpha = git_repo / worktrees.WORKTREES / "demo" / "alpha"
    write(alpha, "alpha/half.txt", "half done\n")
    git(alpha, "add", "-A")
    git(alpha, "commit", "-q", "-m", "half of alpha")
    git(git_repo, "worktree", "remove", "--force", str(alpha))
    again = FakeLoops(expects={"alpha": ["alpha/half.txt"]})
    done = run(git_repo, loaded, again)
    assert (done.exit_code, sorted(again.seen)) == (0, ["alpha", "beta", "gamma"])
    assert git(git_repo, "show", "HEAD:alpha/half.txt") == "half done"
