"""The Ralph protocol in the real Claude Code CLI: the verification gate, terminal lines,
quiescence, resume, and plans, against the scripted fake model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fakeapi import FakeModel, bash, text
from tests.e2e.harness import ClaudeRun, ClaudeRunner

pytestmark = pytest.mark.e2e

# The README's worked example, verbatim.
PLAN = """\
## Goal
`slugify()` turns titles into URL slugs.

## Acceptance Criteria
- [ ] `python3 -m pytest -q tests/test_slug.py` passes

## Plan
- [ ] Write tests/test_slug.py for spaces, case and punctuation
- [ ] Implement slug.py

## Verification Commands
- `python3 -m pytest -q tests/test_slug.py`

## Attempts

## Review
"""
VERIFY = "python3 -m pytest -q tests/test_slug.py"

WRITE_TEST_AND_FIRST_TRY = (
    "mkdir -p tests && printf '%s\\n' 'from slug import slugify' '' "
    "'def test_slug():' '    assert slugify(\"Hello, World!\") == \"hello-world\"' "
    "> tests/test_slug.py && printf '%s\\n' 'def slugify(title):' "
    "'    return title.lower().replace(\" \", \"-\")' > slug.py"
)
FIX = (
    "printf '%s\\n' 'import re' '' 'def slugify(title):' "
    "'    return \"-\".join(re.findall(r\"[a-z0-9]+\", title.lower()))' > slug.py"
)


def _ended(project: Path) -> list[dict[str, Any]]:
    history = project / ".claude" / "ralph" / "history"
    return [json.loads(path.read_text()) for path in sorted(history.glob("*.json"))]


def _one_ended(project: Path, run: ClaudeRun) -> dict[str, Any]:
    """The one loop the history holds; when it holds another number, what the CLI printed,
    finesse's log and the state folder, so a failure says why."""
    ended = _ended(project)
    if len(ended) != 1:
        state = project / ".claude" / "ralph"
        log = state / "finesse.log"
        files = sorted(str(p.relative_to(state)) for p in state.rglob("*"))
        raise AssertionError(
            f"{len(ended)} loops in the history, 1 expected\n{run.describe()}\n"
            f"finesse.log:\n{log.read_text() if log.exists() else '(none)'}\nfiles: {files}")
    return ended[0]


def _ok(run: ClaudeRun) -> None:
    assert run.returncode == 0, run.describe()
    assert run.result is not None and run.result.get("is_error") is False, run.describe()


def _outside(plan_text: str, *sections: str) -> str:
    """The plan with the bodies of the given sections cut out."""
    for title in sections:
        plan_text = re.sub(rf"(## {title}\n)(.*?)(?=\n## |\Z)", r"\1", plan_text, flags=re.S)
    return plan_text


def test_claim_is_checked_rejected_then_verified(run_claude: ClaudeRunner, project: Path) -> None:
    (project / "tasks").mkdir()
    (project / "tasks" / "todo.md").write_text(PLAN)
    script = [
        [bash(WRITE_TEST_AND_FIRST_TRY)],
        [text("Wrote the test and slug.py.\nApproach: lower-case and dash the spaces\n"
              "Evidence: none yet\nLearning: punctuation matters\nNext: run the tests\n"
              "<promise>DONE</promise>")],
        [bash(FIX)],
        [text("Fixed punctuation.\nApproach: keep runs of letters and digits\n"
              "Evidence: the test passes\nLearning: use a regex\nNext: none\n"
              "<promise>DONE</promise>")],
    ]
    with FakeModel(script) as model:
        run = run_claude(
            "/ralph-loop --plan tasks/todo.md --completion-promise DONE --max-iterations 10",
            cwd=project, model=model,
        )
    _ok(run)
    assert model.call_count == 4, run.describe()
    rejected = model.last_user_text(2)
    assert "Ralph iteration 2/10" in rejected
    assert "Your completion claim was rejected: the verification failed." in rejected
    assert f"`{VERIFY}`: exit code 1" in rejected
    assert "AssertionError" in rejected
    [loop] = _ended(project)
    assert loop["outcome"] == "success"
    assert (loop["end_message"], loop["verified"]) == (
        "Ralph loop done: <promise>DONE</promise> at iteration 2/10 and verified: "
        "`python3 -m pytest -q tests/test_slug.py` exit 0.", True)
    assert [record["result"] for record in loop["iterations"]] == ["rejected", "success"]
    assert loop["learnings"] == ["punctuation matters", "use a regex"]
    assert [(r["command"], r["exit_code"]) for r in loop["last_verification"]] == [(VERIFY, 0)]
    plan_after = (project / "tasks" / "todo.md").read_text()
    assert _outside(plan_after, "Attempts", "Review") == _outside(PLAN, "Attempts", "Review")
    attempts = plan_after.split("## Attempts")[1].split("## Review")[0]
    assert "### Iteration 1" in attempts and "- Result: rejected" in attempts
    assert f"- Verifier: `{VERIFY}` red (exit 1)" in attempts
    assert "### Iteration 2" in attempts and f"- Verifier: `{VERIFY}` green" in attempts
    review = plan_after.split("## Review")[1]
    assert "- `slug.py`" in review and "- `tests/test_slug.py`" in review
    report = Path(loop["report_path"])
    assert report.is_file() and "## Verification\n\n- `python3 -m pytest" in report.read_text()


