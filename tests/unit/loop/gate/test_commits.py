"""Gate mode's git commits on real temporary repositories, in the main worktree and a linked
one: the refusals before a start, the snapshot, the commit message and iteration commits."""

from __future__ import annotations

import os
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
from tests.helpers.gate import OWN_ONLY, make_ignored, modify_tracked, own_file
from tests.helpers.repo import (
    branch,
    commit_count,
    files_in,
    git_out,
    head,
    install_hook,
    staged,
    status,
    status_but,
    write,
)

# --- check_can_gate -------------------------------------------------------------------------------


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
def test_a_detached_head_is_refused(gate_project: Path, allow_dirty: bool) -> None:
    git_out(gate_project, "switch", "-q", "--detach")
    with pytest.raises(UsageError) as refused:
        check_can_gate(gate_project, allow_dirty=allow_dirty)
    assert str(refused.value) == (
        f"gate mode commits on a branch and HEAD is detached at {head(gate_project)[:12]}: "
        "run `git switch <branch>` (or `git switch -c <new-branch>`) first"
    )


def stage_a_change(root: Path) -> None:
    write(root, "src/app.py", "print('v2')\n")
    git_out(root, "add", "src/app.py")
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
def test_uncommitted_changes_are_refused(gate_project: Path, make_dirty: Callable[[Path], None],
                                         first: str) -> None:
    make_dirty(gate_project)
    write(gate_project, "notes.txt", "also new\n")
    with pytest.raises(UsageError) as refused:
        check_can_gate(gate_project, allow_dirty=False)
    assert str(refused.value) == (
        f"gate mode needs a clean working tree and {first} and 1 more has uncommitted changes: "
        "commit or stash them, or pass --allow-dirty to commit them as a snapshot first"
    )
    check_can_gate(gate_project, allow_dirty=True)


def test_ignored_files_and_the_loops_own_files_are_not_changes(gate_project: Path) -> None:
    make_ignored(gate_project)
    own_file(gate_project)
    write(gate_project, ".claude/ralph/history/old.json", "{}\n")
    check_can_gate(gate_project, allow_dirty=False)


def test_a_root_below_the_top_keeps_its_own_files_out(gate_project: Path) -> None:
    own_file(gate_project / "src")
    check_can_gate(gate_project / "src", allow_dirty=False)
    with pytest.raises(UsageError):  # the loop of `src` does not own the top's .claude/ralph
        check_can_gate(gate_project, allow_dirty=False)


def test_a_monorepo_project_is_clean_whatever_the_rest_of_the_repository_holds(
    monorepo: Path,
) -> None:
    top = monorepo.parent
    write(top, "other/lib.py", "LIB = 2\n")
    write(top, "other/staged.py", "STAGED = 1\n")
    git_out(top, "add", "other/staged.py")
    write(top, "TOP.txt", "at the top\n")
    check_can_gate(monorepo, allow_dirty=False)
    write(monorepo, "scratch.py", "pass\n")
    with pytest.raises(UsageError, match=r"and scratch\.py has uncommitted changes"):
        check_can_gate(monorepo, allow_dirty=False)


# --- snapshot -------------------------------------------------------------------------------------


def test_snapshot_commits_every_change_but_the_loops_own_files(gate_project: Path) -> None:
    start, start_branch = head(gate_project), branch(gate_project)
    modify_tracked(gate_project)
    (gate_project / "src/util.py").unlink()
    write(gate_project, "docs/new/guide.md", "guide\n")
    make_ignored(gate_project)
    own_file(gate_project)
    sha = snapshot(gate_project, "ralph: snapshot of the starting state")
    assert sha == head(gate_project)
    assert git_out(gate_project, "log", "-1", "--format=%P%n%B", sha) == (
        f"{start}\nralph: snapshot of the starting state\n\n"
    )
    assert git_out(gate_project, "show", "--name-status", "--format=", sha) == (
        "A\tdocs/new/guide.md\nM\tsrc/app.py\nD\tsrc/util.py\n"
    )
    assert status(gate_project) == OWN_ONLY
    assert branch(gate_project) == start_branch


def test_snapshot_of_a_clean_tree_commits_nothing(gate_project: Path) -> None:
    start, count = head(gate_project), commit_count(gate_project)
    make_ignored(gate_project)
    own_file(gate_project)
    assert snapshot(gate_project, "ralph: snapshot") is None
    assert (head(gate_project), commit_count(gate_project)) == (start, count)


