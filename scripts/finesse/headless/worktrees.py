"""Git for `ralph run --graph`: where the run starts, one linked worktree and branch per
sub-workflow, and the merges back into the starting branch.

Every command goes through `finesse.support.git.Git`, in the project root or a worktree.
Worktrees live in the project, under `.ralph-worktrees/<session>/<task>`, so nothing is
written outside it; not under `.claude/`, where Claude Code treats every file as sensitive
and refuses an agent's writes (seen in 2.1.328, even with `--allowedTools Bash`). Git lists
a linked worktree inside the project as a nested repository, which finesse's checks of
uncommitted changes pass over. A worktree is removed only after its branch is merged (or
by the person, with `git worktree remove`); a branch is never deleted. Merges are
`--no-ff`, one merge commit per sub-workflow, and skip the pre-merge-commit and commit-msg
hooks like the gate's commits do; a merge that fails (a conflict, or a prepare-commit-msg
hook, which cannot be skipped) is undone at once with `git merge --abort`, so the starting
branch is always left at a clean commit.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from finesse.errors import FinesseError, UsageError
from finesse.loop.gate.commits import identity_env, snapshot
from finesse.support.git import SCOPE, Git, head, split_names

WORKTREES = ".ralph-worktrees"


class WorktreeError(FinesseError):
    """Git could not make or remove a sub-workflow's worktree; one line saying why."""


@dataclass(frozen=True)
class Start:
    """Where a graph run starts: the branch its merges go to, and its commit then."""

    branch: str  # refs/heads/...
    commit: str

    @property
    def short(self) -> str:
        return self.branch.removeprefix("refs/heads/")


@dataclass(frozen=True)
class Merge:
    commit: str | None = None  # the merge commit; None when it failed
    conflicts: list[str] = field(default_factory=list)
    error: str = ""


def branch_name(session: str, task: str) -> str:
    return str(PurePosixPath("ralph", session, task))


def merge_message(task: str, wave: int, session: str) -> str:
    """The message of a sub-workflow's merge commit, wherever its wave is merged."""
    return f"ralph: merge {task} (wave {wave} of {session})"


def worktree_path(root: Path, session: str, task: str) -> Path:
    return root / WORKTREES / session / task


