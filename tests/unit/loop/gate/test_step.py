"""Gate mode at each stop, through the Stop hook in process on real temporary git
repositories (the main worktree and a linked one): the gate run, then commit, repair or
revert; the red streak; the loop-done channel; a revert after a resume."""

from __future__ import annotations

from pathlib import Path

from finesse.loop.grammar import ResumeRequest
from finesse.loop.resume import latest_resumable, resume_loop
from finesse.state.store import utcnow
from tests.helpers.gate import DONE_FILE, GATE, gate_section, start
from tests.helpers.hooks import continuation, stop_reply
from tests.helpers.repo import branches, commits, git, head, project_status, write
from tests.helpers.states import SESSION, active, gate_of, only_archived, store_for
from tests.helpers.texts import REVERTED_NOTE

HEADER = "output <promise>RALPH_LOOP_STOP</promise> only when it is completely true"
NOTES = (
    f"Gate mode: after every iteration the plugin runs `{GATE}`. Green commits your changes; "
    "red gives you one repair; still red reverts them.\n"
    f"When the whole task is done, write `done` to {DONE_FILE} to end the loop.\n"
    "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you "
    "and what the user must do; that ends the loop as blocked, whatever else the reply "
    "says.\n"
    "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
    "`Next: ...`."
)


def standing(number: int, cap: int = 8, feedback: str = "") -> dict[str, object]:
    """The Stop hook's output when the loop goes on to iteration `number` with the task."""
    reason = f"Ralph iteration {number}/{cap}: {HEADER}\n\nWork\n\n---\n\n{NOTES}"
    return continuation(f"{reason}\n\n{feedback}" if feedback else reason,
                        f"Ralph iteration {number}/{cap}")


def repair_asked(number: int, cap: int = 8) -> dict[str, object]:
    return continuation(
        f"Ralph iteration {number}/{cap}: {HEADER}\n\n"
        "Repair: the gate failed after your last iteration. Fix exactly this failure and "
        "nothing else; the gate runs again when you stop, and if it is still red, the "
        "iteration's changes are reverted.\n\n"
        f"`{GATE}`: exit code 1. It printed nothing.\n\n\n---\n\n{NOTES}",
        f"Ralph iteration {number}/{cap}",
    )


# --- commit, repair, revert -----------------------------------------------------------------------


def test_a_green_iteration_is_committed(gate_project: Path) -> None:
    before = commits(gate_project)
    current = git(gate_project, "symbolic-ref", "--short", "HEAD")
    heads = branches(gate_project)
    state = start(gate_project, f'Work --gate "{GATE}"')
    write(gate_project, "feature.txt", "feature\n")
    output = stop_reply(gate_project, "Added it.\nApproach: add the feature file\nEvidence: gate")
    sha = head(gate_project)
    assert output == standing(2)
    assert commits(gate_project) == ["ralph: iteration 1: add the feature file", *before]
    assert git(gate_project, "log", "-1", "--format=%B") == (
        f"ralph: iteration 1: add the feature file\n\nRalph-Loop: {state.loop_id}")
    assert git(gate_project, "show", "--name-status", "--format=", sha) == "A\tfeature.txt"
    assert project_status(gate_project) == ""
    # On the branch it started on; every other branch (main, for a linked worktree) unmoved.
    assert git(gate_project, "symbolic-ref", "--short", "HEAD") == current
    assert branches(gate_project) == {**heads, current: sha}
    after = active(gate_project)
    gate = gate_of(after)
    assert (gate.iteration_base, gate.red_streak, gate.empty_iterations) == (sha, 0, 0)
    assert [(r.gate_action, r.commit) for r in after.iterations] == [("committed", sha)]


def test_a_red_iteration_gets_the_repair_prompt_and_keeps_its_changes(gate_project: Path) -> None:
    start_head = head(gate_project)
    start(gate_project, f'Work --gate "{GATE}"')
    write(gate_project, "broken.txt", "broken\n")
    assert stop_reply(gate_project, "Approach: break it") == repair_asked(2)
    assert (head(gate_project), project_status(gate_project)) == (start_head, "?? broken.txt")
    after = active(gate_project)
    gate = gate_of(after)
    assert (gate.repairing, gate.red_streak, gate.iteration_base) == (True, 0, start_head)
    assert [r.gate_action for r in after.iterations] == ["repair"]