def ignore_the_loops_folder(root: Path, ignored: str) -> None:
    write(root, ".gitignore", f"*.log\nbuild/\n{ignored}\n")
    git_out(root, "commit", "-q", "-am", "ignore the loop's folder")


@pytest.mark.parametrize("ignored", [".claude/", ".claude/ralph/"])
def test_a_project_that_ignores_the_loops_folder_is_committed(gate_project: Path,
                                                              ignored: str) -> None:
    # `git add` given a pathspec that names an ignored folder fails (advice.addIgnoredFile):
    # the first commit of such a project used to.
    ignore_the_loops_folder(gate_project, ignored)
    own_file(gate_project)
    modify_tracked(gate_project)
    write(gate_project, "notes.md", "notes\n")
    sha = snapshot(gate_project, "ralph: snapshot")
    assert git_out(gate_project, "show", "--name-status", "--format=", str(sha)) == (
        "A\tnotes.md\nM\tsrc/app.py\n")
    write(gate_project, "src/feature.py", "F = 1\n")
    sha = commit_iteration(gate_project, iteration=1, summary="feature", loop_id="l1")
    assert git_out(gate_project, "show", "--name-status", "--format=", str(sha)) == (
        "A\tsrc/feature.py\n")
    assert not [name for name in files_in(gate_project) if name.startswith(".claude")]
    assert status(gate_project) == ""


# --- commit_message -------------------------------------------------------------------------------


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


# --- commit_iteration -----------------------------------------------------------------------------


def test_commit_iteration_commits_the_iterations_changes(gate_project: Path) -> None:
    start, start_branch = head(gate_project), branch(gate_project)
    modify_tracked(gate_project)
    (gate_project / "src/util.py").unlink()
    write(gate_project, "src/parser/grammar/rules.py", "RULES = []\n")
    make_ignored(gate_project)
    own_file(gate_project)
    sha = commit_iteration(gate_project, iteration=2, summary="Add the grammar rules\n\nDetails.",
                           loop_id="loop-7f3a")
    assert sha == head(gate_project)
    assert git_out(gate_project, "log", "-1", "--format=%P%n%an <%ae>%n%cn <%ce>%n%B", sha) == (
        f"{start}\nTest Author <author@example.invalid>\n"
        "Test Committer <committer@example.invalid>\n"
        "ralph: iteration 2: Add the grammar rules\n\nRalph-Loop: loop-7f3a\n\n"
    )
    assert git_out(gate_project, "show", "--name-status", "--format=", sha) == (
        "M\tsrc/app.py\nA\tsrc/parser/grammar/rules.py\nD\tsrc/util.py\n"
    )
    assert status(gate_project) == OWN_ONLY
    assert (gate_project / "debug.log").read_text() == "ignored\n"
    assert branch(gate_project) == start_branch


def test_a_fifo_in_place_of_a_file_is_left_out_of_the_commit(gate_project: Path) -> None:
    """git cannot commit a FIFO: a tracked file the agent replaced by one (or a new one)
    failed the whole commit ("updating files failed") and ended the loop as a failure. The
    FIFO stays as it is, uncommitted, and the rest of the iteration is committed."""
    (gate_project / "src/util.py").unlink()
    os.mkfifo(gate_project / "src/util.py")
    os.mkfifo(gate_project / "new.pipe")
    write(gate_project, "src/added.py", "ADDED = 1\n")
    sha = commit_iteration(gate_project, iteration=1, summary="Add", loop_id="loop-7f3a")
    assert sha == head(gate_project)
    assert git_out(gate_project, "show", "--name-status", "--format=", sha) == "A\tsrc/added.py\n"
    assert staged(gate_project) == ""
    assert (gate_project / "src/util.py").is_fifo() and (gate_project / "new.pipe").is_fifo()


def test_an_empty_iteration_makes_no_commit(gate_project: Path) -> None:
    start, count = head(gate_project), commit_count(gate_project)
    make_ignored(gate_project)
    own_file(gate_project)
    assert commit_iteration(gate_project, iteration=3, summary="Nothing to do",
                            loop_id="loop-7f3a") is None
    assert (head(gate_project), commit_count(gate_project), status(gate_project)) == (
        start, count, OWN_ONLY)


