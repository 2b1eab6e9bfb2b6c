"""The steps of a `ralph ci` workflow on real repositories: a bare remote and, per job, a
fresh clone of it, as actions/checkout leaves one. The loops are replaced by what `ralph run
--json` would have printed; the branches, pushes, merges and refusals are git's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finesse.authoring.workflows.folder import LoadedGraph, load_execution_graph
from finesse.errors import UsageError
from finesse.headless.ci import jobs
from finesse.headless.ci.jobs import begin_task, end_task, merge_wave
from finesse.models import IterationRecord
from finesse.schema import to_dict
from tests.helpers.graphs import workflow, write_plan
from tests.helpers.repo import git, write
from tests.helpers.states import T0, T1, make_state

THREE = (workflow("alpha"), workflow("beta"), workflow("gamma", ["alpha", "beta"]))


@pytest.fixture
def remote(git_repo: Path, tmp_path: Path) -> Path:
    write_plan(git_repo, "demo", THREE)
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(git_repo), str(bare))
    return bare


def checkout(remote: Path, where: Path, ref: str = "main", *, branch: bool = False) -> Path:
    """A job's checkout: every branch fetched, `ref` checked out (as a branch or detached)."""
    git(where.parent, "clone", "--quiet", "--no-checkout", str(remote), str(where))
    if branch:
        git(where, "checkout", "--quiet", "-B", ref, f"origin/{ref}")
    else:
        git(where, "checkout", "--quiet", "--detach", git(where, "rev-parse", f"origin/{ref}"))
    return where


def graph(project: Path) -> LoadedGraph:
    return load_execution_graph(project / "finesse-plans" / "demo")


def loop_output(project: Path, path: Path, outcome: str = "success",
                verified: bool = True) -> Path:
    """What `ralph run --json` prints for a loop that ended with `outcome`."""
    report = project / ".claude" / "ralph" / "reports" / "loop.md"
    write(project, str(report.relative_to(project)), "# Ralph loop report\n")
    entry = IterationRecord(number=1, started_at=T0, ended_at=T1, result=outcome)
    state = make_state(project, outcome=outcome, verified=verified, ended_at=T1,
                       iterations=[entry], max_iterations=3, report_path=str(report))
    code = 0 if outcome == "success" and verified else 1
    path.write_text(json.dumps({**to_dict(state), "spend": {}, "exit_code": code}))
    return path


def run_task(remote: Path, tmp_path: Path, name: str, files: dict[str, str],
             outcome: str = "success") -> jobs.End:
    """A sub-workflow's job: begin, the loop's files, end."""
    project = checkout(remote, tmp_path / f"job-{name}")
    assert begin_task(project, graph(project), name).run
    for path, text in files.items():
        write(project, path, text)
    return end_task(project, graph(project), name,
                    loop_output(project, tmp_path / f"{name}.json", outcome),
                    tmp_path / f"keep-{name}")


def remote_branches(remote: Path) -> dict[str, str]:
    listed = git(remote, "for-each-ref", "--format=%(refname:short) %(objectname)")
    return dict(line.split() for line in listed.splitlines())


def test_begin_makes_the_branch_at_the_waves_start(remote: Path, tmp_path: Path) -> None:
    project = checkout(remote, tmp_path / "job")
    start = git(project, "rev-parse", "HEAD")
    begun = begin_task(project, graph(project), "alpha")
    assert (begun.run, begun.branch, begun.note) == (True, "ralph/demo/alpha", "")
    assert git(project, "symbolic-ref", "HEAD") == "refs/heads/ralph/demo/alpha"
    assert git(project, "rev-parse", "HEAD") == start


def test_end_commits_what_the_loop_left_pushes_it_and_keeps_its_files(
    remote: Path, tmp_path: Path
) -> None:
    end = run_task(remote, tmp_path, "alpha", {"alpha/done.txt": "a\n",
                                               ".claude/ralph/loops/x.json": "{}"})
    pushed = remote_branches(remote)["ralph/demo/alpha"]
    assert (end.pushed, end.leftovers, end.problems) == (pushed, pushed, [])
    files = {ref: set(git(remote, "ls-tree", "-r", "--name-only", ref).split())
             for ref in ("main", "ralph/demo/alpha")}
    assert files["ralph/demo/alpha"] - files["main"] == {"alpha/done.txt"}  # no .claude/
    assert files["main"] <= files["ralph/demo/alpha"]
    assert sorted(path.name for path in (tmp_path / "keep-alpha").iterdir()) == [
        "alpha.ralph-run.json", "alpha.report.md"]
    assert end.loop.exit_code == 0 and end.loop.state is not None


