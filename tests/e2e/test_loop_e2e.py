"""The core Ralph loop in the real Claude Code CLI, against the scripted fake model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fakeapi import FakeModel, bash, text
from tests.e2e.harness import ClaudeRun, ClaudeRunner

pytestmark = pytest.mark.e2e


def _ended_loops(project: Path) -> list[dict[str, Any]]:
    history = project / ".claude" / "ralph" / "history"
    return [json.loads(path.read_text()) for path in sorted(history.glob("*.json"))]


def _active_loops(project: Path) -> list[dict[str, Any]]:
    loops = project / ".claude" / "ralph" / "loops"
    return [json.loads(path.read_text()) for path in sorted(loops.glob("*.json"))]


def _only_ended_loop(project: Path) -> dict[str, Any]:
    ended = _ended_loops(project)
    assert len(ended) == 1, ended
    assert _active_loops(project) == []
    return ended[0]


def _ok(run: ClaudeRun) -> None:
    assert run.returncode == 0, run.describe()
    assert run.result is not None and run.result.get("is_error") is False, run.describe()


def test_promise_on_third_reply_ends_after_exactly_three_calls(
    run_claude: ClaudeRunner, project: Path
) -> None:
    script = [
        [text("Started; the tests still fail.")],
        [text("Closer. One case left.")],
        [text("All green now.\n<promise>DONE</promise>")],
    ]
    with FakeModel(script) as model:
        run = run_claude(
            '/ralph-loop "Make the failing test pass" --max-iterations 8 '
            "--completion-promise DONE --quiesce-after 5",
            cwd=project, model=model,
        )
    _ok(run)
    assert model.call_count == 3, run.describe()
    assert "Make the failing test pass" in model.all_text(0)
    header = "Ralph iteration {}/8: output <promise>DONE</promise> only when it is completely true"
    assert header.format(1) in model.all_text(0)
    # Talk-only replies would quiesce after 2 iterations by default; --quiesce-after 5 keeps
    # this test about the promise.
    assert header.format(2) + "\n\nMake the failing test pass" in model.last_user_text(1)
    assert header.format(3) + "\n\nMake the failing test pass" in model.last_user_text(2)
    loop = _only_ended_loop(project)
    assert loop["outcome"] == "success"
    assert loop["session_id"] == run.session_id
    assert [record["result"] for record in loop["iterations"]] == [
        "continue", "continue", "success"
    ]


def test_cap_of_two_ends_after_exactly_two_calls(run_claude: ClaudeRunner, project: Path) -> None:
    with FakeModel([[text("one")], [text("two")], [text("three")]]) as model:
        run = run_claude('/ralph-loop "Keep going" --max-iterations=2 --quiesce-after 5',
                         cwd=project, model=model)
    _ok(run)
    assert model.call_count == 2, run.describe()
    loop = _only_ended_loop(project)
    assert (loop["outcome"], loop["iteration"], loop["promise"]) == ("limit", 2, "RALPH_LOOP_STOP")


def test_bare_word_and_promise_in_code_do_not_end_the_loop(
    run_claude: ClaudeRunner, project: Path
) -> None:
    script = [
        [text("DONE")],
        [text("When finished I will write:\n```\n<promise>DONE</promise>\n```")],
        [text("The tag is `<promise>DONE</promise>`, not yet.")],
        [text("<promise>DONE</promise>")],
    ]
    with FakeModel(script) as model:
        run = run_claude(
            '/ralph-loop "Work" --max-iterations 3 --completion-promise DONE --quiesce-after 5',
            cwd=project, model=model,
        )
    _ok(run)
    assert model.call_count == 3, run.describe()
    assert _only_ended_loop(project)["outcome"] == "limit"


HOSTILE_PROMPT = (
    "it's \"quoted\"; $(touch pwned_dollar) `touch pwned_tick`; touch pwned_semi\n"
    "second line & | > pwned_redirect"
)


@pytest.mark.parametrize("mode", [None, "acceptEdits", "bypassPermissions"])
def test_hostile_prompt_reaches_model_verbatim_and_runs_nothing(
    run_claude: ClaudeRunner, project: Path, mode: str | None
) -> None:
    # Double-quoted for the command grammar: inner quotes escaped, the rest literal.
    typed = HOSTILE_PROMPT.replace("\\", "\\\\").replace('"', '\\"')
    with FakeModel([[text("<promise>OK</promise>")]]) as model:
        run = run_claude(
            f'/ralph-loop "{typed}" --completion-promise OK --max-iterations 2',
            cwd=project, model=model, permission_mode=mode,
        )
    _ok(run)
    assert model.call_count == 1, run.describe()
    assert f"<ralph-task>\n{HOSTILE_PROMPT}\n</ralph-task>" in model.all_text(0)
    assert sorted(path.name for path in project.iterdir() if path.name.startswith("pwned")) == []
    loop = _only_ended_loop(project)
    assert (loop["prompt"], loop["outcome"]) == (HOSTILE_PROMPT, "success")


def test_zero_iterations_is_refused_without_a_model_call(
    run_claude: ClaudeRunner, project: Path
) -> None:
    with FakeModel([[text("should never be asked")]]) as model:
        run = run_claude('/ralph-loop "Work" --max-iterations 0', cwd=project, model=model)
    assert model.call_count == 0, run.describe()
    assert run.text == (
        "UserPromptSubmit operation blocked by hook:\nfinesse: --max-iterations must be from 1 "
        "to 1000, not 0: a loop always has a cap; for example --max-iterations 8\n\n"
        'Original prompt: /ralph-loop "Work" --max-iterations 0'
    )
    assert not (project / ".claude" / "ralph" / "loops").exists() or _active_loops(project) == []


def test_second_session_in_the_same_project_is_not_blocked(
    run_claude: ClaudeRunner, project: Path
) -> None:
    # Session A: a loop left active (the run is cut by --max-turns after one reply).
    with FakeModel([[text("A: working")]]) as model_a:
        run_a = run_claude(
            '/ralph-loop "Loop A" --max-iterations 5', cwd=project, model=model_a,
            extra_args=["--max-turns", "1"],
        )
    assert model_a.call_count == 1, run_a.describe()
    [loop_a] = _active_loops(project)
    assert loop_a["session_id"] == run_a.session_id
    # Session B in the same project: an ordinary prompt, one reply, no loop.
    with FakeModel([[text("B: hello")], [text("B: should not be asked")]]) as model_b:
        run_b = run_claude("Say hello", cwd=project, model=model_b)
    _ok(run_b)
    assert run_b.session_id != run_a.session_id
    assert model_b.call_count == 1, run_b.describe()
    assert run_b.text == "B: hello"
    assert "Loop A" not in model_b.all_text(0)
    assert _active_loops(project) == [loop_a]


def test_model_changing_directory_does_not_break_the_loop(
    run_claude: ClaudeRunner, project: Path
) -> None:
    script = [
        [bash("mkdir -p sub && cd sub && pwd")],
        [text("Now working inside sub.")],
        [bash("pwd > where.txt")],
        [text("<promise>DONE</promise>")],
    ]
    with FakeModel(script) as model:
        run = run_claude(
            '/ralph-loop "Work in sub" --completion-promise DONE', cwd=project, model=model
        )
    _ok(run)
    assert model.call_count == 4, run.describe()
    assert (project / "sub" / "where.txt").read_text().strip() == str(project / "sub")
    assert not (project / "sub" / ".claude").exists()
    loop = _only_ended_loop(project)
    assert (loop["outcome"], loop["iteration"]) == ("success", 2)


def test_cancel_mid_loop_ends_it_without_a_model_call(
    run_claude: ClaudeRunner, project: Path
) -> None:
    with FakeModel([[text("working")], [text("still working")]]) as model:
        first = run_claude(
            '/ralph-loop "Long task" --max-iterations 6 --quiesce-after 5', cwd=project,
            model=model,
            extra_args=["--max-turns", "2"],
        )
        assert model.call_count == 2, first.describe()
        [active] = _active_loops(project)
        assert active["iteration"] == 3  # two replies made, the third one pending
        status = run_claude("/ralph-status", cwd=project, model=model, resume=first.session_id)
        cancel = run_claude("/cancel-ralph", cwd=project, model=model, resume=first.session_id)
        assert model.call_count == 2, cancel.describe()
    blocked = "UserPromptSubmit operation blocked by hook:\n"
    assert status.text is not None and status.text.startswith(
        f"{blocked}Ralph loop {active['loop_id']}: iteration 3/6, promise "
        "<promise>RALPH_LOOP_STOP</promise>, running 0 min"
    ), status.describe()
    assert "\ntask: Long task\n" in status.text
    loop = _only_ended_loop(project)
    assert cancel.text == (
        f"{blocked}finesse: Ralph loop cancelled by /cancel-ralph at iteration 3/6. Its record "
        f"is in {project / '.claude' / 'ralph' / 'history'}."
    ), cancel.describe()  # an answer: no "Original prompt: /cancel-ralph" echo
    assert (loop["outcome"], loop["session_id"]) == ("cancelled", first.session_id)


def test_loop_edits_files_with_tool_calls(run_claude: ClaudeRunner, project: Path) -> None:
    script = [
        [bash("echo 'def add(a, b): return a - b' > calc.py")],
        [text("Wrote calc.py; the add looks wrong.")],
        [bash("echo 'def add(a, b): return a + b' > calc.py")],
        [text("Fixed add.\n<promise>FIXED</promise>")],
    ]
    with FakeModel(script) as model:
        run = run_claude(
            '/ralph-loop "Write calc.py with a correct add" --completion-promise FIXED',
            cwd=project, model=model,
        )
    _ok(run)
    assert model.call_count == 4, run.describe()
    assert (project / "calc.py").read_text() == "def add(a, b): return a + b\n"
    assert _only_ended_loop(project)["outcome"] == "success"


def _transcript(run: ClaudeRun) -> list[dict[str, Any]]:
    path = run.transcript_path
    assert path is not None, run.describe()
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_iterations_continue_as_additional_context_not_as_errors(
    run_claude: ClaudeRunner, project: Path
) -> None:
    # Each iteration goes on through the Stop hook's additionalContext: the model gets the
    # next prompt as context, the transcript records no "Stop hook feedback" turn and no
    # blocking error, and Claude Code's cap of 8 continuations in a row does not end a loop
    # whose iterations use tools (a tool call resets it): ten iterations run.
    script = []
    for n in range(1, 11):
        script += [[bash(f"echo {n} >> steps.txt")], [text(f"Step {n} written.")]]
    with FakeModel(script) as model:
        run = run_claude('/ralph-loop "Write the steps" --max-iterations 10', cwd=project,
                         model=model)
    _ok(run)
    assert model.call_count == 20, run.describe()
    loop = _only_ended_loop(project)
    assert (loop["outcome"], loop["iteration"]) == ("limit", 10)
    assert (project / "steps.txt").read_text().split() == [str(n) for n in range(1, 11)]
    entries = _transcript(run)
    contexts = [entry["attachment"]["content"] for entry in entries
                if entry.get("type") == "attachment"
                and entry["attachment"].get("type") == "hook_additional_context"
                and entry["attachment"].get("hookEvent") == "Stop"]
    assert len(contexts) == 9
    assert [context[0].split(":")[0] for context in contexts] == [
        f"Ralph iteration {n}/10" for n in range(2, 11)]
    assert not [entry for entry in entries if entry.get("type") == "attachment"
                and entry["attachment"].get("type") == "hook_blocking_error"]
    assert not [entry for entry in entries if entry.get("type") == "user"
                and "Stop hook feedback" in json.dumps(entry.get("message"))]
    # What the model was sent for iteration 2: the prompt as additional context.
    assert ("Stop hook additional context: Ralph iteration 2/10: output "
            "<promise>RALPH_LOOP_STOP</promise> only when it is completely true"
            in model.last_user_text(2))
