"""Gate mode's git layer on real temporary repositories, in the main worktree and a linked one:
refusals, the snapshot, iteration commits, and the scoped revert."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from finesse.errors import UsageError
from finesse.loop.gate.commits import (
    GateError,
    check_can_gate,
    commit_iteration,
    commit_message,
    head_sha,
    snapshot,
)
from finesse.loop.gate.revert import RevertResult, revert_to

OWN_ONLY = "?? .claude/\n"  # what `git status` shows when only the loop's own files exist
BASE_FILES = [".gitignore", "README.md", "src/app.py", "src/util.py"]


def run_git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def status(root: Path) -> str:
    return run_git(root, "status", "--porcelain", "--untracked-files=normal")


def head(root: Path) -> str:
    return run_git(root, "rev-parse", "HEAD").strip()


def branch(root: Path) -> str:
    return run_git(root, "symbolic-ref", "--short", "HEAD").strip()


def files_in(root: Path, rev: str = "HEAD") -> list[str]:
    return run_git(root, "ls-tree", "-r", "--name-only", rev).splitlines()


def commit_count(root: Path) -> int:
    return int(run_git(root, "rev-list", "--count", "HEAD"))


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def own_file(root: Path) -> Path:
    return write(root, ".claude/ralph/loop.json", '{"iteration": 3}\n')


@pytest.fixture(params=["main", "worktree"])
def project(request: pytest.FixtureRequest, git_repo: Path, tmp_path: Path) -> Path:
    """A project with ignore rules and a few files, committed; in the repository's main
    worktree, or in a linked worktree on branch `feature`."""
    write(git_repo, ".gitignore", "*.log\nbuild/\n")
    write(git_repo, "src/app.py", "print('v1')\n")
    write(git_repo, "src/util.py", "def helper():\n    return 1\n")
    run_git(git_repo, "add", "-A")
    run_git(git_repo, "commit", "-q", "-m", "base")
    if request.param == "main":
        return git_repo
    worktree = tmp_path / "linked"
    run_git(git_repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    return worktree


def make_ignored(root: Path) -> None:
    write(root, "debug.log", "ignored\n")
    write(root, "build/out/app.bin", "ignored\n")


# --- check_can_gate -------------------------------------------------------------------


def test_not_a_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as refused:
        check_can_gate(tmp_path, allow_dirty=True)
    assert str(refused.value) == (
        f"gate mode needs a git repository and {tmp_path} is not in one: run `git init` and "
        "commit the project first, or leave out --gate"
    )


def test_a_repository_without_commits_is_refused(tmp_path: Path) -> None:
    git.Repo.init(tmp_path, initial_branch="main").close()
    with pytest.raises(UsageError) as refused:
        check_can_gate(tmp_path, allow_dirty=True)
    assert str(refused.value) == (
        "gate mode needs a commit to revert to and this repository has none yet: "
        "commit the project (`git add -A && git commit -m initial`) first"
    )


@pytest.mark.parametrize("allow_dirty", [False, True])
def test_a_detached_head_is_refused(project: Path, allow_dirty: bool) -> None:
    run_git(project, "switch", "-q", "--detach")
    with pytest.raises(UsageError) as refused:
        check_can_gate(project, allow_dirty=allow_dirty)
    assert str(refused.value) == (
        f"gate mode commits on a branch and HEAD is detached at {head(project)[:12]}: "
        "run `git switch <branch>` (or `git switch -c <new-branch>`) first"
    )


def modify_tracked(root: Path) -> None:
    write(root, "src/app.py", "print('v2')\n")


def stage_a_change(root: Path) -> None:
    write(root, "src/app.py", "print('v2')\n")
    run_git(root, "add", "src/app.py")
    write(root, "src/app.py", "print('v1')\n")  # only the index differs now


def delete_tracked(root: Path) -> None:
    (root / "src/app.py").unlink()


def create_untracked(root: Path) -> None:
    write(root, "src/app.py.orig", "left over\n")


@pytest.mark.parametrize(("make_dirty", "first"), [
    (modify_tracked, "src/app.py"),
    (stage_a_change, "src/app.py"),
    (delete_tracked, "src/app.py"),
    (create_untracked, "notes.txt"),  # untracked files come last, in name order
])
def test_uncommitted_changes_are_refused(project: Path, make_dirty: Callable[[Path], None],
                                         first: str) -> None:
    make_dirty(project)
    write(project, "notes.txt", "also new\n")
    with pytest.raises(UsageError) as refused:
        check_can_gate(project, allow_dirty=False)
    assert str(refused.value) == (
        f"gate mode needs a clean working tree and {first} and 1 more has uncommitted changes: "
        "commit or stash them, or pass --allow-dirty to commit them as a snapshot first"
    )
    check_can_gate(project, allow_dirty=True)


def test_ignored_files_and_the_loops_own_files_are_not_changes(project: Path) -> None:
    make_ignored(project)
    own_file(project)
    write(project, ".claude/ralph/history/old.json", "{}\n")
    check_can_gate(project, allow_dirty=False)


def test_a_root_below_the_top_keeps_its_own_files_out(project: Path) -> None:
    own_file(project / "src")
    check_can_gate(project / "src", allow_dirty=False)
    with pytest.raises(UsageError):  # the loop of `src` does not own the top's .claude/ralph
        check_can_gate(project, allow_dirty=False)


# --- snapshot --------------------------------------------------------------------------


def test_snapshot_commits_every_change_but_the_loops_own_files(project: Path) -> None:
    start, start_branch = head(project), branch(project)
    modify_tracked(project)
    (project / "src/util.py").unlink()
    write(project, "docs/new/guide.md", "guide\n")
    make_ignored(project)
    own_file(project)
    sha = snapshot(project, "ralph: snapshot of the starting state")
    assert sha == head(project)
    assert run_git(project, "log", "-1", "--format=%P%n%B", sha) == (
        f"{start}\nralph: snapshot of the starting state\n\n"
    )
    assert run_git(project, "show", "--name-status", "--format=", sha) == (
        "A\tdocs/new/guide.md\nM\tsrc/app.py\nD\tsrc/util.py\n"
    )
    assert status(project) == OWN_ONLY
    assert branch(project) == start_branch


def test_snapshot_of_a_clean_tree_commits_nothing(project: Path) -> None:
    start, count = head(project), commit_count(project)
    make_ignored(project)
    own_file(project)
    assert snapshot(project, "ralph: snapshot") is None
    assert (head(project), commit_count(project)) == (start, count)


# --- commit_message ----------------------------------------------------------------------


@pytest.mark.parametrize(("summary", "subject"), [
    ("Add the parser", "ralph: iteration 4: Add the parser"),
    ("\n  \n  Fix   the\tlexer  \nsecond line", "ralph: iteration 4: Fix the lexer"),
    ("", "ralph: iteration 4: no summary"),
    (" \n\t\n", "ralph: iteration 4: no summary"),
    ("# 12: keep a leading hash", "ralph: iteration 4: # 12: keep a leading hash"),
    ("Refactor the configuration loader so that every source is read once and cached",
     "ralph: iteration 4: Refactor the configuration loader so that every..."),
    ("x" * 80, "ralph: iteration 4: " + "x" * 49 + "..."),
])
def test_commit_message(summary: str, subject: str) -> None:
    message = commit_message(iteration=4, summary=summary, loop_id="loop-7f3a")
    assert message == f"{subject}\n\nRalph-Loop: loop-7f3a\n"
    assert len(subject) <= 72


@pytest.mark.parametrize("loop_id", ["", "two words", "a\nb", " padded"])
def test_a_loop_id_is_one_word(loop_id: str) -> None:
    with pytest.raises(ValueError, match="a loop id is one word"):
        commit_message(iteration=1, summary="s", loop_id=loop_id)


# --- commit_iteration ----------------------------------------------------------------------


def test_commit_iteration_commits_the_iterations_changes(project: Path) -> None:
    start, start_branch = head(project), branch(project)
    modify_tracked(project)
    (project / "src/util.py").unlink()
    write(project, "src/parser/grammar/rules.py", "RULES = []\n")
    make_ignored(project)
    own_file(project)
    sha = commit_iteration(project, iteration=2, summary="Add the grammar rules\n\nDetails.",
                           loop_id="loop-7f3a")
    assert sha == head(project)
    assert run_git(project, "log", "-1", "--format=%P%n%an <%ae>%n%cn <%ce>%n%B", sha) == (
        f"{start}\nTest Author <author@example.invalid>\n"
        "Test Committer <committer@example.invalid>\n"
        "ralph: iteration 2: Add the grammar rules\n\nRalph-Loop: loop-7f3a\n\n"
    )
    assert run_git(project, "show", "--name-status", "--format=", sha) == (
        "M\tsrc/app.py\nA\tsrc/parser/grammar/rules.py\nD\tsrc/util.py\n"
    )
    assert status(project) == OWN_ONLY
    assert (project / "debug.log").read_text() == "ignored\n"
    assert branch(project) == start_branch


def test_an_empty_iteration_makes_no_commit(project: Path) -> None:
    start, count = head(project), commit_count(project)
    make_ignored(project)
    own_file(project)
    assert commit_iteration(project, iteration=3, summary="Nothing to do",
                            loop_id="loop-7f3a") is None
    assert (head(project), commit_count(project), status(project)) == (start, count, OWN_ONLY)


def test_the_loops_files_staged_by_the_agent_are_not_committed(project: Path) -> None:
    own_file(project)
    modify_tracked(project)
    run_git(project, "add", "-A")
    sha = commit_iteration(project, iteration=1, summary="v2", loop_id="loop-7f3a")
    assert sha is not None
    assert run_git(project, "show", "--name-status", "--format=", sha) == "M\tsrc/app.py\n"
    assert status(project) == OWN_ONLY
    assert (project / ".claude/ralph/loop.json").read_text() == '{"iteration": 3}\n'


def test_a_root_below_the_top_commits_only_its_own_directory(project: Path) -> None:
    # A project in a subdirectory of a repository (a monorepo): the loop commits what
    # changed in its directory, never a file elsewhere in the repository. (This test used to
    # assert that the whole tree was committed: that swept in the user's files.)
    own_file(project / "src")
    write(project, "docs/guide.md", "guide\n")
    write(project, "src/new.py", "new\n")
    sha = commit_iteration(project / "src", iteration=1, summary="docs", loop_id="l1")
    assert sha is not None
    assert run_git(project, "show", "--name-status", "--format=", sha) == "A\tsrc/new.py\n"
    assert status(project) == "?? docs/\n?? src/.claude/\n"


def forget_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{role}_NAME")
        monkeypatch.delenv(f"GIT_{role}_EMAIL")
    monkeypatch.delenv("EMAIL", raising=False)


def test_without_a_configured_identity_finesse_commits(project: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    forget_identity(monkeypatch)
    modify_tracked(project)
    sha = commit_iteration(project, iteration=1, summary="v2", loop_id="l1")
    assert run_git(project, "log", "-1", "--format=%an <%ae>|%cn <%ce>", str(sha)) == (
        "finesse <finesse@localhost>|finesse <finesse@localhost>\n"
    )


def test_the_repositorys_configured_identity_is_used(project: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    forget_identity(monkeypatch)
    run_git(project, "config", "user.name", "Project Owner")
    run_git(project, "config", "user.email", "owner@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Robot")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "robot@example.invalid")
    modify_tracked(project)
    sha = commit_iteration(project, iteration=1, summary="v2", loop_id="l1")
    assert run_git(project, "log", "-1", "--format=%an <%ae>|%cn <%ce>", str(sha)) == (
        "Project Owner <owner@example.invalid>|Robot <robot@example.invalid>\n"
    )


# --- revert_to ---------------------------------------------------------------------------


def test_revert_restores_tracked_files_and_removes_created_ones(project: Path) -> None:
    start, start_branch, count = head(project), branch(project), commit_count(project)
    make_ignored(project)
    own_file(project)
    modify_tracked(project)
    (project / "README.md").unlink()
    write(project, "src/util.py", "broken(\n")
    run_git(project, "add", "src/util.py")
    write(project, "src/extra.py", "EXTRA = 1\n")
    write(project, "new/deep/tree/module.py", "x = 1\n")
    write(project, "new/deep/other.txt", "y\n")
    write(project, "staged_new.py", "z = 1\n")
    run_git(project, "add", "staged_new.py")
    write(project, "build/out/app.bin", "rebuilt during the iteration\n")
    write(project, "debug.log", "written during the iteration\n")

    assert revert_to(project, start) == RevertResult(
        commit=start,
        restored=("README.md", "src/app.py", "src/util.py"),
        removed=("new/deep/other.txt", "new/deep/tree/module.py", "src/extra.py",
                 "staged_new.py"),
    )
    assert status(project) == OWN_ONLY
    assert (head(project), branch(project), commit_count(project)) == (
        start, start_branch, count)
    assert (project / "src/app.py").read_text() == "print('v1')\n"
    assert (project / "src/util.py").read_text() == "def helper():\n    return 1\n"
    assert (project / "README.md").read_text() == "project\n"
    assert not (project / "new").exists()
    assert (project / "build/out/app.bin").read_text() == "rebuilt during the iteration\n"
    assert (project / "debug.log").read_text() == "written during the iteration\n"
    assert (project / ".claude/ralph/loop.json").read_text() == '{"iteration": 3}\n'


def test_revert_of_a_clean_tree_changes_nothing(project: Path) -> None:
    start = head(project)
    own_file(project)
    assert revert_to(project, start) == RevertResult(commit=start, restored=(), removed=())
    assert (head(project), status(project)) == (start, OWN_ONLY)


def test_revert_leaves_the_loops_files_alone_when_they_are_ignored(project: Path) -> None:
    write(project, ".gitignore", "*.log\nbuild/\n.claude/\n")
    run_git(project, "commit", "-q", "-am", "ignore the loop's files")
    start = head(project)
    own_file(project)
    write(project, "scratch.py", "pass\n")
    assert revert_to(project, start) == RevertResult(commit=start, restored=(),
                                                     removed=("scratch.py",))
    assert status(project) == ""
    assert (project / ".claude/ralph/loop.json").read_text() == '{"iteration": 3}\n'


def test_revert_judges_ignored_files_by_the_starting_rules(project: Path) -> None:
    start = head(project)
    write(project, "secrets.log", "token\n")  # there before the iteration, ignored
    write(project, ".gitignore", "build/\n*.tmp\n")  # the iteration un-ignores *.log...
    write(project, "cache.tmp", "hidden\n")  # ...and hides a file it made
    assert revert_to(project, start) == RevertResult(commit=start, restored=(".gitignore",),
                                                     removed=("cache.tmp",))
    assert (project / "secrets.log").read_text() == "token\n"
    assert status(project) == ""


def test_revert_leaves_a_nested_repository_in_place(project: Path) -> None:
    start = head(project)
    git.Repo.init(project / "vendor/lib").close()
    write(project, "vendor/lib/code.py", "pass\n")
    write(project, "vendor/notes.txt", "n\n")
    assert revert_to(project, start) == RevertResult(commit=start, restored=(),
                                                     removed=("vendor/notes.txt",))
    assert status(project) == "?? vendor/\n"
    assert (project / "vendor/lib/code.py").exists()


def test_revert_after_the_agent_committed_adds_a_commit_on_top(project: Path) -> None:
    start, start_branch = head(project), branch(project)
    own_file(project)
    modify_tracked(project)
    write(project, "src/feature.py", "F = 1\n")
    run_git(project, "add", "-A")  # the loop's own files too, as a careless agent would
    run_git(project, "commit", "-q", "-m", "agent: feature")
    first = head(project)
    (project / "src/util.py").unlink()
    run_git(project, "commit", "-q", "-am", "agent: drop util")
    second = head(project)
    write(project, "README.md", "uncommitted edit\n")
    write(project, "later.py", "pass\n")

    result = revert_to(project, start, loop_id="loop-7f3a")
    assert result == RevertResult(
        commit=start,
        restored=("README.md", "src/app.py", "src/util.py"),
        removed=("later.py", "src/feature.py"),
        undone_commits=(first, second),
        revert_commit=head(project),
    )
    assert run_git(project, "log", "-1", "--format=%P%n%B", "HEAD") == (
        f"{second}\nralph: revert to {start[:12]}\n\nRalph-Loop: loop-7f3a\n\n"
    )
    # The agent's commit of the loop's file is left alone; everything else is the start's.
    assert files_in(project) == [".claude/ralph/loop.json", *BASE_FILES]
    assert run_git(project, "diff", "--name-only", start, "HEAD", "--", ".",
                   ":(exclude).claude/ralph") == ""
    assert (status(project), branch(project)) == ("", start_branch)
    assert (project / ".claude/ralph/loop.json").read_text() == '{"iteration": 3}\n'


def test_revert_after_the_agent_committed_and_undid_it_makes_no_commit(project: Path) -> None:
    start = head(project)
    modify_tracked(project)
    run_git(project, "commit", "-q", "-am", "agent: v2")
    first = head(project)
    run_git(project, "revert", "--no-edit", "HEAD")
    second = head(project)
    write(project, "tmp.py", "pass\n")
    assert revert_to(project, start) == RevertResult(
        commit=start, restored=(), removed=("tmp.py",), undone_commits=(first, second))
    assert (head(project), status(project)) == (second, "")


def test_revert_refuses_when_the_agent_rewrote_the_branch(project: Path) -> None:
    write(project, "src/app.py", "print('v0')\n")
    run_git(project, "commit", "-q", "-am", "v0")
    start = head(project)
    write(project, "src/app.py", "print('amended')\n")
    run_git(project, "commit", "-q", "-a", "--amend", "-m", "agent: amended")
    write(project, "scratch.py", "pass\n")
    before = (head(project), status(project))
    with pytest.raises(GateError) as refused:
        revert_to(project, start)
    assert str(refused.value) == (
        f"the branch moved off {start[:12]} during the iteration (reset, amend or rebase); "
        "not reverting: restore it by hand (git reflog lists both)"
    )
    assert (head(project), status(project)) == before


def test_revert_refuses_a_detached_head(project: Path) -> None:
    start = head(project)
    modify_tracked(project)
    run_git(project, "commit", "-q", "-am", "v2")
    run_git(project, "switch", "-q", "--detach")
    with pytest.raises(GateError) as refused:
        revert_to(project, start)
    assert str(refused.value) == (
        f"HEAD was detached at {head(project)[:12]} during the iteration; not reverting: "
        f"switch back to the loop's branch, at or after {start[:12]}"
    )


def test_revert_to_an_unknown_commit_is_an_error(project: Path) -> None:
    with pytest.raises(GateError) as refused:
        revert_to(project, "0" * 40)
    top = project.resolve()
    assert str(refused.value) == f"cannot revert to {'0' * 40}: no such commit in {top}"


# --- head_sha ------------------------------------------------------------


def test_head_sha(project: Path) -> None:
    assert head_sha(project / "src") == head(project)


def test_head_sha_outside_a_repository(tmp_path: Path) -> None:
    with pytest.raises(GateError) as failed:
        head_sha(tmp_path)
    assert str(failed.value) == f"{tmp_path} is not in a git repository"
