"""Gate mode's revert on real temporary repositories, in the main worktree and a linked one:
back to the iteration's start within the project, never touching the loop's own files,
ignored files or a nested repository."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from finesse.loop.gate.commits import GateError
from finesse.loop.gate.revert import RevertResult, revert_to
from tests.helpers.gate import OWN_ONLY, make_ignored, modify_tracked, own_file
from tests.helpers.repo import (
    add_submodule,
    branch,
    commit_count,
    files_in,
    git_out,
    head,
    staged,
    status,
    status_but,
    write,
)

BASE_FILES = [".gitignore", "README.md", "src/app.py", "src/util.py"]


def test_revert_restores_tracked_files_and_removes_created_ones(gate_project: Path) -> None:
    start, start_branch = head(gate_project), branch(gate_project)
    count = commit_count(gate_project)
    make_ignored(gate_project)
    own_file(gate_project)
    modify_tracked(gate_project)
    (gate_project / "README.md").unlink()
    write(gate_project, "src/util.py", "broken(\n")
    git_out(gate_project, "add", "src/util.py")
    write(gate_project, "src/extra.py", "EXTRA = 1\n")
    write(gate_project, "new/deep/tree/module.py", "x = 1\n")
    write(gate_project, "new/deep/other.txt", "y\n")
    write(gate_project, "staged_new.py", "z = 1\n")
    git_out(gate_project, "add", "staged_new.py")
    write(gate_project, "build/out/app.bin", "rebuilt during the iteration\n")
    write(gate_project, "debug.log", "written during the iteration\n")

    assert revert_to(gate_project, start) == RevertResult(
        commit=start,
        restored=("README.md", "src/app.py", "src/util.py"),
        removed=("new/deep/other.txt", "new/deep/tree/module.py", "src/extra.py",
                 "staged_new.py"),
    )
    assert status(gate_project) == OWN_ONLY
    assert (head(gate_project), branch(gate_project), commit_count(gate_project)) == (
        start, start_branch, count)
    assert (gate_project / "src/app.py").read_text() == "print('v1')\n"
    assert (gate_project / "src/util.py").read_text() == "def helper():\n    return 1\n"
    assert (gate_project / "README.md").read_text() == "project\n"
    assert not (gate_project / "new").exists()
    assert (gate_project / "build/out/app.bin").read_text() == "rebuilt during the iteration\n"
    assert (gate_project / "debug.log").read_text() == "written during the iteration\n"
    assert (gate_project / ".claude/ralph/loop.json").read_text() == '{"iteration": 3}\n'


def test_revert_of_a_clean_tree_changes_nothing(gate_project: Path) -> None:
    start = head(gate_project)
    own_file(gate_project)
    assert revert_to(gate_project, start) == RevertResult(commit=start, restored=(), removed=())
    assert (head(gate_project), status(gate_project)) == (start, OWN_ONLY)


def test_revert_leaves_the_loops_files_alone_when_they_are_ignored(gate_project: Path) -> None:
    write(gate_project, ".gitignore", "*.log\nbuild/\n.claude/\n")
    git_out(gate_project, "commit", "-q", "-am", "ignore the loop's files")
    start = head(gate_project)
    own_file(gate_project)
    write(gate_project, "scratch.py", "pass\n")
    assert revert_to(gate_project, start) == RevertResult(commit=start, restored=(),
                                                     removed=("scratch.py",))
    assert status(gate_project) == ""
    assert (gate_project / ".claude/ralph/loop.json").read_text() == '{"iteration": 3}\n'


def test_revert_judges_ignored_files_by_the_starting_rules(gate_project: Path) -> None:
    start = head(gate_project)
    write(gate_project, "secrets.log", "token\n")  # there before the iteration, ignored
    write(gate_project, ".gitignore", "build/\n*.tmp\n")  # the iteration un-ignores *.log...
    write(gate_project, "cache.tmp", "hidden\n")  # ...and hides a file it made
    assert revert_to(gate_project, start) == RevertResult(commit=start, restored=(".gitignore",),
                                                     removed=("cache.tmp",))
    assert (gate_project / "secrets.log").read_text() == "token\n"
    assert status(gate_project) == ""


def test_revert_leaves_a_nested_repository_in_place(gate_project: Path) -> None:
    start = head(gate_project)
    git.Repo.init(gate_project / "vendor/lib").close()
    write(gate_project, "vendor/lib/code.py", "pass\n")
    write(gate_project, "vendor/notes.txt", "n\n")
    assert revert_to(gate_project, start) == RevertResult(commit=start, restored=(),
                                                     removed=("vendor/notes.txt",))
    assert status(gate_project) == "?? vendor/\n"
    assert (gate_project / "vendor/lib/code.py").exists()


def test_revert_in_a_monorepo_leaves_the_rest_of_the_repository_alone(monorepo: Path) -> None:
    top = monorepo.parent
    start = head(top)
    # The user's work elsewhere in the repository, done while the iteration ran.
    write(top, "README.md", "edited by the user\n")
    write(top, "TOP.txt", "created by the user\n")
    write(top, "other/lib.py", "LIB = 2\n")
    (top / "other/mine").mkdir()
    write(top, "other/mine/new.py", "NEW = 1\n")
    write(top, "other/staged.py", "STAGED = 1\n")
    git_out(top, "add", "other/staged.py")
    outside = status_but(top, "pkg")
    # The iteration's.
    write(monorepo, "app.py", "print('broken')\n")
    write(monorepo, "extra.py", "pass\n")
    assert revert_to(monorepo, start) == RevertResult(commit=start, restored=("app.py",),
                                                     removed=("extra.py",))
    assert (status_but(top, "pkg"), staged(top)) == (outside, "other/staged.py\n")
    assert outside == (" M README.md\n M other/lib.py\nA  other/staged.py\n?? TOP.txt\n"
                       "?? other/mine/new.py\n")
    assert status_but(monorepo, ".claude") == ""
    assert (top / "other/lib.py").read_text() == "LIB = 2\n"


@pytest.mark.parametrize("inside", ["edited", "committed"])
def test_revert_lists_a_changed_submodule_as_untouched(gate_project: Path, tmp_path: Path,
                                                        inside: str) -> None:
    add_submodule(gate_project, tmp_path / "lib-source", "vendor/lib")
    start = head(gate_project)
    submodule = gate_project / "vendor/lib"
    write(submodule, "lib.txt", "lib v2\n")
    if inside == "committed":
        git_out(submodule, "commit", "-q", "-am", "the iteration's")
    inner = (head(submodule), status(submodule))
    write(gate_project, "README.md", "changed\n")
    assert revert_to(gate_project, start) == RevertResult(
        commit=start, restored=("README.md",), removed=(), untouched=("vendor/lib",))
    # Not reverted inside, and not claimed to be.
    assert (head(submodule), status(submodule)) == inner
    assert (submodule / "lib.txt").read_text() == "lib v2\n"
    assert status(gate_project) == " M vendor/lib\n"


def test_revert_after_the_agent_committed_adds_a_commit_on_top(gate_project: Path) -> None:
    start, start_branch = head(gate_project), branch(gate_project)
    own_file(gate_project)
    modify_tracked(gate_project)
    write(gate_project, "src/feature.py", "F = 1\n")
    git_out(gate_project, "add", "-A")  # the loop's own files too, as a careless agent would
    git_out(gate_project, "commit", "-q", "-m", "agent: feature")
    first = head(gate_project)
    (gate_project / "src/util.py").unlink()
    git_out(gate_project, "commit", "-q", "-am", "agent: drop util")
    second = head(gate_project)
    write(gate_project, "README.md", "uncommitted edit\n")
    write(gate_project, "later.py", "pass\n")

    result = revert_to(gate_project, start, loop_id="loop-7f3a")
    assert result == RevertResult(
        commit=start,
        restored=("README.md", "src/app.py", "src/util.py"),
        removed=("later.py", "src/feature.py"),
        undone_commits=(first, second),
        revert_commit=head(gate_project),
    )
    assert git_out(gate_project, "log", "-1", "--format=%P%n%B", "HEAD") == (
        f"{second}\nralph: revert to {start[:12]}\n\nRalph-Loop: loop-7f3a\n\n"
    )
    # The agent's commit of the loop's file is left alone; everything else is the start's.
    assert files_in(gate_project) == [".claude/ralph/loop.json", *BASE_FILES]
    assert git_out(gate_project, "diff", "--name-only", start, "HEAD", "--", ".",
                   ":(exclude).claude/ralph") == ""
    assert (status(gate_project), branch(gate_project)) == ("", start_branch)
    assert (gate_project / ".claude/ralph/loop.json").read_text() == '{"iteration": 3}\n'


def test_revert_after_the_agent_committed_and_undid_it_makes_no_commit(gate_project: Path) -> None:
    start = head(gate_project)
    modify_tracked(gate_project)
    git_out(gate_project, "commit", "-q", "-am", "agent: v2")
    first = head(gate_project)
    git_out(gate_project, "revert", "--no-edit", "HEAD")
    second = head(gate_project)
    write(gate_project, "tmp.py", "pass\n")
    assert revert_to(gate_project, start) == RevertResult(
        commit=start, restored=(), removed=("tmp.py",), undone_commits=(first, second))
    assert (head(gate_project), status(gate_project)) == (second, "")


def test_revert_refuses_when_the_agent_rewrote_the_branch(gate_project: Path) -> None:
    write(gate_project, "src/app.py", "print('v0')\n")
    git_out(gate_project, "commit", "-q", "-am", "v0")
    start = head(gate_project)
    write(gate_project, "src/app.py", "print('amended')\n")
    git_out(gate_project, "commit", "-q", "-a", "--amend", "-m", "agent: amended")
    write(gate_project, "scratch.py", "pass\n")
    before = (head(gate_project), status(gate_project))
    with pytest.raises(GateError) as refused:
        revert_to(gate_project, start)
    assert str(refused.value) == (
        f"the branch moved off {start[:12]} during the iteration (reset, amend or rebase); "
        "not reverting: restore it by hand (git reflog lists both)"
    )
    assert (head(gate_project), status(gate_project)) == before


def test_revert_refuses_a_detached_head(gate_project: Path) -> None:
    start = head(gate_project)
    modify_tracked(gate_project)
    git_out(gate_project, "commit", "-q", "-am", "v2")
    git_out(gate_project, "switch", "-q", "--detach")
    with pytest.raises(GateError) as refused:
        revert_to(gate_project, start)
    assert str(refused.value) == (
        f"HEAD was detached at {head(gate_project)[:12]} during the iteration; not reverting: "
        f"switch back to the loop's branch, at or after {start[:12]}"
    )


def test_revert_to_an_unknown_commit_is_an_error(gate_project: Path) -> None:
    with pytest.raises(GateError) as refused:
        revert_to(gate_project, "0" * 40)
    top = gate_project.resolve()
    assert str(refused.value) == f"cannot revert to {'0' * 40}: no such commit in {top}"
