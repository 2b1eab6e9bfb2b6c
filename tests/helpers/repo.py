"""git in a test project, run as a user would: the one way the tests ask or change git."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_out(root: Path, *args: str) -> str:
    """Run git in the project; its stdout as printed (trailing newline and all)."""
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def git(root: Path, *args: str) -> str:
    """Run git in the project; its stdout, stripped."""
    return git_out(root, *args).strip()


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD")


def branch(root: Path) -> str:
    return git(root, "symbolic-ref", "--short", "HEAD")


def branches(root: Path) -> dict[str, str]:
    """Every local branch and the commit it points at."""
    listed = git(root, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
    return dict(line.split() for line in listed.splitlines())


def commits(root: Path) -> list[str]:
    """The subjects of HEAD's history, newest first."""
    return git(root, "log", "--format=%s").splitlines()


def commit_count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def files_in(root: Path, rev: str = "HEAD") -> list[str]:
    return git_out(root, "ls-tree", "-r", "--name-only", rev).splitlines()


def status(root: Path) -> str:
    """`git status --porcelain` as printed (untracked directories shown whole)."""
    return git_out(root, "status", "--porcelain", "--untracked-files=normal")


def project_status(root: Path) -> str:
    """`git status` of everything but the loop's own files, every untracked file listed."""
    return git(root, "status", "--porcelain", "--untracked-files=all", "--", ".",
               ":(exclude).claude")


def status_but(root: Path, left_out: str) -> str:
    """`git status --porcelain` as printed, of everything under `root` but `left_out`, every
    untracked file listed (the first line keeps its leading space, unlike project_status)."""
    return git_out(root, "status", "--porcelain", "--untracked-files=all", "--", ".",
                   f":(exclude){left_out}")


def write(root: Path, name: str, text: str) -> Path:
    """Write a file of the project, making its directories."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def staged(root: Path) -> str:
    """`git diff --cached --name-only` of the whole repository: what is staged."""
    return git_out(root, "diff", "--cached", "--name-only", ":/")


def install_hook(root: Path, name: str, script: str) -> Path:
    """An executable git hook `name` running the shell `script`, where git looks for it (a
    linked worktree's hooks are the main repository's)."""
    hooks = Path(git(root, "rev-parse", "--path-format=absolute", "--git-path", "hooks"))
    hook = write(hooks, name, f"#!/bin/sh\n{script}\n")
    hook.chmod(0o755)
    return hook


def add_submodule(root: Path, source: Path, name: str) -> None:
    """A new repository at `source` with one file, `lib.txt`, added to the project as the
    submodule `name` and committed."""
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    write(source, "lib.txt", "lib v1\n")
    git(source, "add", "lib.txt")
    git(source, "commit", "-q", "-m", "lib")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), name)
    git(root, "commit", "-q", "-m", f"add the submodule {name}")
