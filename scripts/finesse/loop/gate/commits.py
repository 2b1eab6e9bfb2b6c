"""Git for gate mode: refuse to start on an unsafe tree, commit a green iteration, and put a
red one back to the commit it started from.

Everything runs the git binary through `finesse.support.git.Git`, in the project root, on
the Stop path of a gate loop (so no GitPython: its import alone would cost more than the
hook's budget). The scope of every query, commit and revert is the project directory
(`.`), less the plugin's own folder (`OWN_EXCLUDE`): in a monorepo, files outside the
project are never staged, committed, restored or removed, and a user's staged changes
outside it stay staged. Paths in results are relative to the project root. Nothing here
pushes, changes branch, moves a branch backwards, or rewrites a commit.

Files are staged by name (`--literal-pathspecs`, names fed NUL-separated), never by a
pathspec that names an ignored folder, so a project that ignores `.claude/` (or only
`.claude/ralph/`) works, and any byte in a file name survives.

Commits skip the project's pre-commit and commit-msg hooks (`--no-verify`): the gate
commands are the loop's check, and a hook that rejects an automated commit would stop an
unattended loop for no reason of its own. `prepare-commit-msg` cannot be skipped that way;
when it (or anything else) makes a commit fail, the index is put back exactly as it was and
the error names the hook.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from finesse.errors import FinesseError, UsageError
from finesse.loop.gate.commit_problems import commit_problem
from finesse.support.files import shown_name
from finesse.support.git import SCOPE, Git, GitError, join_names, split_names
from finesse.support.git_index import SavedIndex
from finesse.support.layout import OWN_DIR

SUBJECT_LIMIT = 72
# Used for commits only when git has no configured identity: see _identity_env.
FALLBACK_NAME = "finesse"
FALLBACK_EMAIL = "finesse@localhost"


class GateError(FinesseError):
    """Git could not do what gate mode needed; str(err) is one line saying what failed."""


def git_in(root: Path) -> Git:
    return Git(root)


def git_out(git: Git, *args: str, data: bytes | None = None) -> bytes:
    try:
        return git.out(*args, data=data)
    except GitError as err:
        raise GateError(str(err)) from None


def head_sha(root: Path) -> str:
    """The sha of HEAD; GateError outside a repository or before the first commit."""
    git = git_in(root)
    sha = git.text("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if sha:
        return sha
    if git.text("rev-parse", "--is-inside-work-tree") != "true":
        raise GateError(f"{root} is not in a git repository")
    raise GateError(f"{root} has no commit yet: gate mode needs one to start from")


def current_branch(root: Path) -> str | None:
    """The branch HEAD is on (`refs/heads/...`), None when HEAD is detached."""
    return git_in(root).text("symbolic-ref", "--quiet", "HEAD") or None


def _changes(git: Git) -> list[str]:
    """Paths with uncommitted changes: tracked or staged ones first, then untracked ones git
    does not ignore (the order `git status` shows)."""
    tracked = git_out(git, "diff", "HEAD", "--name-only", "--relative", "-z", *SCOPE)
    staged = git_out(git, "diff", "--cached", "--name-only", "--relative", "-z", *SCOPE)
    return [*sorted({*split_names(tracked), *split_names(staged)}), *sorted(untracked_in(git))]


def untracked_in(git: Git) -> list[str]:
    """Untracked files git does not ignore; a nested repository (`dir/`) is left out."""
    out = git_out(git, "ls-files", "--others", "--exclude-standard", "-z", *SCOPE)
    return [name for name in split_names(out) if not name.endswith("/")]


def check_can_gate(root: Path, *, allow_dirty: bool) -> None:
    """Refuse, with a UsageError saying what to do, a tree gate mode cannot safely run on.

    Outside a git repository, in a bare one, before the first commit, on a detached HEAD,
    or with uncommitted changes in the project (tracked, staged, or untracked and not
    ignored) unless `allow_dirty`. Files under `.claude/ralph/`, ignored files and files
    outside the project directory never count as changes.
    """
    git = git_in(root)
    inside = git.text("rev-parse", "--is-inside-work-tree")
    if inside != "true":
        bare = git.text("rev-parse", "--is-bare-repository") == "true"
        if bare:
            raise UsageError(f"gate mode needs a working tree and {root} is in a bare "
                             "repository: run it in a checkout instead")
        raise UsageError(
            f"gate mode needs a git repository and {root} is not in one: run `git init` and "
            "commit the project first, or leave out --gate"
        )
    if not git.text("rev-parse", "--verify", "--quiet", "HEAD^{commit}"):
        raise UsageError(
            "gate mode needs a commit to revert to and this repository has none yet: "
            "commit the project (`git add -A && git commit -m initial`) first"
        )
    if current_branch(root) is None:
        raise UsageError(
            f"gate mode commits on a branch and HEAD is detached at {head_sha(root)[:12]}: "
            "run `git switch <branch>` (or `git switch -c <new-branch>`) first"
        )
    changed = [] if allow_dirty else _changes(git)
    if changed:
        more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
        raise UsageError(
            f"gate mode needs a clean working tree and {shown_name(changed[0])}{more} has "
            "uncommitted changes: commit or stash them, or pass --allow-dirty to commit them "
            "as a snapshot first"
        )


def _identity_env(git: Git) -> dict[str, str]:
    """FALLBACK_NAME <FALLBACK_EMAIL> for the author or committer git has no identity for.

    An identity counts as configured when git can name it without guessing: from git config
    (`user.*`, `author.*`, `committer.*`) or GIT_AUTHOR_*/GIT_COMMITTER_* in the environment.
    Otherwise git would commit as a guessed `user@host`, or refuse to commit at all and stop
    an unattended loop; the fallback makes the loop's commits plain to see instead.
    """
    env: dict[str, str] = {}
    for role in ("AUTHOR", "COMMITTER"):
        if git.run("-c", "user.useConfigOnly=true", "var", f"GIT_{role}_IDENT").code != 0:
            env[f"GIT_{role}_NAME"] = FALLBACK_NAME
            env[f"GIT_{role}_EMAIL"] = FALLBACK_EMAIL
    return env


def index_path(git: Git) -> Path:
    name = git_out(git, "rev-parse", "--git-path", "index").decode().strip()
    return Path(name) if Path(name).is_absolute() else git.root / name


def _saved_index(git: Git) -> SavedIndex:
    """The index as it is now, to put back when a commit fails half-way."""
    return SavedIndex(index_path(git))


def _scope_changes(git: Git) -> list[str]:
    """Every path of the project (less OWN_DIR) whose state differs from the index or HEAD:
    modified, deleted, and untracked not ignored."""
    modified = git_out(git, "ls-files", "--modified", "--deleted", "-z", *SCOPE)
    staged = git_out(git, "diff", "--cached", "--name-only", "--relative", "-z", *SCOPE)
    names = {*split_names(modified), *split_names(staged), *untracked_in(git)}
    return sorted(name for name in names if _committable_kind(git.root / name))


def _committable_kind(path: Path) -> bool:
    """Whether git can stage what is at `path`: a file, a link, a folder (a submodule) or
    nothing (a deletion). A FIFO, socket or device in place of a file would fail the whole
    commit ("updating files failed"); it stays as it is, uncommitted."""
    try:
        mode = os.lstat(path).st_mode
    except (OSError, ValueError):
        return True
    return stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISDIR(mode)


def _stage(git: Git, names: Sequence[str]) -> None:
    if not names:
        return
    git_out(git, "--literal-pathspecs", "add", "--all", "--pathspec-from-file=-",
         "--pathspec-file-nul", data=join_names(names))


def _commit(git: Git, message: str, names: Sequence[str]) -> str | None:
    """Commit the changes of `names` (the project's, nothing else) with `message`; None
    when they add up to no change. On failure the index is put back as it was."""
    saved = _saved_index(git)
    try:
        _stage(git, names)
        staged = split_names(git_out(git, "diff", "--cached", "--name-only", "--relative", "-z",
                                  *SCOPE))
        if not staged:
            saved.restore()
            return None
        # --only with the staged names: a user's staged changes outside the project stay
        # staged and out of the commit. --cleanup=whitespace: a `commit.cleanup=strip`
        # setting would drop a summary line that starts with "#".
        done = git.run("--literal-pathspecs", "commit", "--quiet", "--no-verify",
                       "--cleanup=whitespace", "-m", message, "--only",
                       "--pathspec-from-file=-", "--pathspec-file-nul",
                       env=_identity_env(git), data=join_names(staged))
        if done.code != 0:
            raise GateError(commit_problem(git, done))
    except BaseException:
        saved.restore()
        raise
    _unstage_own(git)
    return head_sha(git.root)


def _unstage_own(git: Git) -> None:
    """An agent's `git add -A` stages the loop's own files too when the project does not
    ignore them; they never stay staged."""
    if git.run("diff", "--cached", "--quiet", "--", OWN_DIR).code == 1:
        git_out(git, "restore", "--staged", "--", OWN_DIR)


def commit_staged(git: Git, message: str) -> str | None:
    """Commit what is staged in the project (a revert's restore staged it)."""
    return _commit(git, message, [])


def snapshot(root: Path, message: str) -> str | None:
    """Commit the starting state (for --allow-dirty) as its own commit, with `message`.

    Every change in the project outside `.claude/ralph/` is committed: tracked, staged,
    deleted, and untracked files git does not ignore. Returns the new commit's sha, or None
    when there was nothing to commit.
    """
    git = git_in(root)
    return _commit(git, message, _scope_changes(git))


def _subject_text(summary: str) -> str:
    for line in summary.splitlines():
        words = line.split()
        if words:
            return " ".join(words)
    return "no summary"


def commit_message(*, iteration: int, summary: str, loop_id: str) -> str:
    """`ralph: iteration N: <summary's first non-blank line>`, a blank line, the trailer.

    The subject is kept to SUBJECT_LIMIT characters, cut at a word where it can be and
    ended with "..."; whitespace runs become one space; characters git cannot carry in a
    message (NUL, other control characters, lone surrogates) become U+FFFD; an empty
    summary reads "no summary".
    """
    if not loop_id or len(loop_id.split()) != 1 or loop_id != loop_id.strip():
        raise ValueError(f"a loop id is one word, got {loop_id!r}")
    prefix = f"ralph: iteration {iteration}: "
    text = _subject_text(_committable(summary))
    room = SUBJECT_LIMIT - len(prefix)
    if len(text) > room:
        cut = text[: room - 3]
        space = cut.rfind(" ")
        if space > len(cut) // 2:
            cut = cut[:space]
        text = cut.rstrip() + "..."
    return f"{prefix}{text}\n\nRalph-Loop: {loop_id}\n"


def _committable(text: str) -> str:
    return "".join("\ufffd" if (ord(char) < 32 and char not in "\n\t")
                   or "\ud800" <= char <= "\udfff" else char for char in text)


def commit_iteration(root: Path, *, iteration: int, summary: str, loop_id: str) -> str | None:
    """Commit what a green iteration changed in the project, on the current branch; return
    the sha, or None (no commit) when the iteration changed nothing.

    The repository's identity is used; when git has none configured, author and committer
    are `finesse <finesse@localhost>` instead of a failed commit. Commits the agent made
    itself during the iteration stay as they are: compare head_sha() with the iteration's
    start to see them.
    """
    message = commit_message(iteration=iteration, summary=summary, loop_id=loop_id)
    git = git_in(root)
    return _commit(git, message, _scope_changes(git))


def identity_env(root: Path) -> dict[str, str]:
    """The fallback identity for a commit the loop makes at `root` (a merge of `ralph run
    --graph` too), for the roles git has no configured identity for."""
    return _identity_env(git_in(root))

