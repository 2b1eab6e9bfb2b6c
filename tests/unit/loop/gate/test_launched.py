"""Gate mode's hard cases (issue 10), each in a real git repository and driven through the
hook launcher as Claude Code runs it (`/ralph-loop ... --gate` typed, then the stops): a
project that ignores `.claude/`, a project in a monorepo, two loops in one checkout (in one
project, or in projects one above the other), a branch switched during an iteration,
failing git hooks, and a submodule edited by a reverted iteration."""

from __future__ import annotations

from pathlib import Path

import pytest

from finesse.models import LoopState
from tests.helpers.gate import GATE, gate_section
from tests.helpers.launch import LaunchedSession
from tests.helpers.repo import (
    add_submodule,
    branches,
    commits,
    files_in,
    git,
    head,
    install_hook,
    project_status,
    staged,
    status_but,
    write,
)
from tests.helpers.states import OTHER_SESSION, SESSION, active, gate_of, only_archived, store_for
from tests.helpers.texts import REVERTED_NOTE

START = f'/ralph-loop Work --gate "{GATE}"'


def started(claude: LaunchedSession, prompt: str = START) -> None:
    output = claude.submit(prompt).output()
    assert output is not None and "hookSpecificOutput" in output, output


def goes_on(claude: LaunchedSession, reply: str) -> str:
    """Stop after `reply`; the loop must go on. Returns the next prompt."""
    output = claude.stop(reply).output()
    assert output is not None and "hookSpecificOutput" in output, output
    return str(output["hookSpecificOutput"]["additionalContext"])


def ends(claude: LaunchedSession, reply: str) -> tuple[str, LoopState, str]:
    """Stop after `reply`; the loop must end. Returns the banner, the archived loop and its
    report."""
    output = claude.stop(reply).output()
    assert output is not None and set(output) == {"systemMessage"}, output
    loop = only_archived(claude.root)
    return output["systemMessage"], loop, Path(loop.report_path).read_text()


def report_link(loop: LoopState) -> str:
    return f"Report: .claude/ralph/reports/{loop.loop_id}.md"


def changed_in(root: Path, rev: str = "HEAD") -> str:
    """The files commit `rev` changed, with their status letters, paths from the top."""
    return git(root, "show", "--name-status", "--format=", rev, "--", ":/")


# --- 1. a project that ignores .claude/ (or only .claude/ralph/) ----------------------------------


@pytest.mark.parametrize("ignored", [".claude/", ".claude/ralph/"])
def test_a_project_ignoring_the_loops_folder_gets_its_commits(git_repo: Path,
                                                               ignored: str) -> None:
    write(git_repo, ".gitignore", f"{ignored}\n")
    git(git_repo, "add", ".gitignore")
    git(git_repo, "commit", "-q", "-m", "ignore the loop's folder")
    before = commits(git_repo)
    claude = LaunchedSession(git_repo, SESSION)
    started(claude)
    write(git_repo, "src/feature.py", "FEATURE = 1\n")
    write(git_repo, "README.md", "project, with a feature\n")
    goes_on(claude, "Approach: add the feature")
    assert commits(git_repo) == ["ralph: iteration 1: add the feature", *before]
    assert changed_in(git_repo) == "M\tREADME.md\nA\tsrc/feature.py"
    assert not [name for name in files_in(git_repo) if name.startswith(".claude")]
    assert project_status(git_repo) == ""
    assert [r.gate_action for r in active(git_repo).iterations] == ["committed"]


def test_allow_dirty_with_claude_ignored_snapshots_then_commits(git_repo: Path) -> None:
    write(git_repo, ".gitignore", ".claude/\n")
    git(git_repo, "add", ".gitignore")
    git(git_repo, "commit", "-q", "-m", "ignore the loop's folder")
    before = commits(git_repo)
    write(git_repo, "README.md", "edited by hand\n")
    write(git_repo, "scratch.txt", "uncommitted\n")
    write(git_repo, ".claude/settings.local.json", "{}\n")  # ignored: never committed
    claude = LaunchedSession(git_repo, SESSION)
    started(claude, f"{START} --allow-dirty")
    state = active(git_repo)
    assert commits(git_repo) == [f"ralph: snapshot before loop {state.loop_id}", *before]
    assert changed_in(git_repo) == "M\tREADME.md\nA\tscratch.txt"
    write(git_repo, "feature.txt", "feature\n")
    goes_on(claude, "Approach: add the feature")
    assert commits(git_repo)[0] == "ralph: iteration 1: add the feature"
    assert changed_in(git_repo) == "A\tfeature.txt"
    assert not [name for name in files_in(git_repo) if name.startswith(".claude")]
    assert project_status(git_repo) == ""


# --- 2. a project in a subdirectory of its repository (a monorepo) --------------------------------


