"""Gate mode on real temporary git repositories: the grammar, start_loop's refusals and the
--allow-dirty snapshot, and the Stop hook in process driving commit, repair, revert, the red
streak and the loop-done channel, in the main worktree and in a linked one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from finesse.errors import UsageError
from finesse.hooks import stop
from finesse.loop.grammar import ResumeRequest
from finesse.loop.lifecycle import latest_resumable, resume_loop, start_loop
from finesse.loop.request import start_request
from finesse.models import LoopState
from finesse.state.store import utcnow
from tests.helpers.repo import git
from tests.helpers.states import SESSION, store_for

GATE = "test ! -e broken.txt"  # red while the iteration has left broken.txt behind
DONE_FILE = f".ralph-loop-done-{SESSION}"
HEADER = "output <promise>RALPH_LOOP_STOP</promise> only when it is completely true"
NOTES = (
    f"Gate mode: after every iteration the plugin runs `{GATE}`. Green commits your changes; "
    "red gives you one repair; still red reverts them.\n"
    f"When the whole task is done, write `done` to {DONE_FILE} to end the loop.\n"
    "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you.\n"
    "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
    "`Next: ...`."
)
REVERTED_NOTE = ("Your last attempt was reverted: the gate was still red after the repair. "
                 "Start this iteration from the reverted tree.")


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD")


def commits(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


def project_status(root: Path) -> str:
    """`git status` of everything but the loop's own files."""
    return git(root, "status", "--porcelain", "--untracked-files=all", "--", ".",
               ":(exclude).claude")


def start(root: Path, args: str) -> LoopState:
    store = store_for(root)
    with store.locked(SESSION):
        return start_loop(store, SESSION, start_request(args, root), utcnow())


def stop_hook(root: Path, reply: str) -> dict[str, Any] | None:
    raw = json.dumps({"session_id": SESSION, "cwd": str(root), "hook_event_name": "Stop",
                      "stop_hook_active": False, "last_assistant_message": reply}).encode()
    return stop.handle(raw, {"CLAUDE_PROJECT_DIR": str(root), "FINESSE_RUNTIME": "inherit"},
                       str(root))


def active(root: Path) -> LoopState:
    state = store_for(root).load(SESSION)
    assert state is not None
    return state


def ended(root: Path) -> LoopState:
    [state] = store_for(root).history()
    return state


def standing(number: int, cap: int = 8, feedback: str = "") -> dict[str, str]:
    """The Stop hook's output when the loop goes on to iteration `number` with the task."""
    reason = f"Ralph iteration {number}/{cap}: {HEADER}\n\nWork\n\n---\n\n{NOTES}"
    return {"decision": "block", "reason": f"{reason}\n\n{feedback}" if feedback else reason,
            "systemMessage": f"Ralph iteration {number}/{cap}"}


def repair_asked(number: int, cap: int = 8) -> dict[str, str]:
    return {
        "decision": "block",
        "reason": (
            f"Ralph iteration {number}/{cap}: {HEADER}\n\n"
            "Repair: the gate failed after your last iteration. Fix exactly this failure and "
            "nothing else; the gate runs again when you stop, and if it is still red, the "
            "iteration's changes are reverted.\n\n"
            f"`{GATE}`: exit code 1. It printed nothing.\n\n\n---\n\n{NOTES}"
        ),
        "systemMessage": f"Ralph iteration {number}/{cap}",
    }


def gate_section(report: str) -> list[str]:
    """The lines of the report's `## Gate` section."""
    return report.split("\n## Gate\n\n", 1)[1].split("\n\n## ", 1)[0].splitlines()