def starting_point(root: Path) -> Start:
    """The branch and commit a graph run starts from; a UsageError when the project cannot
    hold one: outside git, no commit, a detached HEAD, or tracked changes not committed (a
    merge would mix them in). Untracked files are left alone."""
    git = Git(root)
    if git.text("rev-parse", "--is-inside-work-tree") != "true":
        raise UsageError(f"--graph needs a git repository and {root} is not in one: run "
                         "`git init` and commit the project first")
    commit = git.text("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if not commit:
        raise UsageError("--graph needs a commit to start the worktrees from: commit the "
                         "project (`git add -A && git commit -m initial`) first")
    branch = git.text("symbolic-ref", "--quiet", "HEAD")
    if not branch:
        raise UsageError(f"--graph merges each wave into the branch it starts on and HEAD is "
                         f"detached at {commit[:12]}: run `git switch <branch>` first")
    changed = sorted({*split_names(git.run("diff", "HEAD", "--name-only", "-z",
                                           *SCOPE).out)})
    if changed:
        more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
        raise UsageError(f"--graph merges into {branch.removeprefix('refs/heads/')} and "
                         f"{changed[0]}{more} has uncommitted changes: commit or stash them")
    return Start(branch, commit)


def branch_exists(root: Path, branch: str) -> bool:
    return Git(root).run("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}").code == 0


def branch_tip(root: Path, branch: str) -> str | None:
    return Git(root).text("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}") \
        or None


def is_ancestor(root: Path, commit: str, of: str) -> bool:
    return Git(root).run("merge-base", "--is-ancestor", commit, of).code == 0


def has_merge_of(root: Path, tip: str) -> bool:
    """Whether a merge commit in HEAD's history has `tip` as a parent other than its first
    (git's own record that the branch at `tip` was merged)."""
    done = Git(root).run("rev-list", "--merges", "--parents", "--ancestry-path",
                         f"{tip}..HEAD")
    lines = os.fsdecode(done.out).splitlines()
    return done.code == 0 and any(tip in line.split()[2:] for line in lines)


def reopen_worktree(root: Path, path: Path, branch: str) -> None:
    """The worktree of an existing branch, at `path`: the one a stopped run left there, or a
    new one (its branch as it is) when it was removed."""
    if (path / ".git").is_file() and \
            Git(path).text("symbolic-ref", "--quiet", "HEAD") == f"refs/heads/{branch}":
        return
    git = Git(root)
    git.run("worktree", "prune")
    path.parent.mkdir(parents=True, exist_ok=True)
    done = git.run("worktree", "add", "--quiet", str(path), branch)
    if done.code != 0:
        raise WorktreeError(f"git worktree add {path} {branch} failed: {done.reason()}")


def add_worktree(root: Path, path: Path, branch: str, base: str) -> None:
    """A new linked worktree at `path` on the new branch `branch`, at commit `base`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    done = Git(root).run("worktree", "add", "--quiet", "-b", branch, str(path), base)
    if done.code != 0:
        raise WorktreeError(f"git worktree add {path} failed: {done.reason()}")


def remove_worktree(root: Path, path: Path) -> str:
    """Remove a merged sub-workflow's worktree (its branch stays), and the folders that held
    it once they are empty; "" or why it could not."""
    done = Git(root).run("worktree", "remove", "--force", str(path))
    if done.code != 0:
        return f"git worktree remove {path} failed: {done.reason()}"
    for folder in (path.parent, path.parent.parent):
        if folder.name and folder != root:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty
    return ""


def remove_if_all_committed(root: Path, path: Path) -> str:
    """Remove the worktree of a branch already merged when nothing but finesse's own folder
    is left uncommitted in it (a run stopped between the merge and the removal); "" or why
    it is left where it is."""
    if not (path / ".git").is_file():
        return ""
    left = Git(path).run("status", "--porcelain", "-z", "--untracked-files=all", *SCOPE)
    if left.code != 0 or left.out:
        return f"its worktree {path} is left: it holds uncommitted changes"
    return remove_worktree(root, path)


def abort_own_merge(root: Path, session: str) -> str:
    """Undo a merge of this graph's left unfinished (a run killed between a failed merge and
    its `git merge --abort`); the line saying so, or "" when there was none. A merge that is
    not the graph's (its message says whose it is) is never touched."""
    git = Git(root)
    if git.run("rev-parse", "--verify", "--quiet", "MERGE_HEAD").code != 0:
        return ""
    message_path = git.text("rev-parse", "--git-path", "MERGE_MSG")
    message = ""
    if message_path:
        with contextlib.suppress(OSError):
            message = (root / message_path).read_text(encoding="utf-8", errors="replace")
    if not (message.startswith("ralph: merge ") and f" of {session})" in message.split("\n")[0]):
        return ""
    if git.run("merge", "--abort").code != 0:
        return ""
    return f"undid the unfinished merge {message.splitlines()[0]!r} a stopped run left"


def commit_leftovers(worktree: Path, task: str) -> str | None:
    """Commit what the sub-workflow left uncommitted in its worktree (its own folder aside),
    so that its branch holds all of its work; the sha, or None when nothing was left."""
    return snapshot(worktree, f"ralph: {task}: the work left uncommitted at its end")


def _prepare_hook(git: Git) -> Path | None:
    hooks = git.text("rev-parse", "--git-path", "hooks")
    if not hooks:
        return None
    hook = (Path(hooks) if Path(hooks).is_absolute() else git.root / hooks) / "prepare-commit-msg"
    return hook if hook.is_file() and os.access(hook, os.X_OK) else None


def merge(root: Path, branch: str, message: str) -> Merge:
    """Merge `branch` into the current branch with a merge commit. A conflict or any other
    failure is undone (`git merge --abort`) and reported: the conflicting files, or why."""
    git = Git(root)
    done = git.run("merge", "--no-ff", "--no-verify", "--no-edit", "-m", message,
                   f"refs/heads/{branch}", env=identity_env(root))
    if done.code == 0:
        return Merge(commit=head(root) or "")
    conflicts = split_names(git.run("diff", "--name-only", "--diff-filter=U", "-z").out)
    merging = git.run("rev-parse", "--verify", "--quiet", "MERGE_HEAD").code == 0
    reason = done.reason()
    if not conflicts:
        hook = _prepare_hook(git)
        reason = (f"the repository's prepare-commit-msg hook {hook} rejected the merge commit "
                  f"({reason})" if hook is not None and merging else f"git merge: {reason}")
    if merging and git.run("merge", "--abort").code != 0:
        reason += f"; `git merge --abort` failed too: finish or abort the merge in {root}"
    return Merge(conflicts=sorted(conflicts), error=reason)