def test_the_loops_files_staged_by_the_agent_are_not_committed(gate_project: Path) -> None:
    own_file(gate_project)
    modify_tracked(gate_project)
    git_out(gate_project, "add", "-A")
    sha = commit_iteration(gate_project, iteration=1, summary="v2", loop_id="loop-7f3a")
    assert sha is not None
    assert git_out(gate_project, "show", "--name-status", "--format=", sha) == "M\tsrc/app.py\n"
    assert status(gate_project) == OWN_ONLY
    assert (gate_project / ".claude/ralph/loop.json").read_text() == '{"iteration": 3}\n'


def test_a_root_below_the_top_commits_only_its_own_directory(gate_project: Path) -> None:
    # A project in a subdirectory of a repository (a monorepo): the loop commits what
    # changed in its directory, never a file elsewhere in the repository. (This test used to
    # assert that the whole tree was committed: that swept in the user's files.)
    own_file(gate_project / "src")
    write(gate_project, "docs/guide.md", "guide\n")
    write(gate_project, "src/new.py", "new\n")
    sha = commit_iteration(gate_project / "src", iteration=1, summary="docs", loop_id="l1")
    assert sha is not None
    assert git_out(gate_project, "show", "--name-status", "--format=", sha) == "A\tsrc/new.py\n"
    assert status(gate_project) == "?? docs/\n?? src/.claude/\n"


def test_a_user_s_staged_file_outside_a_monorepo_project_stays_staged(monorepo: Path) -> None:
    top = monorepo.parent
    write(top, "other/staged.py", "STAGED = 1\n")
    git_out(top, "add", "other/staged.py")
    write(top, "other/lib.py", "LIB = 2\n")
    write(monorepo, "app.py", "print('v2')\n")
    sha = commit_iteration(monorepo, iteration=1, summary="v2", loop_id="l1")
    assert git_out(top, "show", "--name-status", "--format=", str(sha)) == "M\tpkg/app.py\n"
    assert (staged(top), status_but(top, "pkg")) == (
        "other/staged.py\n", " M other/lib.py\nA  other/staged.py\n")


# --- a failing git hook ---------------------------------------------------------------------------


def work_in_progress(root: Path) -> None:
    write(root, "staged.py", "S = 1\n")
    git_out(root, "add", "staged.py")
    modify_tracked(root)
    write(root, "untracked.py", "U = 1\n")


@pytest.mark.parametrize("commit", [
    lambda root: snapshot(root, "ralph: snapshot"),
    lambda root: commit_iteration(root, iteration=1, summary="s", loop_id="l1"),
], ids=["snapshot", "commit_iteration"])
def test_a_failing_prepare_commit_msg_hook_is_named_and_the_index_left_as_it_was(
    gate_project: Path, commit: Callable[[Path], str | None],
) -> None:
    hook = install_hook(gate_project, "prepare-commit-msg", "echo 'no robots' >&2\nexit 1")
    work_in_progress(gate_project)
    before = (head(gate_project), staged(gate_project), status(gate_project))
    with pytest.raises(GateError) as failed:
        commit(gate_project)
    assert str(failed.value) == (
        f"the repository's prepare-commit-msg hook {hook} rejected the commit (no robots): "
        "fix the hook, or remove it for this loop; nothing was committed")
    assert (head(gate_project), staged(gate_project), status(gate_project)) == before
    assert status(gate_project) == " M src/app.py\nA  staged.py\n?? untracked.py\n"


def test_a_commit_git_cannot_sign_says_so(gate_project: Path) -> None:
    """commit.gpgsign on, and the signing program cannot run here (no key, no agent, a
    pinentry with no terminal): git's last line, "failed to write commit object", was all
    the loop said. It names the signing and what to do; the index is left as it was."""
    git_out(gate_project, "config", "commit.gpgsign", "true")
    git_out(gate_project, "config", "gpg.program", str(gate_project / "no-such-gpg"))
    work_in_progress(gate_project)
    before = (head(gate_project), staged(gate_project), status(gate_project))
    with pytest.raises(GateError) as failed:
        commit_iteration(gate_project, iteration=1, summary="s", loop_id="l1")
    assert str(failed.value) == (
        "git could not sign the commit (commit.gpgsign is on: error: gpg failed to sign the "
        "data): make signing work without a prompt, or turn it off for this repository "
        "(git config commit.gpgsign false); nothing was committed")
    assert (head(gate_project), staged(gate_project), status(gate_project)) == before


