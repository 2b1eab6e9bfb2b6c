"""What the user sees when the plugin answers a command itself (no model call), in the real
interactive CLI: Claude Code 2.1.328 shows a UserPromptSubmit block under its own label, and
offers no output that shows the answer without a label and without calling the model
(docs/claude-code-facts.md). An answer leaves out the "Original prompt: ..." echo; an error
keeps it, so the typed command can be fixed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.fakeapi import FakeModel, text
from tests.e2e.interactive import GATEWAY_TOKEN, Interactive

pytestmark = pytest.mark.e2e

LABEL = "UserPromptSubmit operation blocked by hook:"


def _main_calls(model: FakeModel) -> int:
    return sum(1 for request in model.requests if request.kind == "main")


def test_status_and_cancel_are_answered_on_screen_without_the_prompt_echo_or_a_model_call(
        claude_bin: Path, claude_home: Path, project: Path) -> None:
    with FakeModel([[text("unused")]]) as model, Interactive(
            claude_bin, claude_home, project, model.base_url,
            env={"ANTHROPIC_AUTH_TOKEN": GATEWAY_TOKEN}, api_key=False) as session:
        session.wait_for("? for shortcuts", 60)
        session.type("/ralph-status")
        screen = session.wait_for("finesse: no Ralph loop is running in this session.", 60)
        session.type("/cancel-ralph")
        screen = session.wait_for("nothing to cancel.", 60)
        session.type('/ralph-loop "Go" --max-iterations 0')
        screen = session.wait_for("a loop always has a cap", 60)
        calls = _main_calls(model)
    lines = [line.strip() for line in screen.splitlines() if line.strip()]
    status_at = lines.index("finesse: no Ralph loop is running in this session.")
    cancel_at = lines.index("finesse: no Ralph loop is running in this session; nothing to "
                            "cancel.")
    # Each answer sits under Claude Code's label, alone: no echo of the typed command.
    assert lines[status_at - 1].endswith(LABEL), screen
    assert lines[cancel_at - 1].endswith(LABEL), screen
    assert lines[status_at + 1].endswith(LABEL), screen
    assert not any(line.startswith("Original prompt: /ralph-status") for line in lines), screen
    assert not any(line.startswith("Original prompt: /cancel-ralph") for line in lines), screen
    # An error keeps the echo, to be edited and typed again.
    assert 'Original prompt: /ralph-loop "Go" --max-iterations 0' in lines, screen
    assert calls == 0