def test_a_failed_push_keeps_the_branch_as_a_bundle(remote: Path, tmp_path: Path) -> None:
    project = checkout(remote, tmp_path / "job")
    assert begin_task(project, graph(project), "alpha").run
    write(project, "alpha/done.txt", "a\n")
    git(project, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    end = end_task(project, graph(project), "alpha", loop_output(project, tmp_path / "a.json"),
                   tmp_path / "keep")
    assert end.pushed is None
    assert len(end.problems) == 1 and end.problems[0].startswith(
        "git push origin ralph/demo/alpha failed (")
    assert end.problems[0].endswith("the branch is kept in this job's artifact as "
                                    "alpha.bundle")
    listed = git(project, "bundle", "list-heads", str(tmp_path / "keep" / "alpha.bundle"))
    assert listed.split() == [git(project, "rev-parse", "HEAD"), "refs/heads/ralph/demo/alpha"]


def test_a_branch_already_merged_counts_as_done_and_one_not_merged_is_refused(
    remote: Path, tmp_path: Path
) -> None:
    run_task(remote, tmp_path, "alpha", {"alpha/done.txt": "a\n"})
    merger = checkout(remote, tmp_path / "merge", branch=True)
    reports = tmp_path / "keep-alpha"
    assert merge_wave(merger, graph(merger), 1, reports, {1, 2}).merged != []
    again = checkout(remote, tmp_path / "again")
    assert (begin_task(again, graph(again), "alpha").note) == (
        "merged before: its branch is already merged")
    run_task(remote, tmp_path, "beta", {"beta/done.txt": "b\n"})  # pushed, never merged
    later = checkout(remote, tmp_path / "later")
    with pytest.raises(UsageError, match=r"^origin already has ralph/demo/beta, not merged into "
                                         r"this wave's start: merge it, or delete it \(`git "
                                         r"push origin --delete ralph/demo/beta`\), then run "
                                         r"the workflow again$"):
        begin_task(later, graph(later), "beta")
    assert git(later, "rev-parse", "--abbrev-ref", "HEAD") == "HEAD"  # nothing made


def test_a_task_whose_dependency_did_not_merge_is_skipped(remote: Path, tmp_path: Path) -> None:
    run_task(remote, tmp_path, "alpha", {"alpha/done.txt": "a\n"})
    merger = checkout(remote, tmp_path / "merge", branch=True)
    merge_wave(merger, graph(merger), 1, tmp_path / "keep-alpha", {1, 2})
    project = checkout(remote, tmp_path / "gamma")
    begun = begin_task(project, graph(project), "gamma")
    assert (begun.run, begun.note) == (False, "depends on beta, which did not succeed and merge")


def test_merge_merges_the_successful_branches_in_the_graphs_order(
    remote: Path, tmp_path: Path
) -> None:
    # beta's job ends first; alpha's merge still comes first. A failed loop is not merged.
    run_task(remote, tmp_path, "beta", {"beta/done.txt": "b\n"})
    run_task(remote, tmp_path, "alpha", {"alpha/done.txt": "a\n"})
    reports = tmp_path / "reports"
    reports.mkdir()
    for name in ("alpha", "beta"):
        for kept in (tmp_path / f"keep-{name}").iterdir():
            kept.rename(reports / kept.name)
    merger = checkout(remote, tmp_path / "merge", branch=True)
    done = merge_wave(merger, graph(merger), 1, reports, {1, 2})
    assert [(row.name, row.outcome, row.note) for row in done.rows] == [
        ("alpha", "success (verified)", "merged"), ("beta", "success (verified)", "merged")]
    assert (done.stopped, done.conflicts, done.base) == ("", [], "main")
    assert git(remote, "log", "--first-parent", "--format=%s", "-2", "main").splitlines() == [
        "ralph: merge beta (wave 1 of demo)", "ralph: merge alpha (wave 1 of demo)"]
    assert done.commit == remote_branches(remote)["main"]
    assert [row.merge_commit for row in done.rows] == [
        git(remote, "rev-parse", "main^"), git(remote, "rev-parse", "main")]


def test_a_loop_that_failed_is_not_merged(remote: Path, tmp_path: Path) -> None:
    run_task(remote, tmp_path, "alpha", {"alpha/done.txt": "a\n"}, outcome="blocked")
    before = remote_branches(remote)["main"]
    merger = checkout(remote, tmp_path / "merge", branch=True)
    done = merge_wave(merger, graph(merger), 1, tmp_path / "keep-alpha", {1, 2})
    assert [(row.name, row.outcome, row.note) for row in done.rows] == [
        ("alpha", "blocked", "did not succeed: not merged"),
        ("beta", "not run", "no loop ran (its job's summary says why)")]
    assert (done.stopped, done.commit, remote_branches(remote)["main"]) == ("", before, before)


def test_a_conflict_is_undone_stops_the_merging_and_what_merged_before_is_pushed(
    remote: Path, tmp_path: Path
) -> None:
    run_task(remote, tmp_path, "alpha", {"shared.txt": "alpha\n"})
    run_task(remote, tmp_path, "beta", {"shared.txt": "beta\n"})
    reports = tmp_path / "reports"
    reports.mkdir()
    for name in ("alpha", "beta"):
        for kept in (tmp_path / f"keep-{name}").iterdir():
            kept.rename(reports / kept.name)
    before = remote_branches(remote)["main"]
    merger = checkout(remote, tmp_path / "merge", branch=True)
    done = merge_wave(merger, graph(merger), 1, reports, {1, 2})
    assert done.conflicts == ["shared.txt"]
    assert done.stopped == ("merging ralph/demo/beta into main failed (conflicts in "
                            "shared.txt); every branch is left as it is")
    assert [row.note for row in done.rows] == [
        "merged", "merge failed and was undone: conflicts in shared.txt"]
    assert git(remote, "rev-parse", "main^1") == before
    assert git(remote, "show", "main:shared.txt") == "alpha"
    assert git(merger, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_wave_not_chosen_merges_nothing(remote: Path, tmp_path: Path) -> None:
    run_task(remote, tmp_path, "alpha", {"alpha/done.txt": "a\n"})
    before = remote_branches(remote)["main"]
    merger = checkout(remote, tmp_path / "merge", branch=True)
    done = merge_wave(merger, graph(merger), 1, tmp_path / "keep-alpha", {2})
    assert (done.selected, done.merged, done.commit) == (False, [], before)
    assert remote_branches(remote)["main"] == before
    with pytest.raises(UsageError, match=r"^the plan has no wave 3"):
        merge_wave(merger, graph(merger), 3, tmp_path, {1, 2})


def test_a_merge_that_cannot_be_pushed_merges_nothing(remote: Path, tmp_path: Path) -> None:
    run_task(remote, tmp_path, "alpha", {"alpha/done.txt": "a\n"})
    merger = checkout(remote, tmp_path / "merge", branch=True)
    start = git(merger, "rev-parse", "HEAD")
    git(merger, "remote", "set-url", "--push", "origin", str(tmp_path / "gone.git"))
    done = merge_wave(merger, graph(merger), 1, tmp_path / "keep-alpha", {1, 2})
    assert done.stopped.startswith("git push origin main failed (")
    assert done.stopped.endswith("): nothing of this wave is merged on it; re-run this job")
    assert (done.merged, done.commit, remote_branches(remote)["main"]) == ([], start, start)
    assert done.rows[0].note == f"not merged: {done.stopped}"


def test_a_report_holding_bytes_that_are_not_utf8_is_still_in_the_summary(
    remote: Path, tmp_path: Path
) -> None:
    """The loop's report keeps a reply's U+DC80 as the byte 0x80: the job summary left the
    whole report out for that one byte. It shows it, the byte as U+FFFD."""
    from finesse.headless.ci import summary

    end = run_task(remote, tmp_path, "alpha", {"alpha/done.txt": "a\n"})
    assert end.loop.state is not None
    Path(end.loop.state.report_path).write_bytes(b"# Ralph loop report\n\n- Learning: l\x80\n")
    assert "# Ralph loop report\n\n- Learning: l\ufffd\n" in summary.task(end)
