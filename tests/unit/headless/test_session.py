"""How each iteration's `claude -p` is started: its arguments and its environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from finesse.errors import UsageError
from finesse.headless.session import child_argv, child_env, parse_claude_args
from finesse.models import HeadlessRun
from tests.helpers.states import make_state


def test_every_iteration_is_a_fresh_streamed_session(tmp_path: Path) -> None:
    state = make_state(tmp_path, effort="high", headless=HeadlessRun(
        claude="/opt/claude", model="claude-opus-4-6",
        claude_args=["--permission-mode", "acceptEdits"]))
    assert child_argv(state, "1234") == [
        "/opt/claude", "-p", "--output-format", "stream-json", "--verbose", "--session-id",
        "1234", "--model", "claude-opus-4-6", "--effort", "high", "--permission-mode",
        "acceptEdits"]
    bare = make_state(tmp_path, headless=HeadlessRun())
    assert child_argv(bare, "9") == ["claude", "-p", "--output-format", "stream-json",
                                     "--verbose", "--session-id", "9"]


def test_the_child_is_marked_and_an_effort_in_the_environment_cannot_beat_the_loops(
    tmp_path: Path
) -> None:
    env = {"PATH": "/bin", "CLAUDE_CODE_EFFORT_LEVEL": "max"}
    with_effort = make_state(tmp_path, effort="low", headless=HeadlessRun())
    assert child_env(env, with_effort) == {"PATH": "/bin",
                                           "FINESSE_HEADLESS_CHILD": with_effort.session_id}
    without = make_state(tmp_path, headless=HeadlessRun())
    assert child_env(env, without) == {**env, "FINESSE_HEADLESS_CHILD": without.session_id}


def test_claude_args_are_split_like_a_shells_words() -> None:
    assert parse_claude_args("--allowedTools 'Bash(npm test:*)' Read --max-turns=30") == [
        "--allowedTools", "Bash(npm test:*)", "Read", "--max-turns=30"]
    assert parse_claude_args(None) == parse_claude_args("") == []


@pytest.mark.parametrize(("text", "message"), [
    ("--resume abc", "--claude-args may not hold --resume: ralph run sets it for every "
                     "iteration"),
    ("--output-format=json", "--claude-args may not hold --output-format: ralph run sets it"),
    ("-p", "--claude-args may not hold -p"),
    ("--model x", "--claude-args may not hold --model: use ralph run --model"),
    ("--effort max", "--claude-args may not hold --effort: use --effort"),
    ("'unclosed", "--claude-args: No closing quotation: quote it like a shell command line"),
])
def test_flags_ralph_run_sets_itself_are_refused(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_claude_args(text)
    assert str(caught.value).startswith(message)
