"""The real Claude Code CLI running the plugin's hooks as hooks.json has it (`python3 -S
hooks/launch.py EVENT`) on a PATH like a stock macOS's (issue 24): `python3` is the machine's
real Python 3.9, Homebrew's `python3.12` (the machine's real 3.12) is beside it, and nothing
else on PATH is a Python. A loop starts and goes on to its promise through the hand-over;
with no newer Python the command is refused in one line, without a model call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finesse.support import interpreters
from tests.e2e.fakeapi import FakeModel, text
from tests.e2e.harness import ClaudeRunner
from tests.helpers.interpreters import programs, python, tools_path, version_info

pytestmark = pytest.mark.e2e

PROMPT = '/ralph-loop "Make the failing test pass" --max-iterations 8 --completion-promise DONE'


def stock_macos_path(tmp_path: Path, *, beside: bool) -> dict[str, str]:
    """The environment's PATH: python3 (3.9) with or without python3.12 beside it, then a
    folder with git alone (the hooks run it) and the shell Claude Code's tools start."""
    names = {"python3": python("3.9")}
    if beside:
        names["python3_12"] = python("3.12")
    bin_dir = programs(tmp_path / "bin", **names)
    tools = Path(tools_path(tmp_path / "tools"))
    for shell in ("sh", "bash"):
        (tools / shell).symlink_to(f"/bin/{shell}")
    # FINESSE_RUNTIME=inherit stays (harness.claude_env): a plain loop needs no dependency,
    # and nothing may be downloaded in a test.
    return {"PATH": f"{bin_dir}:{tools}"}


def test_a_loop_runs_with_python3_3_9_and_python3_12_beside_it(
        run_claude: ClaudeRunner, project: Path, tmp_path: Path) -> None:
    script = [[text("Started; the test still fails.")], [text("Closer. One case left.")],
              [text("All green now.\n<promise>DONE</promise>")]]
    with FakeModel(script) as model:
        run = run_claude(f"{PROMPT} --quiesce-after 5", cwd=project, model=model,
                         env=stock_macos_path(tmp_path, beside=True))
    assert run.returncode == 0, run.describe()
    assert model.call_count == 3, run.describe()
    header = "Ralph iteration {}/8: output <promise>DONE</promise> only when it is completely true"
    assert header.format(1) in model.all_text(0)
    assert header.format(2) + "\n\nMake the failing test pass" in model.last_user_text(1)
    assert header.format(3) + "\n\nMake the failing test pass" in model.last_user_text(2)
    [ended] = [json.loads(path.read_text())
               for path in (project / ".claude" / "ralph" / "history").glob("*.json")]
    assert (ended["outcome"], ended["session_id"], [r["result"] for r in ended["iterations"]]) == (
        "success", run.session_id, ["continue", "continue", "success"])


def test_with_no_newer_python_the_command_is_refused_in_one_line(
        run_claude: ClaudeRunner, project: Path, tmp_path: Path) -> None:
    with FakeModel([[text("should never be asked")]]) as model:
        run = run_claude(PROMPT, cwd=project, model=model,
                         env=stock_macos_path(tmp_path, beside=False))
    assert model.call_count == 0, run.describe()
    assert run.text == (
        "UserPromptSubmit operation blocked by hook:\n"
        + interpreters.refusal(version_info(python("3.9")), windows=False)
        + f"\n\nOriginal prompt: {PROMPT}")
    assert not (project / ".claude").exists()