@pytest.fixture(params=["main", "worktree"])
def project(request: pytest.FixtureRequest, git_repo: Path, tmp_path: Path) -> Path:
    """A committed project that ignores `*.log`: the repository's main worktree, or a linked
    worktree on branch `feature`."""
    write(git_repo, ".gitignore", "*.log\n")
    git(git_repo, "add", ".gitignore")
    git(git_repo, "commit", "-q", "-m", "base")
    if request.param == "main":
        return git_repo
    linked = tmp_path / "linked"
    git(git_repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    return linked


# --- starting: refusals and the snapshot -------------------------------------------------------


def test_a_dirty_tree_is_refused_without_allow_dirty(project: Path) -> None:
    start_head = head(project)
    write(project, "scratch.txt", "uncommitted\n")
    with pytest.raises(UsageError) as refused:
        start(project, f'Work --gate "{GATE}"')
    assert str(refused.value) == (
        "gate mode needs a clean working tree and scratch.txt has uncommitted changes: commit "
        "or stash them, or pass --allow-dirty to commit them as a snapshot first"
    )
    assert store_for(project).load(SESSION) is None
    assert (head(project), project_status(project)) == (start_head, "?? scratch.txt")


def test_a_detached_head_is_refused(git_repo: Path) -> None:
    git(git_repo, "switch", "-q", "--detach")
    with pytest.raises(UsageError) as refused:
        start(git_repo, f'Work --gate "{GATE}" --allow-dirty')
    assert str(refused.value) == (
        f"gate mode commits on a branch and HEAD is detached at {head(git_repo)[:12]}: "
        "run `git switch <branch>` (or `git switch -c <new-branch>`) first"
    )
    assert store_for(git_repo).load(SESSION) is None


def test_outside_git_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(UsageError) as refused:
        start(plain, f'Work --gate "{GATE}"')
    assert str(refused.value) == (
        f"gate mode needs a git repository and {plain} is not in one: run `git init` and "
        "commit the project first, or leave out --gate"
    )
    assert store_for(plain).load(SESSION) is None


def test_a_clean_start_records_its_base_and_no_snapshot(project: Path) -> None:
    before = commits(project)
    state = start(project, f'Work --gate "{GATE}" --effort high')
    assert (state.gate, state.effort, state.snapshot_commit, state.iteration_base) == (
        [GATE], "high", None, head(project))
    assert (state.red_streak, state.empty_iterations, state.repairing) == (0, 0, False)
    assert commits(project) == before


def test_allow_dirty_commits_a_snapshot_recorded_in_state_and_report(project: Path) -> None:
    before = commits(project)
    write(project, "README.md", "edited by hand\n")
    write(project, "scratch.txt", "uncommitted\n")
    write(project, "debug.log", "ignored\n")
    state = start(project, f'Work --gate "{GATE}" --allow-dirty --max-iterations 1')
    snapshot = head(project)
    assert commits(project) == [f"ralph: snapshot before loop {state.loop_id}", *before]
    assert git(project, "show", "--name-status", "--format=", snapshot) == (
        "M\tREADME.md\nA\tscratch.txt")
    assert (state.snapshot_commit, state.iteration_base) == (snapshot, snapshot)
    assert active(project) == state
    assert project_status(project) == ""

    output = stop_hook(project, "Approach: nothing to do\nLooked around.")
    loop = ended(project)
    assert output == {"systemMessage": (
        "Ralph loop stopped: 1 iterations made without <promise>RALPH_LOOP_STOP</promise>.\n"
        "Resume: /ralph-resume --max-iterations 2\n"
        f"Report: .claude/ralph/reports/{loop.loop_id}.md")}
    report = (project / loop.report_path).read_text()
    assert gate_section(report) == [
        f"Gate: `{GATE}`",
        f"- snapshot of the starting state (--allow-dirty): `{snapshot}`",
        "- iteration 1: empty",
        "- red streak at the end: 0; empty iterations: 1",
    ]
    assert (project / "debug.log").read_text() == "ignored\n"


def test_a_stale_loop_done_file_does_not_make_the_tree_dirty(git_repo: Path) -> None:
    write(git_repo, DONE_FILE, "done\n")
    start(git_repo, f'Work --gate "{GATE}"')
    assert not (git_repo / DONE_FILE).exists()


# --- the Stop hook: commit, repair, revert ----------------------------------------------------


def branches(root: Path) -> dict[str, str]:
    listed = git(root, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
    return dict(line.split() for line in listed.splitlines())


def test_a_green_iteration_is_committed(project: Path) -> None:
    before = commits(project)
    current = git(project, "symbolic-ref", "--short", "HEAD")
    heads = branches(project)
    state = start(project, f'Work --gate "{GATE}"')
    write(project, "feature.txt", "feature\n")
    output = stop_hook(project, "Added it.\nApproach: add the feature file\nEvidence: gate")
    sha = head(project)
    assert output == standing(2)
    assert commits(project) == ["ralph: iteration 1: add the feature file", *before]
    assert git(project, "log", "-1", "--format=%B") == (
        f"ralph: iteration 1: add the feature file\n\nRalph-Loop: {state.loop_id}")
    assert git(project, "show", "--name-status", "--format=", sha) == "A\tfeature.txt"
    assert project_status(project) == ""
    # On the branch it started on; every other branch (main, for a linked worktree) unmoved.
    assert git(project, "symbolic-ref", "--short", "HEAD") == current
    assert branches(project) == {**heads, current: sha}
    after = active(project)
    assert (after.iteration_base, after.red_streak, after.empty_iterations) == (sha, 0, 0)
    assert [(r.gate_action, r.commit) for r in after.iterations] == [("committed", sha)]


def test_a_red_iteration_gets_the_repair_prompt_and_keeps_its_changes(project: Path) -> None:
    start_head = head(project)
    start(project, f'Work --gate "{GATE}"')
    write(project, "broken.txt", "broken\n")
    assert stop_hook(project, "Approach: break it") == repair_asked(2)
    assert (head(project), project_status(project)) == (start_head, "?? broken.txt")
    after = active(project)
    assert (after.repairing, after.red_streak, after.iteration_base) == (True, 0, start_head)
    assert [r.gate_action for r in after.iterations] == ["repair"]


def test_a_repair_that_goes_green_is_committed(project: Path) -> None:
    before = commits(project)
    start(project, f'Work --gate "{GATE}"')
    write(project, "broken.txt", "broken\n")
    write(project, "feature.txt", "feature\n")
    stop_hook(project, "Approach: first try")
    (project / "broken.txt").unlink()
    assert stop_hook(project, "Approach: drop the broken file") == standing(3)
    assert commits(project) == ["ralph: iteration 2: drop the broken file", *before]
    after = active(project)
    assert (after.repairing, after.red_streak, after.iteration_base) == (False, 0, head(project))


def test_red_after_the_repair_is_reverted(project: Path) -> None:
    start_head = head(project)
    before = commits(project)
    start(project, f'Work --gate "{GATE}"')
    write(project, "README.md", "changed\n")
    write(project, "broken.txt", "broken\n")
    write(project, "newdir/deep/new.txt", "new\n")
    write(project, "debug.log", "ignored, kept\n")
    stop_hook(project, "Approach: break things")
    write(project, "repair.txt", "a repair that did not help\n")
    assert stop_hook(project, "Approach: could not find it") == standing(3, feedback=REVERTED_NOTE)
    assert (head(project), commits(project)) == (start_head, before)
    assert project_status(project) == ""
    assert (project / "README.md").read_text() == "project\n"
    assert not (project / "newdir").exists()
    assert (project / "debug.log").read_text() == "ignored, kept\n"
    after = active(project)
    assert (after.red_streak, after.repairing, after.iteration_base) == (1, False, start_head)
    last = after.iterations[-1]
    assert (last.gate_action, last.commit, last.restored, last.removed) == (
        "reverted", None, ["README.md"], ["broken.txt", "newdir/deep/new.txt", "repair.txt"])


def test_three_reverted_iterations_end_the_loop_as_failure(project: Path) -> None:
    start_head = head(project)
    start(project, f'Work --gate "{GATE}"')
    outputs = []
    for attempt in range(1, 4):
        write(project, "broken.txt", f"attempt {attempt}\n")
        outputs.append(stop_hook(project, f"Approach: attempt {attempt}"))
        outputs.append(stop_hook(project, f"Approach: repair {attempt} failed"))
    loop = ended(project)
    assert outputs == [
        repair_asked(2), standing(3, feedback=REVERTED_NOTE),
        repair_asked(4), standing(5, feedback=REVERTED_NOTE),
        repair_asked(6),
        {"systemMessage": (
            "Ralph loop failed: a systemic red streak reverted three consecutive iterations "
            "(at iteration 6/8).\n"
            f"Report: .claude/ralph/reports/{loop.loop_id}.md")},
    ]
    assert (loop.outcome, loop.red_streak, loop.iteration) == ("failure", 3, 6)
    assert [r.result for r in loop.iterations] == ["continue"] * 5 + ["failure"]
    assert (head(project), project_status(project)) == (start_head, "")
    assert store_for(project).load(SESSION) is None
    report = (project / loop.report_path).read_text()
    assert gate_section(report) == [
        f"Gate: `{GATE}`",
        "- iteration 1: repair",
        "- iteration 2: reverted (restored 0, removed 1)",
        "- iteration 3: repair",
        "- iteration 4: reverted (restored 0, removed 1)",
        "- iteration 5: repair",
        "- iteration 6: reverted (restored 0, removed 1)",
        "- red streak at the end: 3; empty iterations: 0",
    ]


# --- the loop-done channel --------------------------------------------------------------------


def test_the_loop_done_file_ends_the_loop_and_is_never_committed(project: Path) -> None:
    before = commits(project)
    start(project, f'Work --gate "{GATE}"')
    write(project, "feature.txt", "feature\n")
    write(project, DONE_FILE, "done\n")
    output = stop_hook(project, "Approach: finish the feature")
    loop = ended(project)
    assert output == {"systemMessage": (
        "Ralph loop done: the agent wrote done to its loop-done file at iteration 1/8.\n"
        f"Report: .claude/ralph/reports/{loop.loop_id}.md")}
    assert not (project / DONE_FILE).exists()
    assert commits(project) == ["ralph: iteration 1: finish the feature", *before]
    assert git(project, "show", "--name-status", "--format=", "HEAD") == "A\tfeature.txt"
    assert project_status(project) == ""
    assert (loop.outcome, [r.gate_action for r in loop.iterations]) == ("success", ["committed"])


def test_a_loop_done_file_not_saying_done_is_consumed_and_the_loop_goes_on(project: Path) -> None:
    before = commits(project)
    start(project, f'Work --gate "{GATE}"')
    write(project, DONE_FILE, "not yet\n")
    assert stop_hook(project, "Approach: look around") == standing(2)
    assert not (project / DONE_FILE).exists()
    assert commits(project) == before
    assert [r.gate_action for r in active(project).iterations] == ["empty"]


# --- resume -----------------------------------------------------------------------------------


def test_a_revert_after_resume_keeps_the_users_own_commits(git_repo: Path) -> None:
    store = store_for(git_repo)
    start(git_repo, f'Work --gate "{GATE}" --max-iterations 1')
    stop_hook(git_repo, "Approach: look around")
    write(git_repo, "user.txt", "the user's own work\n")
    git(git_repo, "add", "user.txt")
    git(git_repo, "commit", "-q", "-m", "by hand")
    with store.locked(SESSION):
        previous = latest_resumable(store, SESSION)
        resume_loop(store, previous, ResumeRequest(max_iterations=5), utcnow(), by="test")
    write(git_repo, "broken.txt", "broken\n")
    stop_hook(git_repo, "Approach: break it")
    stop_hook(git_repo, "Approach: repair failed")
    assert active(git_repo).iterations[-1].gate_action == "reverted"
    assert (git_repo / "user.txt").read_text() == "the user's own work\n"


# --- what the agent's own git use and a broken gate do ------------------------------------------


def test_a_commit_the_agent_made_itself_counts_as_the_iterations(project: Path) -> None:
    before = commits(project)
    start(project, f'Work --gate "{GATE}"')
    write(project, "feature.txt", "feature\n")
    git(project, "add", "feature.txt")
    git(project, "commit", "-q", "-m", "agent: add the feature")
    assert stop_hook(project, "Approach: commit it myself") == standing(2)
    assert commits(project) == ["agent: add the feature", *before]
    after = active(project)
    assert (after.iteration_base, after.empty_iterations) == (head(project), 0)
    assert [(r.gate_action, r.commit) for r in after.iterations] == [("committed", head(project))]


def test_a_gate_red_on_the_reverted_baseline_is_a_failure_outside_the_streak(
    project: Path,
) -> None:
    start_head = head(project)
    start(project, 'Work --gate "test -f never.txt"')
    write(project, "attempt.txt", "attempt\n")
    stop_hook(project, "Approach: try")
    output = stop_hook(project, "Approach: try again")
    loop = ended(project)
    assert output == {"systemMessage": (
        "Ralph loop failed at iteration 2/8: the gate is red on the reverted baseline too, so "
        "the gate or its environment is broken (an infrastructure failure, not counted as an "
        "iteration's result).\n"
        f"Report: .claude/ralph/reports/{loop.loop_id}.md")}
    assert (loop.outcome, loop.red_streak) == ("failure", 0)
    assert [(r.gate_action, r.removed) for r in loop.iterations] == [
        ("repair", []), ("reverted", ["attempt.txt"])]
    assert (head(project), project_status(project)) == (start_head, "")


def test_a_branch_moved_back_during_a_repair_is_a_git_failure(project: Path) -> None:
    start_head = head(project)
    start(project, f'Work --gate "{GATE}"')
    write(project, "broken.txt", "broken\n")
    stop_hook(project, "Approach: break it")
    git(project, "reset", "-q", "--hard", "HEAD~1")  # the agent rewinds the branch
    output = stop_hook(project, "Approach: rewind")
    loop = ended(project)
    assert output == {"systemMessage": (
        f"Ralph loop failed at iteration 2/8: git: the branch moved off {start_head[:12]} "
        "during the iteration (reset, amend or rebase); not reverting: restore it by hand "
        "(git reflog lists both)\n"
        f"Report: .claude/ralph/reports/{loop.loop_id}.md")}
    assert (loop.outcome, loop.red_streak, [r.gate_action for r in loop.iterations]) == (
        "failure", 0, ["repair", "error"])
    assert (project / "broken.txt").read_text() == "broken\n"  # nothing was reverted
