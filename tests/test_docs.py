"""Docs that cannot drift: what the README names exists, and what exists is in the README."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from finesse.cli.ralph import SUBCOMMANDS as RALPH_SUBCOMMANDS
from finesse.loop.grammar import _VALUE_FLAGS, COMMANDS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _frontmatter_name(path: Path) -> str:
    found = re.search(r"^name: (\S+)$", path.read_text(), re.MULTILINE)
    assert found, f"{path} has no name: frontmatter"
    return found.group(1)


def test_every_command_file_is_documented_and_every_documented_command_exists() -> None:
    files = {_frontmatter_name(path) for path in (ROOT / "commands").glob("*.md")}
    documented = set(re.findall(
        r"(?<![\w.-])/(?:finesse:)?((?:ralph|cancel)-[a-z-]+|finesse(?:-[a-z]+)?)\b", README))
    assert documented == files
    assert set(COMMANDS) <= files  # the hook answers only commands that have a file


# Commands the model runs itself: their arguments are plain text in the prompt, which is safe
# only because no command file has a shell block.
MODEL_INVOKED = {"finesse"}


def test_command_files_are_named_after_their_frontmatter_and_no_shell_sees_arguments() -> None:
    for path in (ROOT / "commands").glob("*.md"):
        text = path.read_text()
        assert _frontmatter_name(path) == path.stem
        assert "```!" not in text and "!`" not in text, path
        if path.stem in MODEL_INVOKED:
            assert "disable-model-invocation" not in text, path
        else:
            assert "disable-model-invocation: true" in text, path
            assert "$ARGUMENTS" not in text, path


def test_ralph_subcommands_match_the_readme() -> None:
    documented = set(re.findall(r"^ralph ([a-z]+)", README, re.MULTILINE))
    assert documented == set(RALPH_SUBCOMMANDS)


def test_loop_flags_match_the_readme() -> None:
    table = README.split("Arguments of `/ralph-loop`")[1].split("\n\n")[1]
    documented = set(re.findall(r"`(--[a-z-]+)", table))
    assert documented == {*_VALUE_FLAGS, "--allow-dirty", "--no-plan", "--judge"}


def test_hooks_are_exec_form_python_launchers_that_exist() -> None:
    config = json.loads((ROOT / "hooks" / "hooks.json").read_text())
    for event, groups in config["hooks"].items():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["command"] == "python3", event
                launcher = hook["args"][1].replace("${CLAUDE_PLUGIN_ROOT}", str(ROOT))
                assert Path(launcher).is_file(), launcher
                assert hook["args"][0] == "-S", event
    assert set(config["hooks"]) == {"UserPromptSubmit", "Stop", "SessionStart", "SessionEnd",
                                    "PreToolUse", "SubagentStart", "SubagentStop"}


def test_runtime_requirements_are_the_package_dependencies() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    required = (ROOT / "scripts" / "requirements.txt").read_text().split()
    assert sorted(required) == sorted(declared)


def test_versions_agree() -> None:
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    import finesse

    assert {plugin["version"], market["plugins"][0]["version"], project["version"],
            finesse.__version__} == {"0.1.0"}
