"""Gate mode's revert: a red iteration put back to the commit it started from, within the
project directory, never touching `.claude/ralph/`, ignored files, submodules' insides, or
anything outside the project. Through the git binary (`finesse.support.git.Git`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from finesse.loop.gate.commits import (
    GateError,
    commit_staged,
    current_branch,
    git_in,
    git_out,
    head_sha,
    untracked_in,
)
from finesse.record import Record
from finesse.support.files import shown_name
from finesse.support.git import SCOPE, Git, join_names

SUBMODULE_MODE = "160000"


class RevertResult(Record):
    """What revert_to did, for the loop history and the report; paths sorted, relative to
    the project root.

    `restored`: tracked files put back to their content at `commit` (modified or deleted by
    the iteration). `removed`: files the iteration created and revert_to deleted.
    `untouched`: submodules whose checkout changed; their insides are not reverted. When the
    agent committed during the iteration, `undone_commits` lists its commits (oldest first)
    and `revert_commit` is the new commit on top that restores the tree of `commit` (None
    when the agent's commits and edits added up to no change).
    """

    commit: str
    restored: tuple[str, ...]
    removed: tuple[str, ...]
    undone_commits: tuple[str, ...] = ()
    revert_commit: str | None = None
    untouched: tuple[str, ...] = ()


def _remove_created(root: Path, names: list[str]) -> None:
    """Delete these files, then each parent directory their removal leaves empty."""
    for name in names:
        path = root / name
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as error:
            raise GateError(f"could not remove {shown_name(name)} while reverting: "
                            f"{error.strerror}") from None
        parent = path.parent
        while parent != root and parent.is_relative_to(root):
            try:
                parent.rmdir()
            except OSError:  # not empty (or not ours to remove): stop here
                break
            parent = parent.parent


def _diff_paths(git: Git, commit: str) -> tuple[list[str], list[str], list[str]]:
    """Tracked paths that differ from `commit`: (changed or deleted, added, submodules)."""
    out = git_out(git, "diff", "--no-renames", "--raw", "--relative", "-z", commit, *SCOPE)
    fields = [field for field in out.split(b"\0") if field]
    changed: list[str] = []
    added: list[str] = []
    submodules: list[str] = []
    for info, raw_name in zip(fields[::2], fields[1::2], strict=True):
        # ":100644 100644 <sha> <sha> M"
        parts = info.decode().split()
        name = os.fsdecode(raw_name)
        if SUBMODULE_MODE in (parts[0].lstrip(":"), parts[1]):
            submodules.append(name)
        elif parts[-1] == "A":
            added.append(name)
        else:
            changed.append(name)
    return changed, added, submodules


def revert_to(root: Path, commit: str, *, loop_id: str | None = None,
              spare: Sequence[str] = ()) -> RevertResult:
    """Put the project back to `commit`, the commit the iteration started from.

    Tracked files are restored (modified and deleted ones), staged changes dropped, files
    the iteration created removed (untracked ones git does not ignore, and ones it staged),
    with the directories their removal leaves empty. An iteration starts from a clean
    project (a gate loop refuses a dirty start unless --allow-dirty, which commits it first,
    and every stop commits or reverts; a second loop in the work tree is refused), so an
    untracked file here is the iteration's. `spare` names files never restored or removed
    (the loop's own notebook, which records the attempt).
    `.claude/ralph/`, everything git ignores, and everything outside the project directory
    are never touched.
    Ignored means ignored by `commit`'s rules: `.gitignore` files are restored before
    untracked files are listed, so an iteration that edits them can neither get a file
    ignored before it, such as `.env`, deleted, nor hide a file it made. An untracked nested
    git repository is left in place, as `git clean` without -ff would. A submodule whose
    checkout the iteration changed is not reverted inside: it is listed in `untouched`.

    HEAD normally is `commit` and does not move. If the agent committed during the
    iteration, HEAD is a descendant of `commit` on the same branch: those commits are the
    iteration's changes, yet rewriting them is off limits (the branch is never moved back),
    so a new commit on top restores the project's tree at `commit` (message "ralph: revert
    to <sha>", with a Ralph-Loop trailer when `loop_id` is given). Every commit stays
    reachable and listed in the result. Any other move of HEAD (detached, reset, amended or
    rebased away from `commit`) raises GateError and changes nothing.
    """
    git = git_in(root)
    target = git.text("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    if not target:
        raise GateError(f"cannot revert to {commit}: no such commit in {root}")
    head = head_sha(root)
    undone: tuple[str, ...] = ()
    if head != target:
        if current_branch(root) is None:
            raise GateError(
                f"HEAD was detached at {head[:12]} during the iteration; not reverting: "
                f"switch back to the loop's branch, at or after {target[:12]}"
            )
        if git.run("merge-base", "--is-ancestor", target, head).code != 0:
            raise GateError(
                f"the branch moved off {target[:12]} during the iteration (reset, amend "
                f"or rebase); not reverting: restore it by hand (git reflog lists both)"
            )
        undone = tuple(git_out(git, "rev-list", "--reverse", f"{target}..{head}").decode().split())
    changed, added, submodules = _diff_paths(git, target)
    spared = set(spare)
    changed = [name for name in changed if name not in spared]
    added = [name for name in added if name not in spared]
    restorable = [*changed, *added]
    if restorable:
        # Tracked files first, .gitignore files among them, so that what counts as ignored
        # below is what `commit` ignores.
        git_out(git, "--literal-pathspecs", "restore", f"--source={target}", "--staged",
             "--worktree", "--pathspec-from-file=-", "--pathspec-file-nul",
             data=join_names(restorable))
    created = sorted(name for name in untracked_in(git) if name not in spared)
    _remove_created(root, created)
    revert_commit = None
    if undone:
        trailer = f"\n\nRalph-Loop: {loop_id}" if loop_id else ""
        # The restore staged the project's tree at `target` already: nothing more to add.
        revert_commit = commit_staged(git, f"ralph: revert to {target[:12]}{trailer}\n")
    return RevertResult(
        commit=target,
        restored=tuple(sorted(changed)),
        removed=tuple(sorted({*added, *created})),
        undone_commits=undone,
        revert_commit=revert_commit,
        untouched=tuple(sorted(submodules)),
    )


