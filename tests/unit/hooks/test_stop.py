"""The Stop hook in process, in a real temporary git repository: a loop goes on or ends;
under the protocol, with a plan and a verification command that fails and then passes,
the plan's Attempts and Review, the report, re-plans, RESULT: BLOCKED and the deadline."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from finesse.hooks import stop
from finesse.loop import observe
from finesse.loop.final_report import render_report
from finesse.loop.lifecycle import end_facts
from finesse.loop.status import start_context
from finesse.models import LoopState
from finesse.state.store import LoopStore
from tests.helpers.hooks import Session, continuation, env_for, stop_hook, stop_input, submit
from tests.helpers.plans import AFTER_REVIEW, BEFORE_ATTEMPTS, plan_parts
from tests.helpers.states import (
    OTHER_SESSION,
    SESSION,
    T0,
    active,
    archived,
    files_under,
    hold_lock,
    only_archived,
)
from tests.helpers.texts import NOTES, UNVERIFIED_END, stopped_banner


def continues(number: int, cap: int, promise: str, task: str) -> dict[str, object]:
    """The Stop hook's output when the loop goes on to iteration `number`."""
    return continuation(
        f"Ralph iteration {number}/{cap}: output <promise>{promise}</promise> only when it is "
        f"completely true\n\n{task}\n\n---\n\n{NOTES}",
        f"Ralph iteration {number}/{cap}",
    )


def report_line(state: LoopState) -> str:
    return f"Report: .claude/ralph/reports/{state.loop_id}.md"


# --- the plain loop -------------------------------------------------------------------------------


def test_stop_continues_with_the_same_prompt(git_repo: Path) -> None:
    submit(git_repo, "/ralph-loop 'Fix it' --completion-promise DONE --max-iterations 5")
    output = stop_hook(git_repo, stop_input("Working on it."))
    assert output == continues(2, 5, "DONE", "Fix it")
    state = active(git_repo)
    assert (state.iteration, state.last_reply_excerpt, [r.result for r in state.iterations]) == (
        2, "Working on it.", ["continue"]
    )


