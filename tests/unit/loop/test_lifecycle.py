"""Starting, recording, finishing, resuming and describing loops, in real temporary git
repositories; gate mode's refusals before a start and its --allow-dirty snapshot."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from finesse.engine import end_loop
from finesse.errors import UsageError
from finesse.loop.final_report import EndFacts, render_report
from finesse.loop.gate.commits import current_branch
from finesse.loop.grammar import ResumeRequest
from finesse.loop.lifecycle import (
    cancel_loop,
    end_facts,
    finish,
    start_loop,
)
from finesse.loop.notebook import record_iteration
from finesse.loop.request import StartRequest
from finesse.loop.resume import latest_resumable, resume_loop
from finesse.loop.status import describe, start_context
from finesse.models import Budgets, Gate, IterationRecord, LoopState, ResumeRecord
from finesse.record import replace
from finesse.results import Cursor, ModelUsage
from finesse.state.store import LoopStore
from finesse.support import git as gitstate
from finesse.support.git import LineChanges
from tests.helpers.gate import DONE_FILE, GATE, gate_section, start
from tests.helpers.hooks import stop_reply
from tests.helpers.plans import commit_plan
from tests.helpers.repo import commits, git, head, project_status, write
from tests.helpers.states import (
    OTHER_SESSION,
    SESSION,
    T0,
    T1,
    active,
    command_result,
    files_under,
    make_state,
    only_archived,
    read_json,
    store_for,
)
from tests.helpers.texts import stopped_banner

THIRD_SESSION = "33333333-3333-4333-8333-333333333333"

PLAN = """\
# Make the tests pass

## Goal
All unit tests pass. Ünïcödé ✓

## Acceptance Criteria
- `test -f done.txt` exits 0

## Plan
1. Write done.txt.

## Verification Commands
- `test -f done.txt`

## Attempts

