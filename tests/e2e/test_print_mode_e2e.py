"""What `ralph run` rests on in Claude Code's print mode (2.1.328), kept true by running the
real binary against the scripted model (docs/claude-code-facts.md, "Print mode")."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from tests.e2e.fakeapi import FakeModel, bash, text
from tests.e2e.harness import MODEL_NAME, claude_env
from tests.helpers.repo import git

pytestmark = pytest.mark.e2e


def print_mode(claude_bin: Path, home: Path, model: FakeModel, cwd: Path, *flags: str,
               prompt: str = "go") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(claude_bin), "-p", "--model", MODEL_NAME, "--allowedTools", "Bash", *flags],
        cwd=cwd, env=claude_env(home=home, base_url=model.base_url), input=prompt,
        capture_output=True, text=True, timeout=120, check=False)


def test_stream_json_in_print_mode_needs_verbose_and_takes_the_prompt_on_stdin(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    with FakeModel([[text("hi")]]) as model:
        refused = print_mode(claude_bin, claude_home, model, project,
                             "--output-format", "stream-json")
        session = str(uuid.uuid4())
        done = print_mode(claude_bin, claude_home, model, project, "--output-format",
                          "stream-json", "--verbose", "--session-id", session,
                          prompt="the prompt from stdin")
    assert (refused.returncode, refused.stderr.strip()) == (
        1, "Error: When using --print, --output-format=stream-json requires --verbose")
    assert done.returncode == 0, done.stderr
    assert model.call_count == 1 and "the prompt from stdin" in model.last_user_text(0)
    assert model.requests[-1].headers["x-claude-code-session-id"] == session
    assert f'"session_id":"{session}"' in done.stdout.replace(" ", "")


def test_an_agent_cannot_write_under_a_claude_folder_even_with_bash_allowed(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    # Why `ralph run --graph` keeps its worktrees in .ralph-worktrees/, not .claude/.
    inside = project / ".claude" / "wt"
    git(project, "worktree", "add", "-q", "-b", "inside", str(inside))
    outside = project / ".ralph-worktrees" / "wt"
    git(project, "worktree", "add", "-q", "-b", "outside", str(outside))
    for where, expected in ((inside, False), (outside, True)):
        with FakeModel([[bash("echo a > f.txt")], [text("done")]]) as model:
            print_mode(claude_bin, claude_home, model, where, "--output-format", "json")
        assert (where / "f.txt").exists() is expected, model.last_user_text(1)
        if not expected:
            assert "which is a sensitive file" in model.last_user_text(1)


def test_the_effort_variable_beats_the_effort_flag(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    with FakeModel([[text("one")], [text("two")]]) as model:
        for extra in ({}, {"CLAUDE_CODE_EFFORT_LEVEL": "max"}):
            subprocess.run(
                [str(claude_bin), "-p", "--model", "claude-opus-4-6", "--effort", "low"],
                cwd=project, input="go", capture_output=True, text=True, timeout=120,
                env=claude_env(home=claude_home, base_url=model.base_url, extra=extra),
                check=True)
    assert [body["output_config"] for body in model.calls] == [{"effort": "low"},
                                                               {"effort": "max"}]
