"""What git says about the project, in real temporary repositories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from finesse.support.git import changed_files, head, projects_below, tree_fingerprint
from tests.helpers.repo import git, write


def touch_later(path: Path, seconds: int = 10) -> None:
    """Move a file's modification time on, as a later write would."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + seconds * 1_000_000_000))


def commit_all(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def plain_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory in no repository, whatever lies above the temporary directory."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    directory = tmp_path / "plain"
    directory.mkdir()
    (directory / "file.txt").write_text("x\n")
    return directory


def test_head(git_repo: Path) -> None:
    assert head(git_repo) == git(git_repo, "rev-parse", "HEAD")
    (git_repo / "a.txt").write_text("a\n")
    second = commit_all(git_repo, "second")
    assert head(git_repo) == second


def test_head_of_a_repository_without_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    assert head(tmp_path) is None


def test_outside_git_there_is_nothing_to_say(plain_dir: Path) -> None:
    assert (head(plain_dir), tree_fingerprint(plain_dir), changed_files(plain_dir, None)) == (
        None, None, []
    )
    assert changed_files(plain_dir, "0" * 40) == []


def test_fingerprint_is_stable_while_nothing_changes(git_repo: Path) -> None:
    first = tree_fingerprint(git_repo)
    assert first is not None and len(first) == 16  # finesse.support.fingerprint
    assert tree_fingerprint(git_repo) == first
    # Reading a file changes nothing either.
    (git_repo / "README.md").read_text()
    assert tree_fingerprint(git_repo) == first


def test_fingerprint_changes_with_every_kind_of_change(git_repo: Path) -> None:
    seen = [tree_fingerprint(git_repo)]

    def changed() -> bool:
        now = tree_fingerprint(git_repo)
        fresh = now not in seen
        seen.append(now)
        return fresh

    (git_repo / "README.md").write_text("project, edited\n")
    assert changed(), "an edit of a tracked file"
    (git_repo / "README.md").write_text("project, EDITED\n")  # same size
    touch_later(git_repo / "README.md")
    assert changed(), "a second edit of an already modified file"
    (git_repo / "notes").mkdir()
    (git_repo / "notes" / "new.md").write_text("new\n")
    assert changed(), "a new file in a new directory"
    (git_repo / "notes" / "new.md").write_text("newer\n")
    assert changed(), "an edit of an untracked file"
    git(git_repo, "add", "notes/new.md")
    assert changed(), "staging"
    commit_all(git_repo, "work")
    assert changed(), "a commit"
    committed = seen[-1]
    (git_repo / "notes" / "new.md").unlink()
    assert changed(), "a deletion"
    git(git_repo, "checkout", "-q", "--", "notes/new.md")
    # A clean tree at the same commit is the same state again.
    assert tree_fingerprint(git_repo) == committed
    git(git_repo, "mv", "notes/new.md", "notes/renamed.md")
    assert changed(), "a rename"
    git(git_repo, "checkout", "-q", "-b", "topic")
    assert changed(), "another branch"


def test_a_second_edit_of_a_file_with_a_space_in_its_name(git_repo: Path) -> None:
    target = git_repo / "my notes ü.txt"
    target.write_text("one\n")
    commit_all(git_repo, "notes")
    target.write_text("two\n")
    after_first = tree_fingerprint(git_repo)
    target.write_text("2wo\n")
    touch_later(target)
    assert tree_fingerprint(git_repo) != after_first


def test_the_loops_own_files_and_ignored_files_do_not_count(git_repo: Path) -> None:
    (git_repo / ".gitignore").write_text("build/\n")
    commit_all(git_repo, "ignore build")
    before = tree_fingerprint(git_repo)
    own = git_repo / ".claude" / "ralph"
    (own / "loops").mkdir(parents=True)
    (own / "loops" / "session.json").write_text("{}")
    (own / "reports").mkdir()
    (own / "reports" / "r.md").write_text("# report\n")
    (git_repo / "build").mkdir()
    (git_repo / "build" / "out.o").write_text("binary")
    assert tree_fingerprint(git_repo) == before
    # Other files under .claude are the project's own.
    (git_repo / ".claude" / "settings.json").write_text("{}")
    assert tree_fingerprint(git_repo) != before


def test_fingerprint_from_a_subdirectory_covers_the_whole_tree(git_repo: Path) -> None:
    sub = git_repo / "src"
    sub.mkdir()
    (sub / "a.py").write_text("a = 1\n")
    commit_all(git_repo, "src")
    before = tree_fingerprint(git_repo)
    (git_repo / "README.md").write_text("changed outside src\n")
    assert tree_fingerprint(git_repo) != before


def test_changed_files_since_a_commit(git_repo: Path) -> None:
    baseline = git(git_repo, "rev-parse", "HEAD")
    (git_repo / "src").mkdir()
    (git_repo / "src" / "committed.py").write_text("x = 1\n")
    commit_all(git_repo, "committed")
    (git_repo / "staged.py").write_text("y = 1\n")
    git(git_repo, "add", "staged.py")
    (git_repo / "README.md").write_text("unstaged edit\n")
    (git_repo / "untracked dir").mkdir()
    (git_repo / "untracked dir" / "new é.txt").write_text("new\n")
    (git_repo / ".claude" / "ralph").mkdir(parents=True)
    (git_repo / ".claude" / "ralph" / "finesse.log").write_text("log\n")
    assert changed_files(git_repo, baseline) == [
        "README.md", "src/committed.py", "staged.py", "untracked dir/new é.txt",
    ]
    # Without a baseline (the loop started before the first commit) only new files show.
    assert changed_files(git_repo, None) == ["untracked dir/new é.txt"]


def test_changed_files_lists_deletions_and_ignores_ignored_files(git_repo: Path) -> None:
    (git_repo / ".gitignore").write_text("*.log\n")
    baseline = commit_all(git_repo, "ignore logs")
    (git_repo / "README.md").unlink()
    (git_repo / "debug.log").write_text("noise\n")
    assert changed_files(git_repo, baseline) == ["README.md"]


def test_changed_files_with_an_unknown_baseline(git_repo: Path) -> None:
    (git_repo / "new.txt").write_text("new\n")
    # A baseline that no longer exists (history rewritten) still lists the new files.
    assert changed_files(git_repo, "0" * 40) == ["new.txt"]


def test_projects_below_are_those_holding_loop_files(git_repo: Path) -> None:
    write(git_repo, ".gitignore", "ignored/\n")
    for project in ("pkg", "deep/er/pkg", "ignored/pkg", "with space"):
        write(git_repo, f"{project}/.claude/ralph/loops/s.json", "{}\n")
    write(git_repo, ".claude/ralph/loops/s.json", "{}\n")  # the root's own: not below it
    write(git_repo, "other/.claude/ralph/history/old.json", "{}\n")  # no loop file
    write(git_repo, "pkg2/loops/s.json", "{}\n")
    assert projects_below(git_repo) == [
        git_repo / name for name in ("deep/er/pkg", "ignored/pkg", "pkg", "with space")]
    assert projects_below(git_repo / "deep") == [git_repo / "deep/er/pkg"]


def test_no_projects_below_outside_git(plain_dir: Path) -> None:
    write(plain_dir, "pkg/.claude/ralph/loops/s.json", "{}\n")
    assert projects_below(plain_dir) == []