## Review
"""
T2 = T1 + timedelta(minutes=5)
GREEN = command_result("test -f done.txt", 0)


@pytest.fixture
def plan(git_repo: Path) -> Path:
    return commit_plan(git_repo, PLAN)


# --- start ------------------------------------------------------------------------------------


def test_start_loop_records_the_baseline(git_repo: Path, store: LoopStore) -> None:
    (git_repo / "dirty.txt").write_text("uncommitted work\n")
    request = StartRequest(prompt="Fix it", max_iterations=5, promise="DONE",
                           verify=["pytest -q"], plan_file="tasks/todo.md", quiesce_after=3,
                           timeout_minutes=45)
    state = start_loop(store, SESSION, request, T0)
    assert state == LoopState(
        loop_id=state.loop_id,
        session_id=SESSION,
        project_root=str(git_repo),
        prompt="Fix it",
        promise="DONE",
        max_iterations=5,
        started_at=T0,
        updated_at=T0,
        iteration_started_at=T0,
        verify=["pytest -q"],
        plan_file="tasks/todo.md",
        quiesce_after=3,
        timeout_minutes=45,
        deadline_at=T0 + timedelta(minutes=45),
        baseline_commit=git(git_repo, "rev-parse", "HEAD"),
        tree_fingerprint=gitstate.tree_fingerprint(git_repo),
        dirty_at_start=[f"dirty.txt\t17\t{(git_repo / 'dirty.txt').stat().st_mtime_ns}"],
    )
    assert state.loop_id.startswith(f"20261130T070000Z-{SESSION[:8]}-")
    assert store.load(SESSION) == state
    # The fingerprint is of the tree as it was, dirty file included.
    (git_repo / "dirty.txt").unlink()
    assert gitstate.tree_fingerprint(git_repo) != state.tree_fingerprint


def test_an_adopted_notebook_is_one_sessions_only(git_repo: Path, store: LoopStore) -> None:
    # Two sessions in one checkout: tasks/todo.md with `## Attempts` is the first loop's
    # notebook; the second loop keeps its record in its report, not in the same file.
    request = StartRequest(prompt="Fix it", max_iterations=5, notebook="tasks/todo.md")
    first = start_loop(store, SESSION, request, T0)
    second = start_loop(store, OTHER_SESSION, request, T0)
    assert (first.notebook, second.notebook) == ("tasks/todo.md", None)
    # Named with --plan, it is the user's own choice, for every loop that names it.
    third = start_loop(store, THIRD_SESSION, replace(
        request, plan_file="tasks/todo.md"), T0)
    assert third.notebook == "tasks/todo.md"


def test_start_loop_outside_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    store = store_for(tmp_path / "plain")
    state = start_loop(store, SESSION, StartRequest(prompt="go"), T0)
    assert (state.baseline_commit, state.tree_fingerprint, state.deadline_at,
            state.quiesce_after) == (None, None, None, 2)


def test_start_loop_remembers_where_the_transcript_ends(git_repo: Path, store: LoopStore,
                                                       tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(b'{"type": "user"}\n')
    state = start_loop(store, SESSION, StartRequest(prompt="go"), T0, transcript=transcript)
    info = transcript.stat()
    assert state.cursor == Cursor(17, f"{info.st_dev}:{info.st_ino}")
    # A session's first prompt: the transcript is not written yet; count from its start.
    store.paths.loop_file(SESSION).unlink()
    fresh = start_loop(store, SESSION, StartRequest(prompt="go"), T0,
                       transcript=tmp_path / "not-yet.jsonl")
    assert fresh.cursor == Cursor(0, "")
    # Something that is not a file there: nothing to count from.
    store.paths.loop_file(SESSION).unlink()
    os.mkfifo(tmp_path / "fifo.jsonl")
    odd = start_loop(store, SESSION, StartRequest(prompt="go"), T0,
                     transcript=tmp_path / "fifo.jsonl")
    assert odd.cursor is None


def test_start_loop_refusals(git_repo: Path, store: LoopStore) -> None:
    first = start_loop(store, SESSION, StartRequest(prompt="go"), T0)
    with pytest.raises(UsageError) as refused:
        start_loop(store, SESSION, StartRequest(prompt="again"), T1)
    assert str(refused.value) == (
        "a Ralph loop is already running in this session (iteration 1/8): /cancel-ralph first"
    )
    assert store.load(SESSION) == first
    store.paths.kill_switch.touch()
    with pytest.raises(UsageError) as refused:
        start_loop(store, OTHER_SESSION, StartRequest(prompt="go"), T1)
    assert str(refused.value) == (
        f"the kill switch {store.paths.kill_switch} exists, so every loop of this project "
        "stops at once: delete it to start loops again"
    )
    assert store.load(OTHER_SESSION) is None


def test_start_context_names_the_plan_and_the_commands() -> None:
    state = make_state(Path("/p"), plan_file="tasks/todo.md", verify=["test -f done.txt"],
                       max_iterations=4)
    assert start_context(state) == (
        "A Ralph loop is running in this session (finesse plugin). You will be given the same "
        "task again each time you stop, until you output the completion promise or the "
        "iteration cap is reached.\n\n"
        "Ralph iteration 1/4: output <promise>DONE</promise> only when it is completely true\n\n"
        "The task, verbatim:\n<ralph-task>\nMake the tests pass\n</ralph-task>\n\n"
        "The plan is tasks/todo.md: re-read it now; your attempts are recorded under its "
        "`## Attempts`.\n"
        "When you claim completion, the plugin runs `test -f done.txt` itself and rejects the "
        "claim if any fails.\n"
        "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you "
        "and what the user must do; that ends the loop as blocked, whatever else the reply "
        "says.\n"
        "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
        "`Next: ...`."
    )


# --- record and finish ------------------------------------------------------------------------

FIRST = IterationRecord(number=1, started_at=T0, ended_at=T1, result="rejected",
                        approach="wrote a stub", learning="the check wants a file",
                        verification=[command_result("test -f done.txt", 1)])
SECOND = IterationRecord(number=2, started_at=T1, ended_at=T2, result="success",
                         evidence="done.txt exists", verification=[GREEN])
ATTEMPTS = (
    "### Iteration 1 (2026-11-30 07:05 UTC)\n"
    "- Result: rejected\n"
    "- Approach: wrote a stub\n"
    "- Learning: the check wants a file\n"
    "- Verifier: `test -f done.txt` red (exit 1)\n"
)


def plan_state(root: Path, **fields: object) -> LoopState:
    return make_state(root, plan_file="tasks/todo.md", notebook="tasks/todo.md",
                      verify=["test -f done.txt"],
                      baseline_commit=git(root, "rev-parse", "HEAD"), **fields)


def test_record_iteration_writes_the_attempt_and_the_notes(
    git_repo: Path, store: LoopStore, plan: Path
) -> None:
    state = plan_state(git_repo, iterations=[FIRST], tree_fingerprint="before")
    after = record_iteration(store, state, FIRST, ["Re-plan 1 asked at iteration 1: x."])
    assert plan.read_text(encoding="utf-8") == PLAN.replace(
        "## Attempts\n\n## Review\n",
        f"## Attempts\n\n{ATTEMPTS}\n## Review\n\n- Re-plan 1 asked at iteration 1: x.\n",
    )
    # The plugin's own write to the plan is in the new fingerprint, so it never counts as
    # the agent's change at the next stop.
    assert after == replace(state, tree_fingerprint=gitstate.tree_fingerprint(git_repo))
    assert after.tree_fingerprint not in (None, "before")


def test_record_iteration_without_a_plan_changes_nothing(
    git_repo: Path, store: LoopStore
) -> None:
    state = make_state(git_repo, iterations=[FIRST], tree_fingerprint="before")
    assert record_iteration(store, state, FIRST, ["a note"]) == state
    assert git(git_repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_record_iteration_survives_a_vanished_plan(git_repo: Path, store: LoopStore) -> None:
    state = plan_state(git_repo, iterations=[FIRST])
    after = record_iteration(store, state, FIRST, [])
    assert after.plan_file == "tasks/todo.md"
    [line] = store.paths.log.read_text().splitlines()
    assert line.split(" ", 1)[1].startswith(
        f"loop {state.loop_id}: could not write the plan {git_repo / 'tasks' / 'todo.md'}: "
    )


def test_finish_writes_the_plan_the_report_and_the_archive(
    git_repo: Path, store: LoopStore, plan: Path
) -> None:
    plan.chmod(0o640)
    record_iteration(store, plan_state(git_repo), FIRST, [])
    (git_repo / "done.txt").write_text("")
    (git_repo / "README.md").write_text("project, edited\n")
    ended = end_loop(
        plan_state(git_repo, iteration=2, iterations=[FIRST, SECOND], last_verification=[GREEN],
                   learnings=["the check wants a file"]),
        "success", "Ralph loop done.", T2,
    )
    store.save(replace(ended, outcome=None, ended_at=None))  # the active file it replaces
    banner = finish(store, ended, ["Blocked? no."])
    report = store.paths.reports / f"{ended.loop_id}.md"
    # README.md: one line replaced; done.txt: created empty.
    assert banner == (f"Ralph loop done.\nFiles modified: 2 (+1, -1)\n"
                      f"Report: .claude/ralph/reports/{ended.loop_id}.md")
    archived = replace(ended, report_path=str(report))
    facts = end_facts(store, archived)
    # The notebook is the plugin's own record: never listed as a change the loop made.
    assert (facts.files, facts.lines) == (["README.md", "done.txt"], LineChanges(1, 1))
    assert report.read_text(encoding="utf-8") == render_report(archived, facts)
    assert store.history() == [archived]
    assert read_json(store.paths.history / f"{ended.loop_id}.json")["report_path"] == str(report)
    assert files_under(store.paths.loops) == []
    text = plan.read_text(encoding="utf-8")
    assert text == PLAN.replace("## Attempts\n\n## Review\n", (
        f"## Attempts\n\n{ATTEMPTS}\n"
        "### Iteration 2 (2026-11-30 07:10 UTC)\n"
        "- Result: success\n"
        "- Evidence: done.txt exists\n"
        "- Verifier: `test -f done.txt` green\n"
        "\n"
        "## Review\n"
        "\n"
        "- Blocked? no.\n"
        "\n"
        "<!-- finesse:review -->\n"
        f"Loop `{ended.loop_id}` ended: success (unverified) - Ralph loop done.\n"
        "\n"
        "Changes made:\n"
        "- `README.md`\n"
        "- `done.txt`\n"
        "\n"
        "Verification evidence:\n"
        "- `test -f done.txt`: green (exit 0, 0.5 s)\n"
        "\n"
        "Skipped checks:\n"
        "- none\n"
        "\n"
        "Remaining blockers:\n"
        "- none\n"
    ))
    assert plan.stat().st_mode & 0o777 == 0o640


def test_finish_of_a_cancel_adds_no_attempt(git_repo: Path, store: LoopStore, plan: Path) -> None:
    state = plan_state(git_repo, iteration=2, iterations=[FIRST])
    store.save(state)
    ended = cancel_loop(store, SESSION, T2, by="/cancel-ralph")
    assert ended == replace(end_loop(state, "cancelled",
                                     "Ralph loop cancelled by /cancel-ralph at iteration 2/8.",
                                     T2), ended_by="/cancel-ralph")
    text = plan.read_text(encoding="utf-8")
    attempts = text.split("## Attempts\n")[1].split("## Review\n")[0]
    assert attempts == "\n"  # the iteration under way when cancelled has no record
    assert text.split("## Review\n")[1].startswith(
        f"\n<!-- finesse:review -->\nLoop `{state.loop_id}` ended: cancelled - "
    )
    assert [loop.outcome for loop in store.history()] == ["cancelled"]
    assert cancel_loop(store, SESSION, T2, by="/cancel-ralph") is None


def test_finish_without_a_plan_or_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    store = store_for(tmp_path)
    ended = end_loop(make_state(tmp_path, iterations=[FIRST]), "quiesced", "Quiet.", T1)
    assert finish(store, ended) == stopped_banner("Quiet.", ended.loop_id, [])
    report = (store.paths.reports / f"{ended.loop_id}.md").read_text(encoding="utf-8")
    facts = EndFacts(files=[], lines=None, is_repository=False,
                     state_file=f".claude/ralph/history/{ended.loop_id}.json",
                     scope=str(tmp_path))
    assert report == render_report(replace(ended, report_path=str(store.paths.reports /
                                                                   f"{ended.loop_id}.md")), facts)
    assert "- Total changes" not in report  # a quiesced loop has no success summary


# --- resume -----------------------------------------------------------------------------------


def ended_state(root: Path, outcome: str, *, session_id: str = SESSION, at: int = 10,
                **fields: object) -> LoopState:
    state = make_state(root, session_id, loop_id=f"20261130T07{at:02d}00Z-{session_id[:8]}-x",
                       **fields)
    return end_loop(state, outcome, f"ended: {outcome}", T0 + timedelta(minutes=at))


def test_latest_resumable_picks_the_most_recently_ended(git_repo: Path, store: LoopStore) -> None:
    store.archive(ended_state(git_repo, "limit", at=30))
    store.archive(ended_state(git_repo, "success", at=10))
    store.archive(ended_state(git_repo, "cancelled", session_id=OTHER_SESSION, at=40))
    assert latest_resumable(store, SESSION).loop_id == "20261130T073000Z-0b7c5c3e-x"
    with pytest.raises(UsageError) as refused:
        latest_resumable(store, None)
    assert str(refused.value) == (
        "the last loop (20261130T074000Z-9a8b7c6d-x) ended in cancelled, which cannot be "
        "resumed: start a new one with /ralph-loop"
    )


@pytest.mark.parametrize("outcome", ["limit", "quiesced", "timeout", "blocked"])
def test_resumable_outcomes(git_repo: Path, store: LoopStore, outcome: str) -> None:
    store.archive(ended_state(git_repo, outcome))
    assert latest_resumable(store, SESSION).outcome == outcome


@pytest.mark.parametrize("outcome", ["success", "cancelled", "failure", "error"])
def test_outcomes_that_cannot_resume(git_repo: Path, store: LoopStore, outcome: str) -> None:
    store.archive(ended_state(git_repo, outcome, at=20))
    store.archive(ended_state(git_repo, "limit", at=10))  # older: not the latest
    with pytest.raises(UsageError) as refused:
        latest_resumable(store, SESSION)
    assert str(refused.value) == (
        f"the last loop (20261130T072000Z-0b7c5c3e-x) ended in {outcome}, which cannot be "
        "resumed: start a new one with /ralph-loop"
    )


def test_nothing_to_resume(git_repo: Path, store: LoopStore) -> None:
    store.archive(ended_state(git_repo, "limit", session_id=OTHER_SESSION))
    with pytest.raises(UsageError) as refused:
        latest_resumable(store, SESSION)
    assert str(refused.value) == (
        "no ended Ralph loop in this session to resume; start one with /ralph-loop"
    )


HISTORY = [IterationRecord(number=n, started_at=T0, ended_at=T0, result="continue")
           for n in range(1, 9)]


def limited(root: Path, **fields: object) -> LoopState:
    """A loop that used up its cap of 8, with counters worth keeping."""
    values: dict[str, object] = {
        "iteration": 8, "iterations": HISTORY, "learnings": ["keep me"],
        "failure_fingerprint": "abc", "failure_streak": 1, "replans": 1, "idle_iterations": 1,
        "last_reply_digest": "d" * 16, "tree_fingerprint": "old", "blocker": "",
        "report_path": "/r.md", "last_verification": [GREEN],
    }
    values.update(fields)
    return ended_state(root, "limit", **values)


def reopened(previous: LoopState, root: Path, **changes: object) -> LoopState:
    fields: dict[str, object] = {
        "outcome": None, "ended_at": None, "end_message": "", "blocker": "",
        "report_path": "", "iteration_started_at": T2, "updated_at": T2,
        "idle_iterations": 0, "last_reply_digest": "", "failure_streak": 0,
        "failure_fingerprint": "",
        "tree_fingerprint": gitstate.tree_fingerprint(root),
        "resumes": [*previous.resumes,
                    ResumeRecord(at=T2, after=previous.outcome or "", by="test")],
    }
    fields.update(changes)
    return replace(previous, **fields)


def test_resume_after_the_cap_doubles_it_by_default(git_repo: Path, store: LoopStore) -> None:
    previous = limited(git_repo)
    state = resume_loop(store, previous, ResumeRequest(), T2, by="test")
    assert state == reopened(previous, git_repo, iteration=9, max_iterations=16)
    assert store.load(SESSION) == state
    # History, learnings and the re-plans used are kept; the stuck streak starts again.
    assert (state.iterations, state.learnings, state.failure_streak, state.replans) == (
        HISTORY, ["keep me"], 0, 1
    )


def test_resume_with_a_new_cap(git_repo: Path, store: LoopStore) -> None:
    previous = limited(git_repo)
    state = resume_loop(store, previous, ResumeRequest(max_iterations=12), T2, by="test")
    assert state == reopened(previous, git_repo, iteration=9, max_iterations=12)


@pytest.mark.parametrize("cap", [1, 8])
def test_resume_with_a_cap_that_leaves_no_room(git_repo: Path, store: LoopStore,
                                               cap: int) -> None:
    with pytest.raises(UsageError) as refused:
        resume_loop(store, limited(git_repo), ResumeRequest(max_iterations=cap), T2, by="test")
    assert str(refused.value) == (
        f"--max-iterations {cap} leaves no room: the loop has made 8 iterations; give a larger "
        "number, e.g. 16"
    )
    assert store.load(SESSION) is None


def test_resume_before_the_cap_keeps_it(git_repo: Path, store: LoopStore) -> None:
    previous = replace(limited(git_repo, iteration=3, iterations=HISTORY[:3]),
                       outcome="quiesced", blocker="")
    state = resume_loop(store, previous, ResumeRequest(), T2, by="test")
    assert state == reopened(previous, git_repo, iteration=4, max_iterations=8)


def test_resume_after_a_timeout_gets_a_fresh_window(git_repo: Path, store: LoopStore) -> None:
    previous = replace(limited(git_repo, iteration=3, iterations=HISTORY[:3],
                               timeout_minutes=20, deadline_at=T0 + timedelta(minutes=20)),
                       outcome="timeout")
    same = resume_loop(store, previous, ResumeRequest(), T2, by="test")
    assert same == reopened(previous, git_repo, iteration=4,
                            deadline_at=T2 + timedelta(minutes=20))
    store.paths.loop_file(SESSION).unlink()
    longer = resume_loop(store, previous, ResumeRequest(timeout_minutes=90), T2, by="test")
    assert longer == reopened(previous, git_repo, iteration=4, timeout_minutes=90,
                              deadline_at=T2 + timedelta(minutes=90))


def test_resume_of_a_blocked_loop_clears_the_blocker(git_repo: Path, store: LoopStore) -> None:
    previous = replace(limited(git_repo, iteration=2, iterations=HISTORY[:2],
                               blocker="no key"), outcome="blocked")
    state = resume_loop(store, previous, ResumeRequest(), T2, by="test")
    assert state == reopened(previous, git_repo, iteration=3)
    assert state.blocker == ""


def test_resume_is_refused_while_a_loop_runs(git_repo: Path, store: LoopStore) -> None:
    running = make_state(git_repo, prompt="the new one")
    store.save(running)
    with pytest.raises(UsageError) as refused:
        resume_loop(store, limited(git_repo), ResumeRequest(), T2, by="test")
    assert str(refused.value) == (
        "a Ralph loop is already running in that session: /cancel-ralph first"
    )
    assert store.load(SESSION) == running


def test_resumes_accumulate(git_repo: Path, store: LoopStore) -> None:
    first = resume_loop(store, limited(git_repo), ResumeRequest(), T2, by="/ralph-resume")
    store.paths.loop_file(SESSION).unlink()
    again = end_loop(replace(first, iteration=16), "limit", "again", T2 + timedelta(hours=1))
    second = resume_loop(store, again, ResumeRequest(max_iterations=20),
                         T2 + timedelta(hours=2), by="`ralph resume`")
    assert second.resumes == [
        ResumeRecord(at=T2, after="limit", by="/ralph-resume"),
        ResumeRecord(at=T2 + timedelta(hours=2), after="limit", by="`ralph resume`"),
    ]
    assert (second.iteration, second.max_iterations) == (17, 20)


SPENT = [IterationRecord(number=n, started_at=T0, ended_at=T0, result="continue", cost=0.75,
                        usage=[ModelUsage("claude-sonnet-4-5", 1000, 500, 500, 9000)])
         for n in range(1, 5)]  # 8,000 tokens and an estimated $3.00 in four iterations


@pytest.mark.parametrize(
    ("budget", "raised"),
    [({"max_tokens": 8000}, "--max-tokens 16000"), ({"max_cost": 3.0}, "--max-cost 6")],
)
def test_resume_after_a_spent_budget_needs_a_larger_one(
        git_repo: Path, store: LoopStore, budget: dict[str, object], raised: str) -> None:
    previous = replace(limited(git_repo, iteration=4, iterations=SPENT,
                               budgets=Budgets(**budget)), outcome="budget")
    with pytest.raises(UsageError) as refused:
        resume_loop(store, previous, ResumeRequest(), T2, by="test")
    assert str(refused.value).startswith("the loop's budget is still spent (")
    assert str(refused.value).endswith(f"): resume with a larger one, e.g. {raised}")
    assert store.load(SESSION) is None
    larger = Budgets(max_tokens=16000) if "max_tokens" in budget else Budgets(max_cost=6.0)
    state = resume_loop(store, previous, ResumeRequest(budgets=larger), T2, by="test")
    assert (state.iteration, state.budgets.max_tokens, state.budgets.max_cost) == (
        5, larger.max_tokens or None, larger.max_cost or None)


def test_resume_of_a_gate_loop_goes_on_from_the_branch_head_is_on(git_repo: Path,
                                                                  store: LoopStore) -> None:
    previous = replace(limited(git_repo, gate=Gate([GATE], branch="refs/heads/main",
                                                   iteration_base=head(git_repo))),
                       outcome="limit")
    git(git_repo, "switch", "-q", "-c", "elsewhere")
    write(git_repo, "mine.txt", "a person's commit")
    git(git_repo, "add", "mine.txt")
    git(git_repo, "commit", "-qm", "mine")
    state = resume_loop(store, previous, ResumeRequest(), T2, by="test")
    assert state.gate is not None
    assert (state.gate.branch, state.gate.iteration_base) == (
        "refs/heads/elsewhere", head(git_repo))


def test_resume_of_a_gate_loop_on_a_detached_head_is_refused(git_repo: Path,
                                                              store: LoopStore) -> None:
    previous = replace(limited(git_repo, gate=Gate([GATE], branch="refs/heads/main",
                                                   iteration_base=head(git_repo))),
                       outcome="limit")
    git(git_repo, "switch", "-q", "--detach")
    with pytest.raises(UsageError) as refused:
        resume_loop(store, previous, ResumeRequest(), T2, by="test")
    assert str(refused.value) == (
        "HEAD is detached, and gate mode commits each green iteration on a branch: switch to "
        "one (`git switch <branch>`), then resume"
    )
    assert store.load(SESSION) is None


# --- describe ---------------------------------------------------------------------------------


def test_describe_with_history() -> None:
    red = command_result("pytest -q", 1)
    state = make_state(Path("/p"), iteration=3, last_reply_excerpt="Trying again.", iterations=[
        IterationRecord(number=1, started_at=T0, ended_at=T0, result="continue",
                        approach="read"),
        IterationRecord(number=2, started_at=T0, ended_at=T0, result="rejected",
                        verification=[red, GREEN]),
    ])
    assert describe(state, T1) == (
        f"Ralph loop {state.loop_id}: iteration 3/8, promise <promise>DONE</promise>, running "
        f"5 min (session {SESSION})\n"
        "task: Make the tests pass\n"
        "last reply: Trying again."
    )
    assert describe(state, T1, history=True) == describe(state, T1) + (
        "\n  iteration 1: continue - read"
        "\n  iteration 2: rejected [verify red: pytest -q]"
    )


def test_files_dirty_before_the_start_are_not_the_loops_changes(
    git_repo: Path, store: LoopStore
) -> None:
    (git_repo / "README.md").write_text("edited before the loop\n")
    (git_repo / "scratch.txt").write_text("the user's own notes\n")
    state = start_loop(store, SESSION, StartRequest(prompt="go"), T0)
    (git_repo / "app.py").write_text("print('made by the loop')\n")
    finish(store, end_loop(state, "success", "Done.", T1))
    [archived] = store.history()
    report = Path(archived.report_path).read_text(encoding="utf-8")
    assert report.split("## Files changed\n\n")[1].split("\n\n")[0] == "- `app.py`"


# --- gate mode: the refusals before a start, and the --allow-dirty snapshot -----------------------


def test_a_dirty_tree_is_refused_without_allow_dirty(gate_project: Path) -> None:
    start_head = head(gate_project)
    write(gate_project, "scratch.txt", "uncommitted\n")
    with pytest.raises(UsageError) as refused:
        start(gate_project, f'Work --gate "{GATE}"')
    assert str(refused.value) == (
        "gate mode needs a clean working tree and scratch.txt has uncommitted changes: commit "
        "or stash them, or pass --allow-dirty to commit them as a snapshot first"
    )
    assert store_for(gate_project).load(SESSION) is None
    assert (head(gate_project), project_status(gate_project)) == (start_head, "?? scratch.txt")


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


def test_a_clean_start_records_its_base_and_no_snapshot(gate_project: Path) -> None:
    before = commits(gate_project)
    state = start(gate_project, f'Work --gate "{GATE}" --effort high')
    assert (state.gate, state.effort) == (
        Gate([GATE], branch=current_branch(gate_project), iteration_base=head(gate_project)),
        "high")
    assert commits(gate_project) == before


def test_allow_dirty_commits_a_snapshot_recorded_in_state_and_report(gate_project: Path) -> None:
    before = commits(gate_project)
    write(gate_project, "README.md", "edited by hand\n")
    write(gate_project, "scratch.txt", "uncommitted\n")
    write(gate_project, "debug.log", "ignored\n")
    state = start(gate_project, f'Work --gate "{GATE}" --allow-dirty --max-iterations 1')
    snapshot = head(gate_project)
    assert commits(gate_project) == [f"ralph: snapshot before loop {state.loop_id}", *before]
    assert git(gate_project, "show", "--name-status", "--format=", snapshot) == (
        "M\tREADME.md\nA\tscratch.txt")
    assert state.gate is not None
    assert (state.gate.snapshot_commit, state.gate.iteration_base) == (snapshot, snapshot)
    assert active(gate_project) == state
    assert project_status(gate_project) == ""

    output = stop_reply(gate_project, "Approach: nothing to do\nLooked around.")
    loop = only_archived(gate_project)
    assert output == {"systemMessage": stopped_banner(
        "Ralph loop stopped: 1 iterations made without <promise>RALPH_LOOP_STOP</promise>.",
        loop.loop_id, ["/ralph-resume --max-iterations 2"])}
    report = (gate_project / loop.report_path).read_text()
    assert gate_section(report) == [
        f"Gate: `{GATE}`",
        f"- snapshot of the starting state (--allow-dirty): `{snapshot}`",
        "- iteration 1: empty",
        "- red streak at the end: 0; empty iterations: 1",
    ]
    assert (gate_project / "debug.log").read_text() == "ignored\n"


def test_a_stale_loop_done_file_does_not_make_the_tree_dirty(git_repo: Path) -> None:
    write(git_repo, DONE_FILE, "done\n")
    start(git_repo, f'Work --gate "{GATE}"')
    assert not (git_repo / DONE_FILE).exists()
