"""The only door to git. It is one piece on purpose, over the usual 300 lines: everything
finesse asks of git is here, so there is one place that knows how git is run, what the
project's scope is, and which folder is never touched.

Two technologies, each where it fits, and nothing else in finesse talks to git:

- **The git binary** (`Git`), for everything on a looping session's Stop path: HEAD, the
  working tree's fingerprint, what a loop changed, and gate mode's snapshot, commit and
  revert (`finesse.loop.gate` builds those from `Git.run`). Importing GitPython costs
  several times the whole Stop hook budget, so the hot path runs `git` directly.
- **GitPython** (`Repository`), off the Stop path: the Finesse tools' baseline commit, the
  exploration cache's staleness and the retro's commit log, where start-up does not matter
  and its commit objects save parsing.

Scope. Every query runs in the project root with the pathspec `.`, so a project that is a
subdirectory of a larger repository (a monorepo) only ever sees and touches its own files;
paths come back relative to the project root. The plugin's own folder, `OWN_DIR` under the
project root, is left out of every query, commit and revert: `OWN_EXCLUDE` is the one place
that rule is written.

Names. Git prints paths as bytes (`-z`, never quoted); they are decoded with `os.fsdecode`,
so a file name that is not UTF-8 survives the round trip to the file system and back.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from finesse.errors import FinesseError
from finesse.record import Record
from finesse.support.files import open_regular
from finesse.support.fingerprint import Fingerprint
from finesse.support.layout import LOOPS_DIR, OWN_DIR

if TYPE_CHECKING:
    import git as gitpython

# Relative to the project root, where every command runs.
OWN_EXCLUDE = f":(exclude){OWN_DIR}"
SCOPE = ("--", ".", OWN_EXCLUDE)
GIT_TIMEOUT_SECONDS = 60.0


class GitError(FinesseError):
    """Git could not do what was asked; str(err) is one line saying what failed."""


class Completed(Record):
    code: int
    out: bytes
    err: bytes

    def reason(self) -> str:
        """The last line git printed on stderr, or the exit status."""
        lines = [line.strip() for line in os.fsdecode(self.err).splitlines() if line.strip()]
        return lines[-1] if lines else f"exit status {self.code}"


def join_names(names: Sequence[str]) -> bytes:
    """Names for `--pathspec-from-file=- --pathspec-file-nul`, encoded as the file system
    holds them."""
    return b"".join(os.fsencode(name) + b"\0" for name in names)


def split_names(out: bytes) -> list[str]:
    """The NUL-separated names of a `-z` listing, decoded for the file system."""
    return [os.fsdecode(name) for name in out.split(b"\0") if name]


class Git:
    """The git binary, run in the project root `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def run(self, *args: str, env: dict[str, str] | None = None, data: bytes | None = None,
            timeout: float = GIT_TIMEOUT_SECONDS) -> Completed:
        """Run `git ARGS` (`data` on its stdin); an unstartable or hung git is exit code -1,
        never an exception."""
        try:
            done = subprocess.run(
                ["git", *args], cwd=self.root, capture_output=True, timeout=timeout,
                input=data, stdin=subprocess.DEVNULL if data is None else None,
                env=None if env is None else {**os.environ, **env},
            )
        except (OSError, ValueError, subprocess.TimeoutExpired) as err:
            return Completed(-1, b"", str(err).encode())
        return Completed(done.returncode, done.stdout, done.stderr)

    def out(self, *args: str, env: dict[str, str] | None = None,
            data: bytes | None = None) -> bytes:
        """Run `git ARGS` and return its stdout; a GitError naming the command on failure."""
        done = self.run(*args, env=env, data=data)
        if done.code != 0:
            raise GitError(f"git {args[0]} failed in {self.root}: {done.reason()}")
        return done.out

    def text(self, *args: str) -> str | None:
        """The stripped stdout of `git ARGS`, or None when it fails."""
        done = self.run(*args)
        return os.fsdecode(done.out).strip() if done.code == 0 else None


# --- the Stop path ---------------------------------------------------------------------------


def work_tree_top(root: Path) -> Path:
    """The top of the work tree holding `root`: the nearest directory with a `.git` (a
    folder, or the file of a linked worktree or submodule); `root` itself when none."""
    start = root.absolute()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def head(root: Path) -> str | None:
    """The commit HEAD names; None outside git or before the first commit."""
    return Git(root).text("rev-parse", "--verify", "-q", "HEAD^{commit}") or None


def tree_fingerprint(root: Path) -> str | None:
    """Changes when the agent commits, edits, creates or deletes a file; None outside git.

    HEAD, the porcelain status, and the size and modification time of each changed path
    (so a second edit to an already modified file counts too).
    """
    done = Git(root).run("status", "--porcelain=v2", "-z", "--branch",
                         "--untracked-files=all", *SCOPE)
    if done.code != 0:
        return None
    status = done.out
    top = work_tree_top(root)
    digest = Fingerprint(status)
    for entry in status.split(b"\0"):
        if not entry or entry.startswith(b"#"):
            continue
        fields_before_path = {b"1": 8, b"2": 9, b"u": 10}.get(entry[:1])
        if fields_before_path is None:
            name = entry[2:]  # "? path": untracked (a rename's original path lands here too)
        else:
            name = entry.split(b" ", fields_before_path)[-1]
        try:
            info = os.stat(top / os.fsdecode(name))  # status names are from the top
        except (OSError, ValueError):
            continue
        digest.update(f"{info.st_size}:{info.st_mtime_ns}".encode())
    return digest.hexdigest()


def projects_below(root: Path) -> list[Path]:
    """Projects inside `root`'s work tree below `root` (a monorepo's packages) holding loop
    files (`LOOPS_DIR/*.json`), whether git ignores them or not; [] outside git."""
    done = Git(root).run("ls-files", "-z", "--others", "--", f":(glob)**/{LOOPS_DIR}/*.json",
                         OWN_EXCLUDE)
    if done.code != 0:
        return []
    marker = f"/{LOOPS_DIR}/"
    return sorted({root / ("/" + name).rsplit(marker, 1)[0].lstrip("/")
                   for name in split_names(done.out)})


def changed_files(root: Path, since: str | None) -> list[str]:
    """Files changed since the commit `since`: committed, staged, unstaged and untracked,
    relative to the project root."""
    git = Git(root)
    names: set[str] = set()
    if since:
        done = git.run("diff", "--name-only", "--relative", "-z", since, *SCOPE)
        if done.code == 0:
            names.update(split_names(done.out))
    done = git.run("ls-files", "--others", "--exclude-standard", "-z", *SCOPE)
    if done.code == 0:
        names.update(split_names(done.out))
    return sorted(names)


def stat_key(root: Path, name: str) -> str:
    """A file's name with its size and modification time: equal keys, untouched file."""
    try:
        info = os.stat(root / name)
    except (OSError, ValueError):
        return f"{name}\tgone"
    return f"{name}\t{info.st_size}\t{info.st_mtime_ns}"


def dirty_snapshot(root: Path, baseline: str | None) -> list[str]:
    """The files already changed when a loop starts, each with its size and mtime."""
    return [stat_key(root, name) for name in changed_files(root, baseline)]


def changed_by_loop(root: Path, baseline: str | None, snapshot: Sequence[str]) -> list[str]:
    """Files changed since the loop started: those changed since the baseline commit, less
    the ones that were already changed then and have not been touched since."""
    untouched = set(snapshot)
    return [name for name in changed_files(root, baseline)
            if stat_key(root, name) not in untouched]


class LineChanges(Record):
    added: int
    removed: int
    binary: int = 0  # files git counts no lines of


def line_changes(root: Path, since: str | None, names: Sequence[str]) -> LineChanges | None:
    """Lines added and removed in `names` (relative to the project root) since the commit
    `since`, committed or not; a new untracked file counts all its lines as added. None
    outside git or without a starting commit."""
    git = Git(root)
    if not since or not names:
        return None if not since else LineChanges(0, 0)
    # The whole scope's numbers, then only the named files (`git diff` takes no pathspec
    # file, and a command line of thousands of names could be too long).
    done = git.run("diff", "--numstat", "--no-renames", "-z", "--relative", since, *SCOPE)
    if done.code != 0:
        return None
    wanted = set(names)
    added = removed = binary = 0
    seen: set[str] = set()
    for record in done.out.split(b"\0"):
        parts = record.split(b"\t", 2)
        if len(parts) != 3 or os.fsdecode(parts[2]) not in wanted:
            continue
        if parts[0] == b"-":
            binary += 1
        else:
            added, removed = added + int(parts[0]), removed + int(parts[1])
        seen.add(os.fsdecode(parts[2]))
    for name in names:
        if name in seen:
            continue
        lines = _count_lines(root / name)
        if lines is None:
            binary += 1
        else:
            added += lines
    return LineChanges(added, removed, binary)


def _count_lines(path: Path, limit: int = 64 * 1024 * 1024) -> int | None:
    """Lines of a regular text file (a last line without a newline counts); None for a
    file that is gone, not regular, or holds a NUL byte (binary)."""
    handle = open_regular(path)  # a FIFO at the path must not hang the hook
    if handle is None:  # gone, a directory (a submodule), a FIFO
        return None
    with handle:
        try:
            data = handle.read(limit)
        except OSError:
            return None
    if b"\0" in data:
        return None
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


# --- off the Stop path: GitPython ------------------------------------------------------------


class LogEntry(Record):
    sha: str
    subject: str


class Repository:
    """The project's repository through GitPython; use `open_repository`."""

    def __init__(self, repo: gitpython.Repo, root: Path) -> None:
        self.repo = repo
        self.root = root
        self.top = Path(repo.working_tree_dir or root).resolve()

    def head(self) -> str | None:
        """HEAD's sha; None before the first commit."""
        try:
            return str(self.repo.head.commit.hexsha)
        except ValueError:
            return None

    def commit(self, name: str) -> str | None:
        """The sha of the commit `name` names (a tag peels to it; a tree id is None)."""
        import git as gitpython

        try:
            return str(self.repo.commit(f"{name}^{{commit}}").hexsha)
        except (gitpython.BadName, ValueError, gitpython.GitCommandError):
            return None

    def committed_at(self, sha: str) -> datetime:
        return self.repo.commit(sha).committed_datetime

    def log(self, base: str, tip: str) -> list[LogEntry]:
        """Commits after `base` up to `tip`, oldest first."""
        return [LogEntry(str(c.hexsha), str(c.summary))
                for c in self.repo.iter_commits(f"{base}..{tip}", reverse=True)]

    def name_status(self, base: str, tip: str) -> list[tuple[str, str]]:
        """(status letter, path from the top) of each file changed from `base` to `tip`."""
        out = self.repo.git.diff("--name-status", "--no-renames", "-z", base, tip, "--")
        fields = out.split("\0")
        return [(fields[i], fields[i + 1]) for i in range(0, len(fields) - 1, 2) if fields[i]]

    def changed_since(self, commit: str) -> frozenset[str] | None:
        """Paths (from the top) changed from `commit` to HEAD; None when `commit` is not a
        commit of this repository. A rename lists the old path too."""
        import git as gitpython

        try:
            self.repo.git.cat_file("-e", f"{commit}^{{commit}}")
        except gitpython.GitCommandError:
            return None
        out = self.repo.git.diff("--name-only", "--no-renames", "-z", f"{commit}..HEAD", "--")
        return frozenset(name for name in out.split("\0") if name)

    def uncommitted(self) -> list[str]:
        """Paths under the project root (from the top) changed since HEAD or untracked,
        leaving out OWN_DIR."""
        prefix = self.relative(self.root)
        own = OWN_DIR if prefix == "." else f"{prefix}/{OWN_DIR}"
        scope = ("--", prefix, f":(exclude){own}")
        # GitPython runs git at the top: both listings name paths from there.
        out = self.repo.git.diff("--name-only", "-z", "HEAD", *scope)
        untracked = self.repo.git.ls_files("--others", "--exclude-standard", "-z", *scope)
        return sorted({name for name in (*out.split("\0"), *untracked.split("\0")) if name})

    def relative(self, path: Path) -> str:
        """`path` relative to the top ("." for the top); a GitError when outside it."""
        resolved = path.resolve()
        try:
            return resolved.relative_to(self.top).as_posix() or "."
        except ValueError:
            raise GitError(f"{path} is outside the repository {self.top}; "
                           "name files inside it") from None


@contextmanager
def open_repository(root: Path) -> Iterator[Repository | None]:
    """The repository holding `root` (GitPython), or None when there is none."""
    import git as gitpython

    try:
        repo = gitpython.Repo(root, search_parent_directories=True)
    except (gitpython.InvalidGitRepositoryError, gitpython.NoSuchPathError):
        yield None
        return
    try:
        yield Repository(repo, root)
    finally:
        repo.close()
