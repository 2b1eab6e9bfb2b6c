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


def _plugin_with_a_stop_hook(root: Path, command: str, *args: str) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(
        {"name": "probe", "version": "0.0.1", "description": "one exec-form Stop hook"}))
    (root / "hooks").mkdir()
    (root / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": command, "args": list(args)}]}]}}))
    return root


def _notices(stdout: str, key: str) -> list[str]:
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [event["text"] for event in events
            if event.get("type") == "system" and event.get("subtype") == "notification"
            and event.get("key") == key]


def test_an_exec_form_hook_whose_program_is_missing_shows_a_problem_at_every_stop(
        run_claude: ClaudeRunner, project: Path, tmp_path: Path) -> None:
    # Why hooks.json has one `python3` entry and no second one for Windows' `py -3`: on macOS
    # and Linux, where there is no `py`, that entry would fail like this at every event.
    missing = _plugin_with_a_stop_hook(tmp_path / "missing", "finesse-no-such-py", "-3", "-c",
                                       "pass")
    there = _plugin_with_a_stop_hook(tmp_path / "there", "python3", "-c", "pass")
    stream = ["--verbose", "--output-format", "stream-json"]
    runs = {}
    for name, plugin in (("missing", missing), ("there", there)):
        with FakeModel([[text("done")]]) as model:
            runs[name] = run_claude("hello", cwd=project, model=model, plugin_dir=plugin,
                                    extra_args=stream)
        assert runs[name].returncode == 0 and runs[name].text == "done", runs[name].describe()
    assert _notices(runs["missing"].stdout, "stop-hook-error") == [
        "stop hook reported a problem \u00b7 ctrl+o to see"]
    assert _notices(runs["there"].stdout, "stop-hook-error") == []


def test_a_stop_hook_whose_interpreter_exits_2_blocks_the_turn_until_claude_code_overrides(
        run_claude: ClaudeRunner, project: Path, tmp_path: Path) -> None:
    # Python exits 2 on an option it does not know: a hand-over must only ever start a
    # launcher an interpreter can run (finesse.hooks.relaunch), whose own exit is always 0.
    plugin = _plugin_with_a_stop_hook(tmp_path / "usage-error", "python3", "-3", "-c", "pass")
    with FakeModel([[text("done")]]) as model:
        run = run_claude("hello", cwd=project, model=model, plugin_dir=plugin,
                         extra_args=["--verbose", "--output-format", "stream-json"])
    assert run.returncode == 0, run.describe()
    assert model.call_count == 9, run.describe()  # a reply after each of 8 blocks; the 9th wins
    assert _notices(run.stdout, "stop-hook-block-cap") == [
        "A hook blocked the turn from ending 9 consecutive times\u2014overriding and ending "
        "turn. For Stop/SubagentStop hooks, check stop_hook_active in the input and return "
        "success while it's true. Set CLAUDE_CODE_STOP_HOOK_BLOCK_CAP to raise this limit."]