def test_result_blocked_ends_the_loop_with_the_blocker(
    run_claude: ClaudeRunner, project: Path
) -> None:
    reply = "I cannot go on.\nRESULT: BLOCKED\nThe API key in .env is missing; ask the user."
    with FakeModel([[text(reply)], [text("should not be asked")]]) as model:
        run = run_claude('/ralph-loop "Call the API" --max-iterations 5', cwd=project,
                         model=model)
    _ok(run)
    assert model.call_count == 1, run.describe()
    [loop] = _ended(project)
    assert (loop["outcome"], loop["blocker"]) == (
        "blocked", "The API key in .env is missing; ask the user.")


def test_agent_that_only_talks_is_quiesced_before_the_block_cap(
    run_claude: ClaudeRunner, project: Path
) -> None:
    script = [[text(f"Thinking about it, take {n}.")] for n in range(1, 12)]
    with FakeModel(script) as model:
        run = run_claude('/ralph-loop "Refactor" --max-iterations 20 --quiesce-after 3',
                         cwd=project, model=model)
    _ok(run)
    assert model.call_count == 3, run.describe()
    [loop] = _ended(project)
    assert loop["outcome"] == "quiesced"
    assert loop["end_message"] == (
        "Ralph loop quiesced at iteration 3/20: 3 iterations in a row with no tool call and "
        "no change to the project."
    )


def test_loop_at_its_cap_resumes_with_its_history(run_claude: ClaudeRunner, project: Path) -> None:
    with FakeModel([[bash(f"echo {n} >> log.txt")] if n % 2 else [text(f"step {n}")]
                    for n in range(1, 9)]) as model:
        first = run_claude('/ralph-loop "Append steps" --max-iterations 2', cwd=project,
                           model=model)
        assert model.call_count == 4, first.describe()
        ended = _one_ended(project, first)
        assert (ended["outcome"], ended["iteration"]) == ("limit", 2)
        resumed = run_claude("/ralph-resume --max-iterations 3", cwd=project, model=model,
                             resume=first.session_id)
    _ok(resumed)
    assert model.call_count == 6, resumed.describe()
    assert "Ralph iteration 3/3" in model.all_text(4)
    loop = _one_ended(project, resumed)
    assert (loop["outcome"], loop["iteration"], loop["max_iterations"]) == ("limit", 3, 3)
    assert [record["number"] for record in loop["iterations"]] == [1, 2, 3]
    assert [resume["after"] for resume in loop["resumes"]] == ["limit"]
    assert (project / "log.txt").read_text().split() == ["1", "3", "5"]


def test_plan_without_verification_commands_is_refused_without_a_model_call(
    run_claude: ClaudeRunner, project: Path
) -> None:
    (project / "tasks").mkdir()
    (project / "tasks" / "todo.md").write_text(PLAN.split("## Verification Commands")[0])
    with FakeModel([[text("should not be asked")]]) as model:
        run = run_claude('/ralph-loop --plan tasks/todo.md "Go"', cwd=project, model=model)
    assert model.call_count == 0, run.describe()
    assert run.text == (
        "UserPromptSubmit operation blocked by hook:\nfinesse: tasks/todo.md has no "
        '"## Verification Commands" section: add one listing each command in backticks\n\n'
        'Original prompt: /ralph-loop --plan tasks/todo.md "Go"'
    )
    assert not (project / ".claude" / "ralph" / "loops").exists()


# --- issue 9 in the real CLI ------------------------------------------------------------------

BLOCKED_REPLY = ("I cannot go on.\nRESULT: BLOCKED\nNeed a database password nobody gave me.\n"
                 "<promise>RALPH_LOOP_STOP</promise>")


@pytest.mark.parametrize("verify", ["", " --verify 'python3 -c \"raise SystemExit(1)\"'"])
def test_blocked_with_the_promise_ends_blocked(run_claude: ClaudeRunner, project: Path,
                                               verify: str) -> None:
    with FakeModel([[text(BLOCKED_REPLY)], [text("should not be asked")]]) as model:
        run = run_claude(f'/ralph-loop "Migrate the DB" --max-iterations 6{verify}',
                         cwd=project, model=model)
    _ok(run)
    assert model.call_count == 1, run.describe()
    [loop] = _ended(project)
    assert (loop["outcome"], loop["blocker"]) == (
        "blocked", "Need a database password nobody gave me.")
    assert loop["last_verification"] == []  # a blocked reply claims nothing: nothing ran
    report = Path(loop["report_path"]).read_text()
    assert "Need a database password nobody gave me." in report
    assert "BLOCKED" in report


