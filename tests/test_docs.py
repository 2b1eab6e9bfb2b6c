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


def test_the_spend_sample_is_what_a_report_renders() -> None:
    from finesse.hooks.statusline import describe
    from finesse.loop.final_report import spend_section
    from finesse.models import IterationRecord
    from finesse.record import replace as changed
    from finesse.results import ModelUsage
    from tests.helpers.states import T0, command_result, make_state

    def made(number: int, result: str, tokens: int, reads: int, cost: float) -> IterationRecord:
        return IterationRecord(number=number, started_at=T0, ended_at=T0, result=result,
                               usage=[ModelUsage("claude-sonnet-4-5", tokens, 0, 0, reads)],
                               cost=cost)

    state = make_state(ROOT, outcome="success", verified=True, iteration=3, iterations=[
        made(1, "rejected", 18_400, 52_000, 0.13), made(2, "continue", 9_100, 70_000, 0.08),
        made(3, "success", 7_300, 79_000, 0.07)])
    rendered = "\n".join(spend_section(state)[3:-1])
    assert rendered in README
    red = [command_result("pytest -q", 1)]
    line = describe(changed(state, iteration=3, outcome=None, last_verification=red), None)
    assert line.startswith("ralph 3/8 · verify red · ")
    assert re.search(r"`ralph \d+/\d+ · verify red · [\d.]+k tok ~\$[\d.]+ est · 5h \d+% · "
                     r"7d \d+%`", README)

# How arguments are split, as /ralph-help and the README say it: each example the text gives,
# as typed (the text must hold it), and the words it must split into.
SPLIT_EXAMPLES = {
    "\\d+": ["\\d+"],
    "C:\\Users\\me": ["C:\\Users\\me"],
    "don't": ["don't"],
    "O'Brien's": ["O'Brien's"],
    "the users'": ["the", "users'"],
    '\\"': ['"'],
    "\\'": ["'"],
    "\"it's\"": ["it's"],
    "'\"hi\"'": ['"hi"'],
}
README_SPLIT = ("\\d+", "C:\\Users\\me", "don't", "O'Brien's", '\\"', "\\'", "\"it's\"",
                "'\"hi\"'")


def test_the_splitting_rules_in_the_help_and_readme_hold() -> None:
    from finesse.hooks.prompt_submit import HELP
    from finesse.loop.words import split_words

    for typed, words in SPLIT_EXAMPLES.items():
        assert typed in HELP, typed
        assert split_words(typed) == words, typed
    for typed in README_SPLIT:
        assert f"`{typed}`" in README, typed
    # What the help states in words: quoted and escaped, inside double quotes, inside single.
    assert split_words('"a \\" b" "C:\\\\x \\d" \'a\\\' \'x y\'') == [
        'a " b', "C:\\x \\d", "a\\", "x y"]
    # "An apostrophe between letters" is kept even with a quote later in the line.
    assert split_words("don't 'x y'") == ["don't", "x y"]


def test_the_prompt_limit_in_the_help_and_readme_is_the_code_s(tmp_path: Path) -> None:
    from finesse.errors import UsageError
    from finesse.hooks.prompt_submit import HELP
    from finesse.loop.request import start_request
    from finesse.support.files import MAX_TEXT_BYTES

    assert MAX_TEXT_BYTES == 1024 * 1024
    said = " ".join(HELP.split())
    assert "A prompt holds at most 1 MiB, typed or read with --prompt-file PATH" in said
    assert "A prompt holds at most 1 MiB, typed or read with `--prompt-file`" in " ".join(
        README.split())
    (tmp_path / "exact.md").write_text("x" * MAX_TEXT_BYTES)
    assert len(start_request("--prompt-file exact.md", tmp_path).prompt) == MAX_TEXT_BYTES
    (tmp_path / "over.md").write_text("x" * (MAX_TEXT_BYTES + 1))
    for args in ("--prompt-file over.md", "x" * (MAX_TEXT_BYTES + 1)):
        try:
            start_request(args, tmp_path)
        except UsageError as err:
            assert "1 MiB" in str(err) and "\n" not in str(err)
        else:
            raise AssertionError(f"{args[:20]}: over 1 MiB, and not refused")
