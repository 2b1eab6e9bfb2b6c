"""Git for gate mode: refuse to start on an unsafe tree, commit a green iteration, and put a
red one back to the commit it started from.

Through GitPython (gate mode only, never on the no-loop Stop path), which runs the `git`
binary in the working tree's top directory; paths in results are relative to that top.
Everything under `<root>/.claude/ralph/` (the loop's own state, history and reports) is out
of scope for every query, commit and revert, whether or not the project ignores it, and so
is anything git ignores. Nothing here pushes, changes branch, moves a branch backwards, or
rewrites a commit. Commits skip the project's pre-commit and commit-msg hooks
(`--no-verify`): the gate commands are the loop's check, and a hook that rejects or
rewrites an automated commit would stop an unattended loop for no reason of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import git

from finesse.errors import FinesseError, UsageError

OWN_DIR = ".claude/ralph"
SUBJECT_LIMIT = 72
GIT_TIMEOUT_SECONDS = 60.0
# Used for commits only when git has no configured identity: see _identity_env.
FALLBACK_NAME = "finesse"
FALLBACK_EMAIL = "finesse@localhost"


class GateError(FinesseError):
    """Git could not do what gate mode needed; str(err) is one line saying what failed."""


@dataclass(frozen=True)
class RevertResult:
    """What revert_to did, for the loop history and the report; paths sorted, from the top.

    `restored`: tracked files put back to their content at `commit` (modified or deleted by
    the iteration). `removed`: files the iteration created and revert_to deleted. When the
    agent committed during the iteration, `undone_commits` lists its commits (oldest first)
    and `revert_commit` is the new commit on top that restores the tree of `commit` (None
    when the agent's commits and edits added up to no change).
    """

    commit: str
    restored: tuple[str, ...]
    removed: tuple[str, ...]
    undone_commits: tuple[str, ...] = ()
    revert_commit: str | None = None


class _Project:
    """A repository opened at a project root, with the pathspec that leaves out OWN_DIR."""

    def __init__(self, repo: git.Repo, root: Path) -> None:
        self.repo = repo
        assert repo.working_tree_dir is not None
        self.top = Path(repo.working_tree_dir).resolve()
        own = root.resolve() / OWN_DIR
        self.own = own.relative_to(self.top).as_posix() if own.is_relative_to(self.top) else OWN_DIR
        self.scope = ("--", ".", f":(exclude){self.own}")

    def run(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
        status, out, err = self.repo.git.execute(
            ["git", *args], with_extended_output=True, with_exceptions=False,
            kill_after_timeout=GIT_TIMEOUT_SECONDS, env=env,
        )
        return status, str(out), str(err)

    def out(self, *args: str, env: dict[str, str] | None = None) -> str:
        status, out, err = self.run(*args, env=env)
        if status != 0:
            lines = [line.strip() for line in err.splitlines() if line.strip()]
            reason = lines[-1] if lines else f"exit status {status}"
            raise GateError(f"git {args[0]} failed in {self.top}: {reason}")
        return out

    def head(self) -> str:
        status, out, _ = self.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        if status != 0:
            raise GateError(f"{self.top} has no commit yet: gate mode needs one to start from")
        return out.strip()

    def untracked(self) -> set[str]:
        """Untracked files git does not ignore; a nested repository (`dir/`) is left out."""
        out = self.out("ls-files", "--others", "--exclude-standard", "-z", *self.scope)
        return {name for name in out.split("\0") if name and not name.endswith("/")}


@contextmanager
def _open(root: Path) -> Iterator[_Project]:
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GateError(f"{root} is not in a git repository") from None
    try:
        if repo.bare or repo.working_tree_dir is None:
            raise GateError(f"{root} is in a bare git repository, with no working tree")
        yield _Project(repo, root)
    finally:
        repo.close()


def _changes(project: _Project) -> list[str]:
    """Paths with uncommitted changes: tracked, staged, or untracked and not ignored."""
    out = project.out("status", "--porcelain", "-z", "--no-renames", "--untracked-files=all",
                      *project.scope)
    return [entry[3:] for entry in out.split("\0") if entry]


def check_can_gate(root: Path, *, allow_dirty: bool) -> None:
    """Refuse, with a UsageError saying what to do, a tree gate mode cannot safely run on.

    Outside a git repository, before the first commit, on a detached HEAD, or with
    uncommitted changes (tracked, staged, or untracked and not ignored) unless
    `allow_dirty`. Files under `.claude/ralph/` and ignored files never count as changes.
    """
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UsageError(
            f"gate mode needs a git repository and {root} is not in one: run `git init` and "
            "commit the project first, or leave out --gate"
        ) from None
    with repo:
        if repo.bare or repo.working_tree_dir is None:
            raise UsageError(
                f"gate mode needs a working tree and {root} is in a bare repository: "
                "run it in a checkout instead"
            )
        project = _Project(repo, root)
        if not repo.head.is_valid():
            raise UsageError(
                "gate mode needs a commit to revert to and this repository has none yet: "
                "commit the project (`git add -A && git commit -m initial`) first"
            )
        if repo.head.is_detached:
            raise UsageError(
                f"gate mode commits on a branch and HEAD is detached at {project.head()[:12]}: "
                "run `git switch <branch>` (or `git switch -c <new-branch>`) first"
            )
        changed = [] if allow_dirty else _changes(project)
        if changed:
            more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
            raise UsageError(
                f"gate mode needs a clean working tree and {changed[0]}{more} has uncommitted "
                "changes: commit or stash them, or pass --allow-dirty to commit them as a "
                "snapshot first"
            )


def _identity_env(project: _Project) -> dict[str, str]:
    """FALLBACK_NAME <FALLBACK_EMAIL> for the author or committer git has no identity for.

    An identity counts as configured when git can name it without guessing: from git config
    (`user.*`, `author.*`, `committer.*`) or GIT_AUTHOR_*/GIT_COMMITTER_* in the environment.
    Otherwise git would commit as a guessed `user@host`, or refuse to commit at all and stop
    an unattended loop; the fallback makes the loop's commits plain to see instead.
    """
    env: dict[str, str] = {}
    for role in ("AUTHOR", "COMMITTER"):
        status, _, _ = project.run("-c", "user.useConfigOnly=true", "var", f"GIT_{role}_IDENT")
        if status != 0:
            env[f"GIT_{role}_NAME"] = FALLBACK_NAME
            env[f"GIT_{role}_EMAIL"] = FALLBACK_EMAIL
    return env


def _staged_anything(project: _Project) -> bool:
    """Whether the index differs from HEAD, after unstaging whatever is staged in OWN_DIR
    (an agent's `git add -A` stages the loop's files too when the project does not ignore
    them)."""
    if project.out("diff", "--cached", "--name-only", "-z", "--", project.own):
        project.out("restore", "--staged", "--", project.own)
    return bool(project.out("diff", "--cached", "--name-only", "-z"))


def _stage_all(project: _Project) -> bool:
    """Stage every change outside OWN_DIR: tracked, deleted, and untracked not ignored."""
    project.out("add", "--all", *project.scope)
    return _staged_anything(project)


def _commit(project: _Project, message: str) -> str:
    # --cleanup=whitespace: a `commit.cleanup=strip` setting would drop a summary line that
    # starts with "#".
    project.out("commit", "--quiet", "--no-verify", "--cleanup=whitespace", "-m", message,
                env=_identity_env(project))
    return project.head()


def snapshot(root: Path, message: str) -> str | None:
    """Commit the starting state (for --allow-dirty) as its own commit, with `message`.

    Every change outside `.claude/ralph/` is committed: tracked, staged, deleted, and
    untracked files git does not ignore. Returns the new commit's sha, or None when there
    was nothing to commit.
    """
    with _open(root) as project:
        return _commit(project, message) if _stage_all(project) else None


def _subject_text(summary: str) -> str:
    for line in summary.splitlines():
        words = line.split()
        if words:
            return " ".join(words)
    return "no summary"


def commit_message(*, iteration: int, summary: str, loop_id: str) -> str:
    """`ralph: iteration N: <summary's first non-blank line>`, a blank line, the trailer.

    The subject is kept to SUBJECT_LIMIT characters, cut at a word where it can be and
    ended with "..."; whitespace runs become one space; an empty summary reads "no summary".
    """
    if not loop_id or len(loop_id.split()) != 1 or loop_id != loop_id.strip():
        raise ValueError(f"a loop id is one word, got {loop_id!r}")
    prefix = f"ralph: iteration {iteration}: "
    text = _subject_text(summary)
    room = SUBJECT_LIMIT - len(prefix)
    if len(text) > room:
        cut = text[: room - 3]
        space = cut.rfind(" ")
        if space > len(cut) // 2:
            cut = cut[:space]
        text = cut.rstrip() + "..."
    return f"{prefix}{text}\n\nRalph-Loop: {loop_id}\n"


def commit_iteration(root: Path, *, iteration: int, summary: str, loop_id: str) -> str | None:
    """Commit what a green iteration changed, on the current branch; return the sha.

    Stages tracked changes, deletions and new files git does not ignore, never anything
    under `.claude/ralph/`, and commits with commit_message(). Returns None, making no
    commit, when the iteration changed nothing. The repository's identity is used; when git
    has none configured, author and committer are `finesse <finesse@localhost>` instead of
    a failed commit. Commits the agent made itself during the iteration stay as they are:
    compare head_sha() with the iteration's start to see them.
    """
    message = commit_message(iteration=iteration, summary=summary, loop_id=loop_id)
    with _open(root) as project:
        return _commit(project, message) if _stage_all(project) else None


def _remove_created(project: _Project, names: list[str]) -> None:
    """Delete these files, then each parent directory their removal leaves empty."""
    for name in names:
        path = project.top / name
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as error:
            raise GateError(f"could not remove {name} while reverting: {error.strerror}") from None
        parent = path.parent
        while parent != project.top:
            try:
                parent.rmdir()
            except OSError:  # not empty (or not ours to remove): stop here
                break
            parent = parent.parent


def _diff_paths(project: _Project, commit: str) -> tuple[list[str], list[str]]:
    """Tracked paths that differ from `commit`: (changed or deleted, added since `commit`)."""
    out = project.out("diff", "--no-renames", "--name-status", "-z", commit, *project.scope)
    fields = [field for field in out.split("\0") if field]
    changed: list[str] = []
    added: list[str] = []
    for status, name in zip(fields[::2], fields[1::2], strict=True):
        (added if status == "A" else changed).append(name)
    return changed, added


def revert_to(root: Path, commit: str, *, loop_id: str | None = None) -> RevertResult:
    """Put the working tree and index back to `commit`, the commit the iteration started from.

    Tracked files are restored (modified and deleted ones), staged changes dropped, files
    the iteration created removed (untracked ones git does not ignore, and ones it staged),
    with the directories their removal leaves empty. `.claude/ralph/` and everything git
    ignores are never touched. Ignored means ignored by `commit`'s rules: `.gitignore` files
    are restored before untracked files are listed, so an iteration that edits them can
    neither get a file ignored before it, such as `.env`, deleted, nor hide a file it made.
    This relies on the iteration starting from a clean tree (check_can_gate, snapshot): an
    untracked file git does not ignore is taken to be the iteration's. An untracked nested
    git repository is left in place, as `git clean` without -ff would.

    HEAD normally is `commit` and does not move. If the agent committed during the
    iteration, HEAD is a descendant of `commit` on the same branch: those commits are the
    iteration's changes, yet rewriting them is off limits (the branch is never moved back),
    so a new commit on top restores the tree of `commit` outside `.claude/ralph/`
    (message "ralph: revert to <sha>", with a Ralph-Loop trailer when `loop_id` is given).
    Every commit stays reachable and listed in the result. Any other move of HEAD (detached,
    reset, amended or rebased away from `commit`) raises GateError and changes nothing:
    there is no safe guess at what the agent meant.
    """
    with _open(root) as project:
        status, out, _ = project.run("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
        if status != 0:
            raise GateError(f"cannot revert to {commit}: no such commit in {project.top}")
        target = out.strip()
        head = project.head()
        undone: tuple[str, ...] = ()
        if head != target:
            if project.repo.head.is_detached:
                raise GateError(
                    f"HEAD was detached at {head[:12]} during the iteration; not reverting: "
                    f"switch back to the loop's branch, at or after {target[:12]}"
                )
            status, _, _ = project.run("merge-base", "--is-ancestor", target, head)
            if status != 0:
                raise GateError(
                    f"the branch moved off {target[:12]} during the iteration (reset, amend "
                    f"or rebase); not reverting: restore it by hand (git reflog lists both)"
                )
            undone = tuple(project.out("rev-list", "--reverse", f"{target}..{head}").split())
        changed, added = _diff_paths(project, target)
        # Tracked files first, .gitignore files among them, so that what counts as ignored
        # below is what `commit` ignores.
        project.out("restore", f"--source={target}", "--staged", "--worktree", *project.scope)
        created = sorted(project.untracked())
        _remove_created(project, created)
        revert_commit = None
        if undone and _staged_anything(project):
            trailer = f"\n\nRalph-Loop: {loop_id}" if loop_id else ""
            revert_commit = _commit(project, f"ralph: revert to {target[:12]}{trailer}\n")
        return RevertResult(
            commit=target,
            restored=tuple(sorted(changed)),
            removed=tuple(sorted({*added, *created})),
            undone_commits=undone,
            revert_commit=revert_commit,
        )


def head_sha(root: Path) -> str:
    """The sha of HEAD; GateError outside a repository or before the first commit."""
    with _open(root) as project:
        return project.head()


def is_linked_worktree(root: Path) -> bool:
    """Whether `root` is in a worktree made by `git worktree add`, not the main one."""
    with _open(root) as project:
        return Path(project.repo.git_dir).resolve() != Path(project.repo.common_dir).resolve()