def test_the_loop_done_file_with_a_red_verification_does_not_succeed(
        run_claude: ClaudeRunner, project: Path) -> None:
    # The loop-done channel is named in gate mode's prompt; the hook honours it in any loop,
    # and a loop with verification commands checks it like any other claim.
    done = "$(ls .claude/ralph/loops | head -1 | cut -d. -f1)"
    script = [
        [bash(f"echo done > .ralph-loop-done-{done}")],
        [text("I marked it done.")],
        [bash(f"touch ok && echo done > .ralph-loop-done-{done}")],
        [text("Now it is really done.")],
    ]
    with FakeModel(script) as model:
        run = run_claude('/ralph-loop "Make ok exist" --max-iterations 4 --verify "test -f ok"',
                         cwd=project, model=model)
    _ok(run)
    assert model.call_count == 4, run.describe()
    [loop] = _ended(project)
    assert [entry["result"] for entry in loop["iterations"]] == ["rejected", "success"]
    assert (loop["outcome"], loop["verified"]) == ("success", True)
    assert "Your completion claim was rejected: the verification failed." in \
        model.last_user_text(2)
    assert not list(project.glob(".ralph-loop-done-*"))


def test_an_unverified_success_is_reported_as_such(run_claude: ClaudeRunner,
                                                   project: Path) -> None:
    with FakeModel([[text("All done.\n<promise>RALPH_LOOP_STOP</promise>")]]) as model:
        run = run_claude('/ralph-loop "Tidy the README" --max-iterations 3', cwd=project,
                         model=model)
    _ok(run)
    [loop] = _ended(project)
    assert (loop["outcome"], loop["verified"]) == ("success", False)
    assert loop["end_message"].endswith(
        "(unverified: no verification command, so it rests on the agent's word).")
    report = Path(loop["report_path"]).read_text()
    assert "unverified" in report.lower()


def test_the_second_prompt_carries_the_first_iterations_learning(
        run_claude: ClaudeRunner, project: Path) -> None:
    script = [
        [text("Approach: read the parser\nLearning: the lexer drops tabs\nNext: fix the lexer")],
        [text("<promise>RALPH_LOOP_STOP</promise>")],
    ]
    with FakeModel(script) as model:
        run = run_claude('/ralph-loop "Fix the parser" --max-iterations 3 --quiesce-after 3',
                         cwd=project, model=model)
    _ok(run)
    second = model.last_user_text(1)
    assert "Previous learnings" in second and "the lexer drops tabs" in second
    [loop] = _ended(project)
    assert loop["learnings"] == ["the lexer drops tabs"]


def test_ralph_abort_ends_the_loop_for_good(run_claude: ClaudeRunner, project: Path) -> None:
    with FakeModel([[text("one")], [text("two")], [text("unused")]]) as model:
        first = run_claude('/ralph-loop "Keep going" --max-iterations 9 --quiesce-after 5',
                           cwd=project, model=model,
                           env={"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "1"})
        assert first.returncode == 0, first.describe()
        calls = model.call_count
        aborted = run_claude("/ralph-abort", cwd=project, model=model, resume=first.session_id)
        resumed = run_claude("/ralph-resume", cwd=project, model=model,
                             resume=first.session_id)
    assert model.call_count == calls, aborted.describe()
    [loop] = _ended(project)
    assert (loop["outcome"], loop["ended_by"]) == ("aborted", "/ralph-abort")
    assert "cannot be resumed" in resumed.stdout


TODO_WITH_HEADINGS = "# Tasks\n\n## Plan\n- [ ] fix it\n\n## Attempts\n\n## Review\n"


@pytest.mark.parametrize("shaped", [True, False])
def test_tasks_todo_is_the_notebook_only_when_it_has_the_seeds_headings(
        run_claude: ClaudeRunner, project: Path, shaped: bool) -> None:
    todo = project / "tasks" / "todo.md"
    todo.parent.mkdir()
    original = TODO_WITH_HEADINGS if shaped else "# My own list\n\n- buy milk\n- call Sam\n"
    todo.write_text(original)
    script = [[bash("echo fixed > fix.txt")],
              [text("Approach: wrote the fix\nLearning: small steps\n"
                    "<promise>RALPH_LOOP_STOP</promise>")]]
    with FakeModel(script) as model:
        run = run_claude('/ralph-loop "Fix it" --max-iterations 3', cwd=project, model=model)
    _ok(run)
    after = todo.read_text()
    [loop] = _ended(project)
    if not shaped:
        assert todo.read_bytes() == original.encode()
        assert loop["notebook"] is None
        return
    assert loop["notebook"] == "tasks/todo.md"
    attempts = after.split("## Attempts")[1].split("## Review")[0]
    assert "### Iteration 1" in attempts and "wrote the fix" in attempts
    review = after.split("## Review")[1]
    assert "fix.txt" in review and "todo.md" not in review.split("Changes made")[-1][:200]