def test_a_monorepo_loop_touches_only_its_project(monorepo: Path) -> None:
    top = monorepo.parent
    # Work of the user's elsewhere in the repository, before the start: not the project's,
    # so the start is not refused as dirty.
    write(top, "other/lib.py", "LIB = 2  # edited by hand\n")
    write(top, "other/staged.py", "STAGED = 1\n")
    git(top, "add", "other/staged.py")
    claude = LaunchedSession(monorepo, SESSION)
    started(claude, f"{START} --max-iterations 3")
    assert gate_of(active(monorepo)).snapshot_commit is None

    # Iteration 1, green: only the project's files are committed, while the user goes on
    # working elsewhere; their staged file stays staged.
    write(monorepo, "app.py", "print('v2')\n")
    write(monorepo, "new.py", "NEW = 1\n")
    write(top, "TOP.txt", "the user's, at the top\n")
    write(top, "other/mine.txt", "the user's, beside\n")
    goes_on(claude, "Approach: add new.py")
    assert changed_in(top) == "M\tpkg/app.py\nA\tpkg/new.py"
    assert staged(top) == "other/staged.py\n"
    committed = head(top)

    # Iterations 2 and 3, red then still red: reverted in the project; what the user edited
    # or created outside it during the loop stays as it is.
    write(monorepo, "app.py", "print('v3')\n")
    write(monorepo, "broken.txt", "broken\n")
    write(top, "README.md", "edited by the user during the loop\n")
    write(top, "other/lib.py", "LIB = 3  # edited again\n")
    write(top, "other/during.txt", "created during the loop\n")
    assert "Repair: the gate failed" in goes_on(claude, "Approach: break it")
    before_revert = status_but(top, "pkg")
    banner, loop, report = ends(claude, "Approach: could not repair it")
    assert [r.gate_action for r in loop.iterations] == ["committed", "repair", "reverted"]
    assert (loop.iterations[-1].restored, loop.iterations[-1].removed) == (["app.py"],
                                                                            ["broken.txt"])
    assert head(top) == committed
    assert (monorepo / "app.py").read_text() == "print('v2')\n"
    assert not (monorepo / "broken.txt").exists()
    assert status_but(top, "pkg") == before_revert == (
        " M README.md\n M other/lib.py\nA  other/staged.py\n?? TOP.txt\n"
        "?? other/during.txt\n?? other/mine.txt\n")
    assert (top / "other/lib.py").read_text() == "LIB = 3  # edited again\n"
    assert (top / "README.md").read_text() == "edited by the user during the loop\n"

    # The report names the scope and lists only the project's files.
    assert banner.endswith(report_link(loop))
    assert f"- Scope: {monorepo} (the project directory; nothing outside it is touched)" in (
        report.splitlines())
    assert report.split("\n## Files changed\n\n", 1)[1].split("\n\n", 1)[0] == (
        "- `app.py`\n- `new.py`")


# --- 3. two loops in one checkout -----------------------------------------------------------------


def clash(session: str, gate: bool, project: Path | None = None) -> str:
    which = "a gate-mode loop" if gate else "a loop"
    where = f" (project {project})" if project else ""
    return (f"finesse: session {session} runs {which} in this work tree{where}; gate mode commits "
            "and reverts the whole project, so two loops cannot share it: run this one in a "
            "linked worktree (`git worktree add ../other-tree`, then start Claude Code there)")


@pytest.mark.parametrize(("first", "second"), [
    (f"{START} --max-iterations 5", f"{START} --allow-dirty"),  # gate beside gate
    ("/ralph-loop Work --max-iterations 5", f"{START} --allow-dirty"),  # gate beside plain
    (f"{START} --max-iterations 5", "/ralph-loop Other work"),  # plain beside gate
], ids=["gate-gate", "plain-gate", "gate-plain"])
def test_a_second_loop_in_the_checkout_is_refused(git_repo: Path, first: str,
                                                  second: str) -> None:
    mine = LaunchedSession(git_repo, SESSION)
    started(mine, first)
    paths = store_for(git_repo).paths
    loop_file = paths.loop_file(SESSION).read_bytes()
    # The first loop's work in progress: a second gate loop's --allow-dirty snapshot would
    # commit it.
    write(git_repo, "feature.txt", "the first loop's work\n")
    before = (head(git_repo), project_status(git_repo), branches(git_repo))

    refused = LaunchedSession(git_repo, OTHER_SESSION).submit(second).output()
    assert refused == {"decision": "block", "reason": clash(SESSION, "--gate" in first)}
    assert not paths.loop_file(OTHER_SESSION).exists()
    assert paths.loop_file(SESSION).read_bytes() == loop_file
    assert (head(git_repo), project_status(git_repo), branches(git_repo)) == before