def test_stop_ends_on_the_promise(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop 'Fix it' --completion-promise DONE")
    stop_hook(git_repo, stop_input("Not yet."))
    output = stop_hook(git_repo, stop_input("All green.\n\n<promise>DONE</promise>"))
    assert files_under(store.paths.loops) == []
    [ended] = archived(git_repo)
    assert output == {
        "systemMessage": "Ralph loop done: <promise>DONE</promise> at iteration 2/8"
                         + UNVERIFIED_END + "\nFiles modified: 0 (+0, -0)\n" + report_line(ended)
    }
    # The Markdown report and the HTML one beside it.
    assert files_under(store.paths.reports) == [f"{ended.loop_id}.html", f"{ended.loop_id}.md"]
    assert (ended.outcome, ended.iteration, [r.result for r in ended.iterations]) == (
        "success", 2, ["continue", "success"]
    )
    assert stop_hook(git_repo, stop_input("after the end")) is None


def test_stop_ends_at_the_cap(git_repo: Path, store: LoopStore) -> None:
    # Talk-only iterations: quiescence is pushed past the cap so the cap is what ends it.
    submit(git_repo, "/ralph-loop go --max-iterations 2 --completion-promise DONE "
                     "--quiesce-after 7")
    assert stop_hook(git_repo, stop_input("one")) == continues(2, 2, "DONE", "go")
    output = stop_hook(git_repo, stop_input("two"))
    assert files_under(store.paths.loops) == []
    [ended] = archived(git_repo)
    assert output == {"systemMessage": stopped_banner(
        "Ralph loop stopped: 2 iterations made without <promise>DONE</promise>.",
        ended.loop_id, ["/ralph-resume --max-iterations 4"])}
    assert (ended.outcome, [r.result for r in ended.iterations]) == (
        "limit", ["continue", "limit"]
    )


def test_talk_only_stops_quiesce_before_the_cap(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    assert stop_hook(git_repo, stop_input("Thinking about it.")) == continues(2, 8, "DONE", "go")
    output = stop_hook(git_repo, stop_input("Still thinking."))
    [ended] = archived(git_repo)
    assert output == {"systemMessage": stopped_banner(
        "Ralph loop quiesced at iteration 2/8: 2 iterations in a row with no tool call and no "
        "change to the project.", ended.loop_id, [])}
    assert (ended.outcome, ended.idle_iterations, [r.result for r in ended.iterations]) == (
        "quiesced", 2, ["continue", "quiesced"]
    )
    assert files_under(store.paths.loops) == []


def test_stop_of_a_session_without_a_loop(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop go")
    before = store.paths.loop_file(SESSION).read_bytes()
    assert stop_hook(git_repo, stop_input("<promise>RALPH_LOOP_STOP</promise>",
                                          OTHER_SESSION)) is None
    assert store.paths.loop_file(SESSION).read_bytes() == before
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]


def test_two_sessions_leave_each_other_alone(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop mine")
    submit(git_repo, "/ralph-loop theirs", OTHER_SESSION)
    theirs = store.paths.loop_file(OTHER_SESSION).read_bytes()
    stop_hook(git_repo, stop_input("working"))
    stop_hook(git_repo, stop_input("<promise>RALPH_LOOP_STOP</promise>"))
    assert store.paths.loop_file(OTHER_SESSION).read_bytes() == theirs
    assert [loop.session_id for loop in archived(git_repo)] == [SESSION]


def test_cwd_in_a_subdirectory_changes_nothing(git_repo: Path, store: LoopStore) -> None:
    sub = git_repo / "src" / "pkg"
    sub.mkdir(parents=True)
    submit(git_repo, "/ralph-loop go --completion-promise DONE --quiesce-after 7")
    raw = stop_input("working", cwd=str(sub))
    assert stop.handle(raw, env_for(git_repo), str(sub)) == continues(2, 8, "DONE", "go")
    # Without CLAUDE_PROJECT_DIR the git top level of the cwd is the root.
    assert stop.handle(stop_input("still", cwd=str(sub)), {}, str(sub)) == continues(
        3, 8, "DONE", "go"
    )
    assert not (sub / ".claude").exists()
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]
    assert active(git_repo).iteration == 3


def test_corrupt_state_is_reported_and_moved_aside(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop go")
    store.paths.loop_file(SESSION).write_text('{"half": ')
    output = stop_hook(git_repo, stop_input())
    [moved] = files_under(store.paths.corrupt)
    moved_to = store.paths.corrupt / moved
    message = (
        f"the loop state {SESSION}.json was unreadable (the file: not valid JSON "
        f"(Expecting value: line 1 column 10 (char 9))); it was moved to {moved_to} and the "
        "loop has stopped"
    )
    assert output == {"systemMessage": f"finesse: {message}"}
    assert moved_to.read_text() == '{"half": '
    assert files_under(store.paths.loops) == []
    assert store.paths.log.read_text().split(" ", 1)[1] == message + "\n"
    assert stop_hook(git_repo, stop_input()) is None


def test_kill_switch_cancels(git_repo: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    store.paths.kill_switch.touch()
    output = stop_hook(git_repo, stop_input("<promise>DONE</promise>"))
    assert files_under(store.paths.loops) == []
    [ended] = archived(git_repo)
    assert output == {
        "systemMessage": "Ralph loop cancelled by the kill switch at iteration 1/8.\n"
                         + report_line(ended)
    }
    assert (ended.outcome, [r.result for r in ended.iterations]) == ("cancelled", ["cancelled"])


# --- the reply: last_assistant_message, else the transcript ---------------------------------------


def _transcript(path: Path, reply: str) -> Path:
    lines = [
        {"type": "user", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
                                          "content": [{"type": "thinking", "thinking": "t"}]}},
        {"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
                                          "content": [{"type": "text", "text": reply}]}},
        {"type": "system", "subtype": "info", "content": "x"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_transcript_is_the_fallback(git_repo: Path, tmp_path: Path, store: LoopStore) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    transcript = _transcript(tmp_path / "t.jsonl", "Finished. <promise>DONE</promise>")
    output = stop_hook(git_repo, stop_input(None, transcript=str(transcript)))
    [ended] = archived(git_repo)
    assert output == {"systemMessage": "Ralph loop done: <promise>DONE</promise> at iteration "
                                       "1/8" + UNVERIFIED_END + "\nFiles modified: 0 (+0, -0)\n"
                                       + report_line(ended)}
    assert ended.last_reply_excerpt == "Finished. <promise>DONE</promise>"


def test_last_assistant_message_beats_the_transcript(git_repo: Path, tmp_path: Path) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    transcript = _transcript(tmp_path / "t.jsonl", "Stale. <promise>DONE</promise>")
    output = stop_hook(git_repo, stop_input("Newer reply, not done", transcript=str(transcript)))
    assert output is not None and "hookSpecificOutput" in output
    assert active(git_repo).last_reply_excerpt == "Newer reply, not done"


def test_no_reply_at_all_continues(git_repo: Path) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    output = stop_hook(git_repo, stop_input(None, transcript="/nonexistent/t.jsonl"))
    assert output == continues(2, 8, "DONE", "go")


# --- input it cannot use, a lock held too long, the entry point -----------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"", b"garbage", b"[1]", b"{}", b'{"session_id": null}',
     b'{"session_id": "../x"}', b'{"session_id": "ok", "last_assistant_message": 5}'],
)
def test_unusable_stop_input_gets_no_output(git_repo: Path, store: LoopStore, raw: bytes) -> None:
    submit(git_repo, "/ralph-loop go")
    before = store.paths.loop_file(SESSION).read_bytes()
    assert stop_hook(git_repo, raw) is None
    assert store.paths.loop_file(SESSION).read_bytes() == before


def test_lock_held_too_long_lets_the_stop_go_ahead(
    git_repo: Path, store: LoopStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import finesse.state.store

    submit(git_repo, "/ralph-loop go")
    before = store.paths.loop_file(SESSION).read_bytes()
    monkeypatch.setattr(finesse.state.store, "LOCK_TIMEOUT_SECONDS", 0.05)
    with hold_lock(store.paths.lock_file(SESSION)):
        output = stop_hook(git_repo, stop_input())
    assert output == {
        "systemMessage": f"finesse: another process holds {store.paths.lock_file(SESSION)} for "
                         "over 0 s; try again, or run `ralph status`; this stop went ahead"
    }
    assert store.paths.loop_file(SESSION).read_bytes() == before


def test_stop_main(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    submit(git_repo, "/ralph-loop go --completion-promise DONE")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(git_repo))
    monkeypatch.chdir(git_repo)
    out = io.StringIO()
    assert stop.main(stdin=io.BytesIO(stop_input("working")), stdout=out) == 0
    assert out.getvalue().count("\n") == 1
    assert json.loads(out.getvalue()) == continues(2, 8, "DONE", "go")
    out = io.StringIO()
    assert stop.main(stdin=io.BytesIO(stop_input("x", OTHER_SESSION)), stdout=out) == 0
    assert out.getvalue() == ""


# --- the protocol: a plan, verification, re-plans, blocked, quiescence, the deadline --------------

# The protocol notes of a loop with the plan and its verification commands.
PLAN_NOTES = (
    "The plan is tasks/todo.md: re-read it now; your attempts are recorded under its "
    "`## Attempts`.\n"
    "When you claim completion, the plugin runs `test -f done.txt`, `test -f README.md` itself "
    "and rejects the claim if any fails.\n"
    "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you "
    "and what the user must do; that ends the loop as blocked, whatever else the reply "
    "says.\n"
    "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
    "`Next: ...`."
)
TASK = ("Work through the plan in tasks/todo.md: read it, take the first incomplete, unblocked "
        "task, do it (test first for behaviour changes), run its verification, and tick it off "
        "in the plan.")
REJECTED = (
    "Your completion claim was rejected: the verification failed.\n\n"
    "`test -f done.txt`: exit code 1. It printed nothing.\n"
)


def plan_continues(number: int, cap: int, feedback: str = "",
                   learned: str = "the check wants done.txt") -> dict[str, Any]:
    """The next prompt: the header, the previous learning (seed 004: every iteration after
    the first starts from it), the task, the notes, the feedback."""
    reason = (f"Ralph iteration {number}/{cap}: output <promise>DONE</promise> only when it is "
              f"completely true\n\nPrevious learnings: {learned}\n\n{TASK}\n\n---\n\n"
              f"{PLAN_NOTES}")
    if feedback:
        reason += f"\n\n{feedback}"
    return continuation(reason, f"Ralph iteration {number}/{cap}")


CLAIM = (
    "Approach: checked the plan\n"
    "Evidence: I believe it is done\n"
    "Learning: the check wants done.txt\n"
    "Next: nothing\n\n"
    "<promise>DONE</promise>"
)


def test_claim_rejected_then_verified(session: Session, protocol_plan: Path,
                                      store: LoopStore) -> None:
    started = session.submit("/ralph-loop --plan tasks/todo.md --verify 'test -f done.txt' "
                             "--completion-promise DONE")
    assert started is not None and set(started) == {"hookSpecificOutput", "systemMessage"}
    state = store.load(SESSION)
    assert state is not None
    assert (state.verify, state.plan_file, state.prompt) == (
        ["test -f done.txt", "test -f README.md"], "tasks/todo.md", TASK
    )
    assert started["hookSpecificOutput"]["additionalContext"] == start_context(state)

    # The agent claims done with done.txt missing: the hook runs the command itself.
    assert session.stop(CLAIM) == plan_continues(2, 8, REJECTED)
    assert not (session.root / "done.txt").exists()

    # It fixes the cause with a tool call; the next claim is verified.
    (session.root / "done.txt").write_text("ok\n")
    output = session.stop("Approach: wrote done.txt\nEvidence: test -f done.txt passes\n"
                          "<promise>DONE</promise>")
    ended = only_archived(session.root)
    report = store.paths.reports / f"{ended.loop_id}.md"
    assert output == {"systemMessage": (
        "Ralph loop done: <promise>DONE</promise> at iteration 2/8 and verified: "
        "`test -f done.txt` exit 0, `test -f README.md` exit 0.\n"
        "Files modified: 1 (+1, -0)\n"
        f"Report: .claude/ralph/reports/{ended.loop_id}.md"
    )}
    assert (ended.outcome, [r.result for r in ended.iterations], ended.report_path) == (
        "success", ["rejected", "success"], str(report)
    )
    assert [[(v.command, v.exit_code) for v in r.verification] for r in ended.iterations] == [
        [("test -f done.txt", 1), ("test -f README.md", 0)],
        [("test -f done.txt", 0), ("test -f README.md", 0)],
    ]
    assert [r.tool_calls for r in ended.iterations] == [1, 1]
    assert ended.learnings == ["the check wants done.txt"]
    assert files_under(store.paths.loops) == []

    before, middle, after = plan_parts(protocol_plan)
    assert (before, after) == (BEFORE_ATTEMPTS, AFTER_REVIEW)
    assert middle == (
        "## Attempts\n"
        "- (none yet)\n"
        "\n"
        "### Iteration 1 (2026-11-30 07:01 UTC)\n"
        "- Result: rejected\n"
        "- Approach: checked the plan\n"
        "- Evidence: I believe it is done\n"
        "- Learning: the check wants done.txt\n"
        "- Next: nothing\n"
        "- Verifier: `test -f done.txt` red (exit 1)\n"
        "- Verifier: `test -f README.md` green\n"
        "\n"
        "### Iteration 2 (2026-11-30 07:02 UTC)\n"
        "- Result: success\n"
        "- Approach: wrote done.txt\n"
        "- Evidence: test -f done.txt passes\n"
        "- Verifier: `test -f done.txt` green\n"
        "- Verifier: `test -f README.md` green\n"
        "\n"
        "## Review\n"
        "Reviewer notes kept by hand.\n"
        "\n"
        "### Odd heading ###\n"
        "\n"
        "<!-- finesse:review -->\n"
        f"Loop `{ended.loop_id}` ended: success (verified) - Ralph loop done: "
        "<promise>DONE</promise> at iteration 2/8 and verified: `test -f done.txt` exit 0, "
        "`test -f README.md` exit 0.\n"
        "\n"
        "Changes made:\n"
        "- `done.txt`\n"
        "\n"
        "Verification evidence:\n"
        + "".join(f"- `{v.command}`: green (exit 0, {v.duration_seconds:.1f} s)\n"
                  for v in ended.last_verification)
        + "\n"
        "Skipped checks:\n"
        "- none\n"
        "\n"
        "Remaining blockers:\n"
        "- none\n"
        "\n"
    )
    facts = end_facts(store, ended)
    assert (facts.files, report.read_text(encoding="utf-8")) == (
        ["done.txt"], render_report(ended, facts))


def test_the_same_failure_asks_for_a_re_plan_then_blocks(
    session: Session, protocol_plan: Path, store: LoopStore
) -> None:
    session.submit("/ralph-loop --plan tasks/todo.md --verify 'test -f done.txt' "
                   "--completion-promise DONE")
    assert session.stop(CLAIM) == plan_continues(2, 8, REJECTED)
    replan = (
        "\n\nThe same failure happened twice in a row. Stop: re-read the plan and the failure, "
        "then write a new approach in a line starting `Re-plan:` before you change anything "
        "(re-plan 1 of 2; a third identical failure stops the loop)."
    )
    assert session.stop("Tried again.\n<promise>DONE</promise>") == plan_continues(
        3, 8, REJECTED + replan
    )
    # The re-plan is recorded in the plan at once, above the loop's own review.
    review = plan_parts(protocol_plan)[1].split("## Review\n")[1]
    assert review == (
        "Reviewer notes kept by hand.\n\n### Odd heading ###\n\n"
        "- Re-plan 1 asked at iteration 2: `test -f done.txt` failed the same way twice.\n\n"
    )
    output = session.stop("Re-plan: same thing.\n<promise>DONE</promise>")
    ended = only_archived(session.root)
    blocker = ("BLOCKED (the re-plan limit was hit): the same verification failure "
               "(`test -f done.txt`) 3 times in a row. Required user action: look at the "
               "failure below, fix what the loop could not, then `/ralph-resume`.")
    assert output == {"systemMessage": stopped_banner(
        "Ralph loop stopped at iteration 3/8: the same verification failure "
        "(`test -f done.txt`) 3 times in a row.", ended.loop_id,
        ["/ralph-resume --max-iterations 16"], failure="`test -f done.txt` exit 1",
        learnings=1)}
    assert (ended.outcome, ended.blocker, ended.replans, ended.failure_streak) == (
        "limit", blocker, 1, 3
    )
    before, middle, after = plan_parts(protocol_plan)
    assert (before, after) == (BEFORE_ATTEMPTS, AFTER_REVIEW)
    attempts, review = middle.split("## Review\n")
    assert [line for line in attempts.splitlines() if line.startswith("### ")] == [
        "### Iteration 1 (2026-11-30 07:01 UTC)",
        "### Iteration 2 (2026-11-30 07:02 UTC)",
        "### Iteration 3 (2026-11-30 07:03 UTC)",
    ]
    assert review.startswith(
        "Reviewer notes kept by hand.\n\n### Odd heading ###\n\n"
        "- Re-plan 1 asked at iteration 2: `test -f done.txt` failed the same way twice.\n"
        f"- {blocker}\n\n<!-- finesse:review -->\n"
    )
    assert review.endswith(f"Remaining blockers:\n- {blocker}\n\n")
    report = (store.paths.reports / f"{ended.loop_id}.md").read_text(encoding="utf-8")
    assert f"\n## Blocker\n\n{blocker}\n" in report


def test_result_blocked_ends_the_loop_and_records_the_blocker(
    session: Session, protocol_plan: Path, store: LoopStore
) -> None:
    session.submit("/ralph-loop --plan tasks/todo.md --completion-promise DONE")
    output = session.stop("I need credentials.\n\nRESULT: BLOCKED\nNo STAGING_KEY in the "
                          "environment.\nAsk ops for one.")
    ended = only_archived(session.root)
    blocker = "No STAGING_KEY in the environment.\nAsk ops for one."
    assert output == {"systemMessage": stopped_banner(
        "Ralph loop blocked at iteration 1/8: No STAGING_KEY in the environment. Ask ops for "
        "one.", ended.loop_id, [])}
    assert (ended.outcome, ended.blocker, [r.result for r in ended.iterations]) == (
        "blocked", blocker, ["blocked"]
    )
    before, middle, after = plan_parts(protocol_plan)
    assert (before, after) == (BEFORE_ATTEMPTS, AFTER_REVIEW)
    review = middle.split("## Review\n")[1]
    assert review.startswith(
        "Reviewer notes kept by hand.\n\n### Odd heading ###\n\n"
        "- Blocked at iteration 1: No STAGING_KEY in the environment.\n"
        "  Ask ops for one.\n\n<!-- finesse:review -->\n"
    )
    assert review.endswith(
        "Remaining blockers:\n- No STAGING_KEY in the environment.\nAsk ops for one.\n\n"
    )
    report = (store.paths.reports / f"{ended.loop_id}.md").read_text(encoding="utf-8")
    assert f"\n## Blocker\n\n{blocker}\n" in report


def test_talk_only_stops_quiesce_with_a_real_transcript(
    session: Session, store: LoopStore
) -> None:
    session.submit("/ralph-loop Fix it --completion-promise DONE")
    assert session.stop("Working with tools.", tools=2) is not None
    assert session.stop("Let me think.", tools=0)["hookSpecificOutput"]  # type: ignore[index]
    output = session.stop("Still thinking.", tools=0)
    ended = only_archived(session.root)
    assert output == {"systemMessage": stopped_banner(
        "Ralph loop quiesced at iteration 3/8: 2 iterations in a row with no tool call and no "
        "change to the project.", ended.loop_id, [])}
    assert [(r.tool_calls, r.tree_changed) for r in ended.iterations] == [
        (2, False), (0, False), (0, False)
    ]


def test_a_changed_tree_is_not_idle(session: Session, store: LoopStore) -> None:
    session.submit("/ralph-loop Fix it --completion-promise DONE")
    for number in range(1, 5):
        # No tool call in the transcript, but the project changes each time.
        (session.root / f"file{number}.txt").write_text("x\n")
        assert session.stop(f"Edited file {number}.", tools=0) is not None
    state = store.load(SESSION)
    assert state is not None
    assert (state.iteration, state.idle_iterations) == (5, 0)
    assert [r.tree_changed for r in state.iterations] == [True] * 4


def test_the_deadline_ends_the_loop_and_resume_opens_a_fresh_window(
    session: Session, store: LoopStore
) -> None:
    # Each hook call is a minute later than the one before (the _clock fixture).
    session.submit("/ralph-loop Fix it --completion-promise DONE --timeout-minutes 2")
    assert session.stop("Edited a file.")["hookSpecificOutput"]  # type: ignore[index]
    output = session.stop("Edited another.")
    ended = only_archived(session.root)
    assert output == {"systemMessage": stopped_banner(
        "Ralph loop timed out after 2 minutes, at iteration 2/8.", ended.loop_id,
        ["/ralph-resume --timeout-minutes 2"])}
    assert (ended.outcome, ended.deadline_at) == ("timeout", T0 + timedelta(minutes=2))
    session.submit("/ralph-resume --timeout-minutes 5")
    state = store.load(SESSION)
    assert state is not None
    assert (state.iteration, state.timeout_minutes, state.deadline_at) == (
        3, 5, T0 + timedelta(minutes=3 + 5)
    )
    assert session.stop("Going on.")["hookSpecificOutput"]  # type: ignore[index]


# --- a transcript that lags behind the Stop input ------------------------------------------------


def _reply_line(reply: str, message_id: str, tokens: int) -> dict[str, Any]:
    return {"type": "assistant", "message": {
        "id": message_id, "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": reply}],
        "usage": {"input_tokens": tokens, "output_tokens": 0,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}


def test_a_reply_written_after_the_hook_started_is_this_iterations_usage(
        session: Session, store: LoopStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # Claude Code may run the Stop hook before it writes the reply's lines: the hook waits a
    # little for them, so their usage is this iteration's, not the next one's.
    session.submit("/ralph-loop go --quiesce-after 5")
    late = _reply_line("working on it", "msg_late", 1234)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:  # the reply's lines land while the hook waits
            session._write(late)

    monkeypatch.setattr(observe, "_sleep", sleep)
    stop_hook(session.root, stop_input("working on it", SESSION, str(session.root),
                                       str(session.transcript)))
    state = active(session.root)
    assert [usage.input for usage in state.iterations[-1].usage] == [1234]
    assert len(waits) == 2
    # Caught up at once: no wait at all.
    waits.clear()
    session._write(_reply_line("still working", "msg_2", 10))
    stop_hook(session.root, stop_input("still working", SESSION, str(session.root),
                                       str(session.transcript)))
    assert waits == []
    assert [usage.input for usage in active(session.root).iterations[-1].usage] == [10]


def test_a_transcript_that_never_catches_up_is_waited_for_a_second_at_most(
        session: Session, store: LoopStore, monkeypatch: pytest.MonkeyPatch) -> None:
    session.submit("/ralph-loop go --quiesce-after 5")
    clock = iter(range(1000))
    monkeypatch.setattr(observe, "_monotonic", lambda: next(clock) * 0.05)
    monkeypatch.setattr(observe, "_sleep", lambda seconds: None)
    output = stop_hook(session.root, stop_input("never written", SESSION, str(session.root),
                                                str(session.transcript)))
    assert output is not None  # the loop goes on; the usage comes with the next stop
    assert active(session.root).iterations[-1].usage == []
    assert next(clock) <= 25  # about TRANSCRIPT_LAG_SECONDS / 0.05 reads, then it went on