def test_a_repair_that_goes_green_is_committed(gate_project: Path) -> None:
    before = commits(gate_project)
    start(gate_project, f'Work --gate "{GATE}"')
    write(gate_project, "broken.txt", "broken\n")
    write(gate_project, "feature.txt", "feature\n")
    stop_reply(gate_project, "Approach: first try")
    (gate_project / "broken.txt").unlink()
    assert stop_reply(gate_project, "Approach: drop the broken file") == standing(3)
    assert commits(gate_project) == ["ralph: iteration 2: drop the broken file", *before]
    after = active(gate_project)
    assert (gate_of(after).repairing, gate_of(after).red_streak, gate_of(after).iteration_base) == (
        False, 0, head(gate_project))


def test_red_after_the_repair_is_reverted(gate_project: Path) -> None:
    start_head = head(gate_project)
    before = commits(gate_project)
    start(gate_project, f'Work --gate "{GATE}"')
    write(gate_project, "README.md", "changed\n")
    write(gate_project, "broken.txt", "broken\n")
    write(gate_project, "newdir/deep/new.txt", "new\n")
    write(gate_project, "debug.log", "ignored, kept\n")
    stop_reply(gate_project, "Approach: break things")
    write(gate_project, "repair.txt", "a repair that did not help\n")
    assert stop_reply(gate_project, "Approach: could not find it") == standing(
        3, feedback=REVERTED_NOTE)
    assert (head(gate_project), commits(gate_project)) == (start_head, before)
    assert project_status(gate_project) == ""
    assert (gate_project / "README.md").read_text() == "project\n"
    assert not (gate_project / "newdir").exists()
    assert (gate_project / "debug.log").read_text() == "ignored, kept\n"
    after = active(gate_project)
    gate = gate_of(after)
    assert (gate.red_streak, gate.repairing, gate.iteration_base) == (1, False, start_head)
    last = after.iterations[-1]
    assert (last.gate_action, last.commit, last.restored, last.removed) == (
        "reverted", None, ["README.md"], ["broken.txt", "newdir/deep/new.txt", "repair.txt"])


def test_three_reverted_iterations_end_the_loop_as_failure(gate_project: Path) -> None:
    start_head = head(gate_project)
    start(gate_project, f'Work --gate "{GATE}"')
    outputs = []
    for attempt in range(1, 4):
        write(gate_project, "broken.txt", f"attempt {attempt}\n")
        outputs.append(stop_reply(gate_project, f"Approach: attempt {attempt}"))
        outputs.append(stop_reply(gate_project, f"Approach: repair {attempt} failed"))
    loop = only_archived(gate_project)
    assert outputs == [
        repair_asked(2), standing(3, feedback=REVERTED_NOTE),
        repair_asked(4), standing(5, feedback=REVERTED_NOTE),
        repair_asked(6),
        {"systemMessage": (
            "Ralph loop failed: a systemic red streak reverted three consecutive iterations "
            "(at iteration 6/8).\n"
            f"Report: .claude/ralph/reports/{loop.loop_id}.md")},
    ]
    assert (loop.outcome, gate_of(loop).red_streak, loop.iteration) == ("failure", 3, 6)
    assert [r.result for r in loop.iterations] == ["continue"] * 5 + ["failure"]
    assert (head(gate_project), project_status(gate_project)) == (start_head, "")
    assert store_for(gate_project).load(SESSION) is None
    report = (gate_project / loop.report_path).read_text()
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


# --- the loop-done channel ------------------------------------------------------------------------


def test_the_loop_done_file_ends_the_loop_and_is_never_committed(gate_project: Path) -> None:
    before = commits(gate_project)
    start(gate_project, f'Work --gate "{GATE}"')
    write(gate_project, "feature.txt", "feature\n")
    write(gate_project, DONE_FILE, "done\n")
    output = stop_reply(gate_project, "Approach: finish the feature")
    loop = only_archived(gate_project)
    # No --verify: the green gate is the check, and the report counts what changed.
    assert output == {"systemMessage": (
        "Ralph loop done: the loop-done file at iteration 1/8 with the gate green "
        "(1 command(s)).\nFiles modified: 1 (+1, -0)\n"
        f"Report: .claude/ralph/reports/{loop.loop_id}.md")}
    assert not (gate_project / DONE_FILE).exists()
    assert commits(gate_project) == ["ralph: iteration 1: finish the feature", *before]
    assert git(gate_project, "show", "--name-status", "--format=", "HEAD") == "A\tfeature.txt"
    assert project_status(gate_project) == ""
    assert (loop.outcome, [r.gate_action for r in loop.iterations]) == ("success", ["committed"])