@pytest.mark.parametrize(("first", "second"), [
    ("top-gate", "pkg-plain"),  # the top's commits would take in pkg's loop files
    ("top-plain", "pkg-gate"),  # pkg's commits would take in the top loop's work in pkg
    ("pkg-plain", "top-gate"),  # found below, though git ignores .claude/
    ("pkg-gate", "top-gate"),
])
def test_a_second_loop_in_a_project_above_or_below_is_refused(monorepo: Path, first: str,
                                                               second: str) -> None:
    top = monorepo.parent
    write(top, ".gitignore", ".claude/\n")
    git(top, "add", ".gitignore")
    git(top, "commit", "-q", "-m", "ignore the loops' folders")
    roots = {"top": top, "pkg": monorepo}
    prompts = {"gate": f"{START} --max-iterations 5", "plain": "/ralph-loop Other work"}
    where, kind = first.split("-")
    started(LaunchedSession(roots[where], SESSION), prompts[kind])
    loop_file = store_for(roots[where]).paths.loop_file(SESSION).read_bytes()
    before = (head(top), project_status(top), branches(top))

    there, second_kind = second.split("-")
    refused = LaunchedSession(roots[there], OTHER_SESSION).submit(prompts[second_kind]).output()
    assert refused == {"decision": "block",
                       "reason": clash(SESSION, kind == "gate", roots[where])}
    assert store_for(roots[there]).load(OTHER_SESSION) is None
    assert store_for(roots[where]).paths.loop_file(SESSION).read_bytes() == loop_file
    assert (head(top), project_status(top), branches(top)) == before


def test_plain_loops_above_and_below_each_other_may_run(monorepo: Path) -> None:
    started(LaunchedSession(monorepo.parent, SESSION), "/ralph-loop Work")
    started(LaunchedSession(monorepo, OTHER_SESSION), "/ralph-loop Other work")


# --- 4. the agent switches branch, or detaches HEAD, during an iteration --------------------------


def user_branch(root: Path) -> str:
    """A branch `user-work` a step ahead of the current one, with the user's commit."""
    current = git(root, "symbolic-ref", "--short", "HEAD")
    git(root, "switch", "-q", "-c", "user-work")
    write(root, "user.txt", "the user's work\n")
    git(root, "add", "user.txt")
    git(root, "commit", "-q", "-m", "the user's commit")
    git(root, "switch", "-q", current)
    return current


@pytest.mark.parametrize("gate_at_stop", ["green", "red-after-repair"])
@pytest.mark.parametrize("move", ["switch", "detach"])
def test_a_branch_changed_during_the_iteration_is_left_alone(gate_project: Path, move: str,
                                                             gate_at_stop: str) -> None:
    loop_branch = user_branch(gate_project)
    claude = LaunchedSession(gate_project, SESSION)
    started(claude)
    write(gate_project, "feature.txt", "the iteration's work\n")
    number = 1
    if gate_at_stop == "red-after-repair":
        write(gate_project, "broken.txt", "broken\n")
        assert "Repair: the gate failed" in goes_on(claude, "Approach: break it")
        number = 2
    if move == "switch":
        git(gate_project, "switch", "-q", "user-work")  # a descendant: the user's commit on top
        seen = "HEAD is on user-work"
    else:
        git(gate_project, "switch", "-q", "--detach")
        seen = "HEAD is detached"
    before = (branches(gate_project), head(gate_project), project_status(gate_project))

    banner, loop, report = ends(claude, "Approach: look elsewhere")
    message = (f"Ralph loop failed at iteration {number}/8: git: the branch changed during the "
               f"iteration: the loop runs on {loop_branch} and {seen}; nothing was committed or "
               f"reverted. Switch back (`git switch {loop_branch}`), check what the iteration "
               "did, then start a new loop")
    assert banner == f"{message}\n{report_link(loop)}"
    assert (loop.outcome, gate_of(loop).red_streak, loop.iterations[-1].gate_action) == (
        "failure", 0, "error")
    assert f"- Status: FAILURE - {message}" in report.splitlines()
    # Neither branch moved, no commit was made, nothing was reverted or removed.
    assert (branches(gate_project), head(gate_project), project_status(gate_project)) == before
    assert (gate_project / "feature.txt").read_text() == "the iteration's work\n"
    if move == "switch":
        assert (gate_project / "user.txt").read_text() == "the user's work\n"


# --- 5. git hooks that fail -----------------------------------------------------------------------


def rejected_by(hook: Path) -> str:
    return (f"the repository's prepare-commit-msg hook {hook} rejected the commit (no robots "
            "here): fix the hook, or remove it for this loop; nothing was committed")


