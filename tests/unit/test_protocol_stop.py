"""The protocol end to end through the hooks, in process, in a real git repository: a plan,
a verification command that fails and then passes, the plan's Attempts and Review, the report,
re-plans, RESULT: BLOCKED, and /ralph-resume after the cap."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import finesse.hooks.prompt_submit
import finesse.hooks.stop
from finesse.hooks import prompt_submit, stop
from finesse.loop.lifecycle import start_context
from finesse.loop.report import render_report
from finesse.models import LoopState
from finesse.state.store import LoopStore
from tests.helpers.repo import git
from tests.helpers.states import SESSION, T0, files_under

# Everything but Attempts and Review belongs to the user and must come back byte for byte:
# unicode, a fence holding a heading-like line, an odd heading, no newline at the end.
BEFORE_ATTEMPTS = """\
# Ship the tax fix ✓

Intro — with “quotes” and a tab\there.

## Goal
Totals include tax. Ünïcödé.

## Acceptance Criteria
- [ ] `test -f done.txt` passes

## Plan
1. Write done.txt
   ```sh
   ## Review (inside a fence: not a heading)
   echo ok > done.txt
   ```

## Verification Commands
- `test -f README.md`

"""
ATTEMPTS = "## Attempts\n- (none yet)\n\n"
REVIEW = "## Review\nReviewer notes kept by hand.\n\n### Odd heading ###\n"
AFTER_REVIEW = "## Notes\nTrailing notes, no newline at the end"
PLAN = BEFORE_ATTEMPTS + ATTEMPTS + REVIEW + AFTER_REVIEW
NOTES = (
    "The plan is tasks/todo.md: re-read it now; your attempts are recorded under its "
    "`## Attempts`.\n"
    "When you claim completion, the plugin runs `test -f done.txt`, `test -f README.md` itself "
    "and rejects the claim if any fails.\n"
    "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you.\n"
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


class Session:
    """One Claude Code session in a project: typed prompts, stops, and its transcript."""

    def __init__(self, root: Path, transcript: Path) -> None:
        self.root = root
        self.transcript = transcript
        self.lines: list[dict[str, Any]] = []
        self.calls = 0

    def _write(self, *entries: dict[str, Any]) -> None:
        self.lines.extend(entries)
        self.transcript.write_text("".join(json.dumps(e) + "\n" for e in self.lines))

    def submit(self, prompt: str) -> dict[str, Any] | None:
        self._write({"type": "user", "message": {"role": "user", "content": prompt}})
        return prompt_submit.handle(self._input(hook_event_name="UserPromptSubmit",
                                                prompt=prompt), self._env(), str(self.root))

    def work(self, tools: int) -> None:
        """The model's turn before it stops: `tools` tool calls, each with its result."""
        for _ in range(tools):
            self.calls += 1
            tool_id = f"toolu_{self.calls:03d}"
            self._write(
                {"type": "assistant", "message": {"id": f"msg_{self.calls}", "role": "assistant",
                                                  "content": [{"type": "tool_use", "id": tool_id,
                                                               "name": "Bash", "input": {}}]}},
                {"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}]}},
            )

    def stop(self, reply: str, tools: int = 1) -> dict[str, Any] | None:
        self.work(tools)
        self._write({"type": "assistant", "message": {"id": f"msg_r{len(self.lines)}",
                                                      "role": "assistant",
                                                      "content": [{"type": "text",
                                                                   "text": reply}]}})
        output = stop.handle(self._input(hook_event_name="Stop", stop_hook_active=False,
                                         last_assistant_message=reply),
                             self._env(), str(self.root))
        if output is not None and output.get("decision") == "block":
            self._write({"type": "user", "isMeta": True, "message": {
                "role": "user", "content": f"Stop hook feedback:\n{output['reason']}"}})
        return output

    def _input(self, **fields: Any) -> bytes:
        return json.dumps({"session_id": SESSION, "transcript_path": str(self.transcript),
                           "cwd": str(self.root), "permission_mode": "default",
                           **fields}).encode()

    def _env(self) -> dict[str, str]:
        return {"CLAUDE_PROJECT_DIR": str(self.root)}


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each hook call reads the time once: a minute passes between calls."""
    ticks: Iterator[int] = iter(range(10_000))
    now = lambda: T0 + timedelta(minutes=next(ticks))  # noqa: E731
    monkeypatch.setattr(finesse.hooks.prompt_submit, "utcnow", now)
    monkeypatch.setattr(finesse.hooks.stop, "utcnow", now)


@pytest.fixture
def plan(git_repo: Path) -> Path:
    path = git_repo / "tasks" / "todo.md"
    path.parent.mkdir()
    path.write_bytes(PLAN.encode("utf-8"))
    git(git_repo, "add", "tasks/todo.md")
    git(git_repo, "commit", "-q", "-m", "plan")
    return path


@pytest.fixture
def session(git_repo: Path, tmp_path: Path) -> Session:
    return Session(git_repo, tmp_path / "transcript.jsonl")


def plan_parts(path: Path) -> tuple[str, str, str]:
    """The plan as (before Attempts, Attempts and Review, after Review)."""
    text = path.read_bytes().decode("utf-8")
    start = text.index("## Attempts\n")
    end = text.index("## Notes\n")
    return text[:start], text[start:end], text[end:]


def continues(number: int, cap: int, feedback: str = "") -> dict[str, Any]:
    reason = (f"Ralph iteration {number}/{cap}: output <promise>DONE</promise> only when it is "
              f"completely true\n\n{TASK}\n\n---\n\n{NOTES}")
    if feedback:
        reason += f"\n\n{feedback}"
    return {"decision": "block", "reason": reason,
            "systemMessage": f"Ralph iteration {number}/{cap}"}


def only_loop(store: LoopStore) -> LoopState:
    [ended] = store.history()
    return ended


CLAIM = (
    "Approach: checked the plan\n"
    "Evidence: I believe it is done\n"
    "Learning: the check wants done.txt\n"
    "Next: nothing\n\n"
    "<promise>DONE</promise>"
)


def test_claim_rejected_then_verified(session: Session, plan: Path, store: LoopStore) -> None:
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
    assert session.stop(CLAIM) == continues(2, 8, REJECTED)
    assert not (session.root / "done.txt").exists()

    # It fixes the cause with a tool call; the next claim is verified.
    (session.root / "done.txt").write_text("ok\n")
    output = session.stop("Approach: wrote done.txt\nEvidence: test -f done.txt passes\n"
                          "<promise>DONE</promise>")
    ended = only_loop(store)
    report = store.paths.reports / f"{ended.loop_id}.md"
    assert output == {"systemMessage": (
        "Ralph loop done: <promise>DONE</promise> seen at iteration 2/8 and verified "
        f"(2 command(s) green).\nReport: .claude/ralph/reports/{ended.loop_id}.md"
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

    before, middle, after = plan_parts(plan)
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
        f"Loop `{ended.loop_id}` ended: success - Ralph loop done: <promise>DONE</promise> "
        "seen at iteration 2/8 and verified (2 command(s) green).\n"
        "\n"
        "Changes made:\n"
        "- `done.txt`\n"
        "- `tasks/todo.md`\n"
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
    assert report.read_text(encoding="utf-8") == render_report(
        ended, ["done.txt", "tasks/todo.md"]
    )


def test_the_same_failure_asks_for_a_re_plan_then_blocks(
    session: Session, plan: Path, store: LoopStore
) -> None:
    session.submit("/ralph-loop --plan tasks/todo.md --verify 'test -f done.txt' "
                   "--completion-promise DONE")
    assert session.stop(CLAIM) == continues(2, 8, REJECTED)
    replan = (
        "\n\nThe same failure happened twice in a row. Stop: re-read the plan and the failure, "
        "then write a new approach in a line starting `Re-plan:` before you change anything "
        "(re-plan 1 of 2; a third identical failure ends the loop as blocked)."
    )
    assert session.stop("Tried again.\n<promise>DONE</promise>") == continues(
        3, 8, REJECTED + replan
    )
    # The re-plan is recorded in the plan at once, above the loop's own review.
    review = plan_parts(plan)[1].split("## Review\n")[1]
    assert review == (
        "Reviewer notes kept by hand.\n\n### Odd heading ###\n\n"
        "- Re-plan 1 asked at iteration 2: `test -f done.txt` failed the same way twice.\n\n"
    )
    output = session.stop("Re-plan: same thing.\n<promise>DONE</promise>")
    ended = only_loop(store)
    blocker = "Blocked by the same verification failure (`test -f done.txt`) 3 times in a row."
    assert output == {"systemMessage": (
        "Ralph loop blocked at iteration 3/8: the same verification failure "
        "(`test -f done.txt`) 3 times in a row.\n"
        "Resume: /ralph-resume\n"
        f"Report: .claude/ralph/reports/{ended.loop_id}.md"
    )}
    assert (ended.outcome, ended.blocker, ended.replans, ended.failure_streak) == (
        "blocked", blocker, 1, 3
    )
    before, middle, after = plan_parts(plan)
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
    session: Session, plan: Path, store: LoopStore
) -> None:
    session.submit("/ralph-loop --plan tasks/todo.md --completion-promise DONE")
    output = session.stop("I need credentials.\n\nRESULT: BLOCKED\nNo STAGING_KEY in the "
                          "environment.\nAsk ops for one.")
    ended = only_loop(store)
    blocker = "No STAGING_KEY in the environment.\nAsk ops for one."
    assert output == {"systemMessage": (
        "Ralph loop blocked at iteration 1/8: No STAGING_KEY in the environment. Ask ops for "
        f"one.\nResume: /ralph-resume\nReport: .claude/ralph/reports/{ended.loop_id}.md"
    )}
    assert (ended.outcome, ended.blocker, [r.result for r in ended.iterations]) == (
        "blocked", blocker, ["blocked"]
    )
    before, middle, after = plan_parts(plan)
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
    assert session.stop("Let me think.", tools=0)["decision"] == "block"  # type: ignore[index]
    output = session.stop("Still thinking.", tools=0)
    ended = only_loop(store)
    assert output == {"systemMessage": (
        "Ralph loop quiesced at iteration 3/8: 2 iterations in a row with no tool call and no "
        f"change to the project.\nResume: /ralph-resume\n"
        f"Report: .claude/ralph/reports/{ended.loop_id}.md"
    )}
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


def test_resume_after_the_cap_goes_on_with_the_history(
    session: Session, store: LoopStore
) -> None:
    session.submit("/ralph-loop Fix it --completion-promise DONE --max-iterations 2")
    assert session.submit("/ralph-resume") == {
        "decision": "block",
        "reason": "finesse: no ended Ralph loop in this session to resume; start one with "
                  "/ralph-loop",
    }
    session.stop("Approach: first\nLearning: one")
    output = session.stop("Approach: second")
    limited = only_loop(store)
    assert output == {"systemMessage": (
        "Ralph loop stopped: 2 iterations made without <promise>DONE</promise>.\n"
        "Resume: /ralph-resume --max-iterations 4\n"
        f"Report: .claude/ralph/reports/{limited.loop_id}.md"
    )}
    assert session.submit("/ralph-resume --max-iterations 2") == {
        "decision": "block",
        "reason": "finesse: --max-iterations 2 leaves no room: the loop has made 2 iterations; "
                  "give a larger number, e.g. 4",
    }
    resumed = session.submit("/finesse:ralph-resume --max-iterations 4")
    state = store.load(SESSION)
    assert state is not None
    assert resumed == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                               "additionalContext": start_context(state)},
        "systemMessage": "Ralph loop resumed at iteration 3/4 (it had ended: limit).",
    }
    assert (state.loop_id, state.iteration, state.max_iterations, state.outcome,
            [r.approach for r in state.iterations], state.learnings) == (
        limited.loop_id, 3, 4, None, ["first", "second"], ["one"]
    )
    assert session.submit("/ralph-resume") == {
        "decision": "block",
        "reason": "finesse: a Ralph loop is already running in that session: /cancel-ralph "
                  "first",
    }
    session.stop("Approach: third")
    output = session.stop("Approach: fourth\n<promise>DONE</promise>")
    [ended] = store.history()
    assert output == {"systemMessage": (
        "Ralph loop done: <promise>DONE</promise> seen at iteration 4/4.\n"
        f"Report: .claude/ralph/reports/{ended.loop_id}.md"
    )}
    assert (ended.loop_id, [r.approach for r in ended.iterations], len(ended.resumes)) == (
        limited.loop_id, ["first", "second", "third", "fourth"], 1
    )
    assert session.submit("/ralph-resume") == {
        "decision": "block",
        "reason": f"finesse: the last loop ({ended.loop_id}) ended in success, which cannot be "
                  "resumed: start a new one with /ralph-loop",
    }


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("/ralph-resume now", "finesse: /ralph-resume takes only options: type /ralph-resume "
                              "[--max-iterations N] [--timeout-minutes N]"),
        ("/ralph-resume --max-iterations 0",
         "finesse: --max-iterations must be from 1 to 1000, not 0: a loop always has a cap; "
         "for example --max-iterations 8"),
    ],
)
def test_resume_argument_errors_block_with_one_line(session: Session, store: LoopStore,
                                                    command: str, reason: str) -> None:
    assert session.submit(command) == {"decision": "block", "reason": reason}
    assert files_under(store.paths.base) == []


def test_plan_without_verification_is_refused_before_any_loop(
    session: Session, plan: Path, store: LoopStore
) -> None:
    plan.write_text(PLAN.replace("- `test -f README.md`\n", ""), encoding="utf-8")
    assert session.submit("/ralph-loop --plan tasks/todo.md") == {
        "decision": "block",
        "reason": 'finesse: tasks/todo.md has no command under "## Verification Commands": list '
                  "each in backticks, e.g. `pytest -q`, or pass --verify CMD",
    }
    assert files_under(store.paths.base) == []


def test_the_deadline_ends_the_loop_and_resume_opens_a_fresh_window(
    session: Session, store: LoopStore
) -> None:
    # Each hook call is a minute later than the one before (the _clock fixture).
    session.submit("/ralph-loop Fix it --completion-promise DONE --timeout-minutes 2")
    assert session.stop("Edited a file.")["decision"] == "block"  # type: ignore[index]
    output = session.stop("Edited another.")
    ended = only_loop(store)
    assert output == {"systemMessage": (
        "Ralph loop timed out after 2 minutes, at iteration 2/8.\n"
        "Resume: /ralph-resume --timeout-minutes 2\n"
        f"Report: .claude/ralph/reports/{ended.loop_id}.md"
    )}
    assert (ended.outcome, ended.deadline_at) == ("timeout", T0 + timedelta(minutes=2))
    session.submit("/ralph-resume --timeout-minutes 5")
    state = store.load(SESSION)
    assert state is not None
    assert (state.iteration, state.timeout_minutes, state.deadline_at) == (
        3, 5, T0 + timedelta(minutes=3 + 5)
    )
    assert session.stop("Going on.")["decision"] == "block"  # type: ignore[index]