def test_a_loop_done_file_not_saying_done_is_consumed_and_the_loop_goes_on(
    gate_project: Path,
) -> None:
    before = commits(gate_project)
    start(gate_project, f'Work --gate "{GATE}"')
    write(gate_project, DONE_FILE, "not yet\n")
    assert stop_reply(gate_project, "Approach: look around") == standing(2)
    assert not (gate_project / DONE_FILE).exists()
    assert commits(gate_project) == before
    assert [r.gate_action for r in active(gate_project).iterations] == ["empty"]


# --- resume ---------------------------------------------------------------------------------------


def test_a_revert_after_resume_keeps_the_users_own_commits(git_repo: Path) -> None:
    store = store_for(git_repo)
    start(git_repo, f'Work --gate "{GATE}" --max-iterations 1')
    stop_reply(git_repo, "Approach: look around")
    write(git_repo, "user.txt", "the user's own work\n")
    git(git_repo, "add", "user.txt")
    git(git_repo, "commit", "-q", "-m", "by hand")
    with store.locked(SESSION):
        previous = latest_resumable(store, SESSION)
        resume_loop(store, previous, ResumeRequest(max_iterations=5), utcnow(), by="test")
    write(git_repo, "broken.txt", "broken\n")
    stop_reply(git_repo, "Approach: break it")
    stop_reply(git_repo, "Approach: repair failed")
    assert active(git_repo).iterations[-1].gate_action == "reverted"
    assert (git_repo / "user.txt").read_text() == "the user's own work\n"


# --- what the agent's own git use and a broken gate do --------------------------------------------


def test_a_commit_the_agent_made_itself_counts_as_the_iterations(gate_project: Path) -> None:
    before = commits(gate_project)
    start(gate_project, f'Work --gate "{GATE}"')
    write(gate_project, "feature.txt", "feature\n")
    git(gate_project, "add", "feature.txt")
    git(gate_project, "commit", "-q", "-m", "agent: add the feature")
    assert stop_reply(gate_project, "Approach: commit it myself") == standing(2)
    assert commits(gate_project) == ["agent: add the feature", *before]
    after = active(gate_project)
    gate = gate_of(after)
    assert (gate.iteration_base, gate.empty_iterations) == (head(gate_project), 0)
    assert [(r.gate_action, r.commit) for r in after.iterations] == [
        ("committed", head(gate_project))]


def test_a_gate_red_on_the_reverted_baseline_is_a_failure_outside_the_streak(
    gate_project: Path,
) -> None:
    start_head = head(gate_project)
    start(gate_project, 'Work --gate "test -f never.txt"')
    write(gate_project, "attempt.txt", "attempt\n")
    stop_reply(gate_project, "Approach: try")
    output = stop_reply(gate_project, "Approach: try again")
    loop = only_archived(gate_project)
    assert output == {"systemMessage": (
        "Ralph loop failed at iteration 2/8: the gate is red on the reverted baseline too, so "
        "the gate or its environment is broken (an infrastructure failure, not counted as an "
        "iteration's result).\n"
        f"Report: .claude/ralph/reports/{loop.loop_id}.md")}
    assert (loop.outcome, gate_of(loop).red_streak) == ("failure", 0)
    assert [(r.gate_action, r.removed) for r in loop.iterations] == [
        ("repair", []), ("reverted", ["attempt.txt"])]
    assert (head(gate_project), project_status(gate_project)) == (start_head, "")


def test_a_branch_moved_back_during_a_repair_is_a_git_failure(gate_project: Path) -> None:
    start_head = head(gate_project)
    start(gate_project, f'Work --gate "{GATE}"')
    write(gate_project, "broken.txt", "broken\n")
    stop_reply(gate_project, "Approach: break it")
    git(gate_project, "reset", "-q", "--hard", "HEAD~1")  # the agent rewinds the branch
    output = stop_reply(gate_project, "Approach: rewind")
    loop = only_archived(gate_project)
    assert output == {"systemMessage": (
        f"Ralph loop failed at iteration 2/8: git: the branch moved off {start_head[:12]} "
        "during the iteration (reset, amend or rebase); not reverting: restore it by hand "
        "(git reflog lists both)\n"
        f"Report: .claude/ralph/reports/{loop.loop_id}.md")}
    assert (loop.outcome, gate_of(loop).red_streak, [r.gate_action for r in loop.iterations]) == (
        "failure", 0, ["repair", "error"])
    assert (gate_project / "broken.txt").read_text() == "broken\n"  # nothing was reverted