def users_work_in_progress(root: Path) -> None:
    """Staged, unstaged and untracked changes, as a user (or an iteration) leaves them."""
    write(root, "staged.txt", "staged\n")
    git(root, "add", "staged.txt")
    write(root, "README.md", "unstaged edit\n")
    write(root, "untracked.txt", "untracked\n")


WORK_IN_PROGRESS = " M README.md\nA  staged.txt\n?? untracked.txt\n"


def test_a_failing_prepare_commit_msg_hook_refuses_an_allow_dirty_start(git_repo: Path) -> None:
    hook = install_hook(git_repo, "prepare-commit-msg", "echo 'no robots here' >&2\nexit 1")
    users_work_in_progress(git_repo)
    before = (head(git_repo), staged(git_repo), status_but(git_repo, ".claude"))
    assert status_but(git_repo, ".claude") == WORK_IN_PROGRESS

    refused = LaunchedSession(git_repo, SESSION).submit(f"{START} --allow-dirty").output()
    assert refused == {"decision": "block", "reason": f"finesse: {rejected_by(hook)}"}
    assert (head(git_repo), staged(git_repo), status_but(git_repo, ".claude")) == before
    assert store_for(git_repo).load(SESSION) is None


def test_a_failing_prepare_commit_msg_hook_fails_the_stop_and_keeps_the_index(git_repo: Path
                                                                               ) -> None:
    before_commits = commits(git_repo)
    claude = LaunchedSession(git_repo, SESSION)
    started(claude)
    hook = install_hook(git_repo, "prepare-commit-msg", "echo 'no robots here' >&2\nexit 1")
    users_work_in_progress(git_repo)  # the iteration's, this time
    before = staged(git_repo)

    banner, loop, _ = ends(claude, "Approach: add things")
    assert banner == (f"Ralph loop failed at iteration 1/8: git: {rejected_by(hook)}\n"
                      f"{report_link(loop)}")
    assert (loop.outcome, loop.iterations[-1].gate_action) == ("failure", "error")
    assert commits(git_repo) == before_commits
    assert (staged(git_repo), status_but(git_repo, ".claude")) == (before, WORK_IN_PROGRESS)


@pytest.mark.parametrize("hook", ["pre-commit", "commit-msg"])
def test_failing_pre_commit_and_commit_msg_hooks_do_not_stop_the_commits(git_repo: Path,
                                                                         hook: str) -> None:
    install_hook(git_repo, hook, f"echo '{hook} says no' >&2\nexit 1")
    before = commits(git_repo)
    write(git_repo, "scratch.txt", "uncommitted\n")
    claude = LaunchedSession(git_repo, SESSION)
    started(claude, f"{START} --allow-dirty")
    state = active(git_repo)
    write(git_repo, "feature.txt", "feature\n")
    goes_on(claude, "Approach: add the feature")
    assert commits(git_repo) == ["ralph: iteration 1: add the feature",
                                 f"ralph: snapshot before loop {state.loop_id}", *before]
    assert project_status(git_repo) == ""


# --- 6. a submodule changed by a reverted iteration -----------------------------------------------


@pytest.mark.parametrize("inside", ["edited", "committed"])
def test_a_reverted_submodule_is_reported_as_untouched(git_repo: Path, tmp_path: Path,
                                                       inside: str) -> None:
    add_submodule(git_repo, tmp_path / "lib-source", "vendor/lib")
    start_head = head(git_repo)
    claude = LaunchedSession(git_repo, SESSION)
    started(claude, f"{START} --max-iterations 3")
    write(git_repo, "vendor/lib/lib.txt", "lib v2, the iteration's\n")
    if inside == "committed":  # the submodule's own HEAD moves
        git(git_repo / "vendor/lib", "commit", "-q", "-am", "the iteration's commit")
    write(git_repo, "broken.txt", "broken\n")
    goes_on(claude, "Approach: patch the library")
    next_prompt = goes_on(claude, "Approach: could not repair it")
    state = active(git_repo)
    last = state.iterations[-1]
    assert (last.gate_action, last.restored, last.removed, last.untouched) == (
        "reverted", [], ["broken.txt"], ["vendor/lib"])
    # The agent is told the submodule was not reverted, not that the tree is all back.
    assert next_prompt.endswith(
        f"{REVERTED_NOTE} Not reverted: the submodule `vendor/lib` keeps the iteration's "
        "changes inside it; check it before you go on.")
    assert head(git_repo) == start_head
    assert (git_repo / "vendor/lib/lib.txt").read_text() == "lib v2, the iteration's\n"
    assert not (git_repo / "broken.txt").exists()

    _, _, report = ends(claude, "Approach: stop here")
    assert gate_section(report)[1:3] == [
        "- iteration 1: repair",
        "- iteration 2: reverted (restored 0, removed 1) - not reverted inside (submodules: "
        "check them by hand): `vendor/lib`",
    ]