def test_a_silent_failing_hook_in_core_hooks_path_is_named(gate_project: Path) -> None:
    hook = write(gate_project, "githooks/prepare-commit-msg", "#!/bin/sh\nexit 3\n")
    hook.chmod(0o755)
    git_out(gate_project, "add", "githooks")
    git_out(gate_project, "commit", "-q", "-m", "the project's hooks")
    git_out(gate_project, "config", "core.hooksPath", "githooks")
    modify_tracked(gate_project)
    with pytest.raises(GateError) as failed:
        commit_iteration(gate_project, iteration=1, summary="s", loop_id="l1")
    assert str(failed.value) == (
        f"the repository's prepare-commit-msg hook {gate_project.resolve() / 'githooks'}"
        "/prepare-commit-msg rejected the commit: fix the hook, or remove it for this loop; "
        "nothing was committed")
    assert status(gate_project) == " M src/app.py\n"


@pytest.mark.parametrize("name", ["pre-commit", "commit-msg"])
def test_pre_commit_and_commit_msg_hooks_are_skipped(gate_project: Path, name: str) -> None:
    install_hook(gate_project, name, "echo 'no' >&2\nexit 1")
    work_in_progress(gate_project)
    assert snapshot(gate_project, "ralph: snapshot") == head(gate_project)
    write(gate_project, "feature.py", "F = 1\n")
    sha = commit_iteration(gate_project, iteration=1, summary="s", loop_id="l1")
    assert (sha, status(gate_project)) == (head(gate_project), "")


def forget_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{role}_NAME")
        monkeypatch.delenv(f"GIT_{role}_EMAIL")
    monkeypatch.delenv("EMAIL", raising=False)


def test_without_a_configured_identity_finesse_commits(gate_project: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    forget_identity(monkeypatch)
    modify_tracked(gate_project)
    sha = commit_iteration(gate_project, iteration=1, summary="v2", loop_id="l1")
    assert git_out(gate_project, "log", "-1", "--format=%an <%ae>|%cn <%ce>", str(sha)) == (
        "finesse <finesse@localhost>|finesse <finesse@localhost>\n"
    )


def test_the_repositorys_configured_identity_is_used(gate_project: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    forget_identity(monkeypatch)
    git_out(gate_project, "config", "user.name", "Project Owner")
    git_out(gate_project, "config", "user.email", "owner@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Robot")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "robot@example.invalid")
    modify_tracked(gate_project)
    sha = commit_iteration(gate_project, iteration=1, summary="v2", loop_id="l1")
    assert git_out(gate_project, "log", "-1", "--format=%an <%ae>|%cn <%ce>", str(sha)) == (
        "Project Owner <owner@example.invalid>|Robot <robot@example.invalid>\n"
    )


# --- head_sha -------------------------------------------------------------------------------------


def test_head_sha(gate_project: Path) -> None:
    assert head_sha(gate_project / "src") == head(gate_project)


def test_head_sha_outside_a_repository(tmp_path: Path) -> None:
    with pytest.raises(GateError) as failed:
        head_sha(tmp_path)
    assert str(failed.value) == f"{tmp_path} is not in a git repository"


def test_a_failed_commit_keeps_a_change_made_in_the_same_clock_tick(gate_project: Path) -> None:
    """A file changed within the clock tick of its index entry (same size, same mtime) is
    told apart by git only while the index file's own mtime says the entry is racy: putting
    the index back with a fresh mtime made the change vanish from `git status` (a test that
    failed now and then under load)."""
    install_hook(gate_project, "prepare-commit-msg", "exit 3")
    app = gate_project / "src" / "app.py"
    tick = app.stat().st_mtime_ns - 10**10  # ten seconds ago: clearly before any rewrite
    os.utime(app, ns=(tick, tick))
    git_out(gate_project, "update-index", "--refresh")  # the entry records that time
    text = app.read_text()
    app.write_text(text[:-2] + ("X" if text[-2] != "X" else "Y") + "\n")  # same size
    os.utime(app, ns=(tick, tick))
    index = gate_project / git_out(gate_project, "rev-parse", "--git-path", "index").strip()
    os.utime(index, ns=(tick, tick))  # written in the same tick: the entry is racy
    with pytest.raises(GateError):
        commit_iteration(gate_project, iteration=1, summary="s", loop_id="l1")
    assert status(gate_project) == " M src/app.py\n"
    assert not index.with_name("index.lock").exists()
