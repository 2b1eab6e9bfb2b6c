"""The /finesse skill cannot drift from the tools: its attributes, its git-rule table, its
subagent section, its template, its example spec, and every command it names."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from finesse.authoring.prompt_check.attributes import ATTRIBUTES
from finesse.authoring.prompt_check.validate import validate_prompt
from finesse.authoring.render import git_rules, render_prompt
from finesse.authoring.spec import GitConfig, Spec
from finesse.cli.finesse import SUBCOMMANDS

ROOT = Path(__file__).resolve().parents[1]
SKILL = ROOT / "skills" / "finesse" / "SKILL.md"
COMMAND = ROOT / "commands" / "finesse.md"
TEXT = SKILL.read_text()

# What the skill may name before it lands; when one lands, remove it from here
# (test_planned_commands_have_not_landed says so).
PLANNED_SUBCOMMANDS: frozenset[str] = frozenset()
PLANNED_SLASH_COMMANDS: frozenset[str] = frozenset()

# "/name" or "/finesse:name"; not a path segment (src/app/, <id>/x) nor a closing tag.
_SLASH_COMMAND = re.compile(r"(?<![\w./:<>-])/(?:finesse:)?([a-z][a-z0-9-]*)")
# "finesse <sub>" as typed in a terminal, not "/finesse:..." nor "finesse-plans/".
_SUBCOMMAND = re.compile(r"(?<![\w/:.-])finesse ([a-z][a-z-]*)")
_FENCE = re.compile(r"^(`{3,})(\w*)\n(.*?)^\1$", re.DOTALL | re.MULTILINE)


def frontmatter(text: str) -> dict[str, Any]:
    found = re.match(r"\A---\n(.*?)\n---\n", text, re.DOTALL)
    assert found, "the file must start with a --- frontmatter block"
    data = yaml.safe_load(found.group(1))
    assert isinstance(data, dict)
    return data


def section(title: str) -> str:
    outside = _FENCE.sub(lambda m: "\0" * len(m.group(0)), TEXT)  # headings inside fences
    found = re.search(rf"^## {re.escape(title)}\n", outside, re.MULTILINE)
    assert found, title
    following = re.search(r"^## ", outside[found.end() :], re.MULTILINE)
    end = found.end() + following.start() if following else len(TEXT)
    return TEXT[found.end() : end]


def fenced(text: str, language: str) -> list[str]:
    return [body for _, lang, body in _FENCE.findall(text) if lang == language]


def code_snippets() -> list[str]:
    """Inline code spans and the lines of fenced blocks: where commands are written."""
    blocks = [line for _, _, body in _FENCE.findall(TEXT) for line in body.splitlines()]
    prose = _FENCE.sub("", TEXT)
    return re.findall(r"`([^`\n]+)`", prose) + blocks


def example_spec() -> Spec:
    [example] = fenced(section("Workflow"), "yaml")
    return Spec.model_validate(yaml.safe_load(example))


def existing_slash_commands() -> set[str]:
    return {str(frontmatter(path.read_text())["name"])
            for path in (ROOT / "commands").glob("*.md")}


def subcommand(name: str) -> click.Command:
    command = importlib.import_module(SUBCOMMANDS[name]).command
    assert isinstance(command, click.Command)
    return command


# ---- the skill and the command files ----------------------------------------------------


def test_skill_frontmatter_names_it_and_says_when_to_use_it() -> None:
    data = frontmatter(TEXT)
    assert data["name"] == "finesse" == SKILL.parent.name
    description = data["description"]
    assert isinstance(description, str)
    for when in ("Ralph prompt", "/finesse", "finesse new", "validate"):
        assert when in description


def test_the_command_runs_the_skill_on_the_arguments_and_is_model_invocable() -> None:
    text = COMMAND.read_text()
    data = frontmatter(text)
    assert data == {
        "name": "finesse",
        "description": data["description"],
        "argument-hint": "TASK DESCRIPTION",
    }
    assert isinstance(data["description"], str) and "Ralph prompt" in data["description"]
    body = text.split("---\n", 2)[2]
    assert "$ARGUMENTS" in body and "`finesse` skill" in body
    # $ARGUMENTS is pasted as plain text: safe only while no shell block runs it.
    assert "```!" not in text and "!`" not in text


# ---- the rules the skill states ---------------------------------------------------------


def test_the_ten_attributes_are_listed_in_order_with_the_checker_keys() -> None:
    listed = re.findall(r"^(\d+)\. \*\*[^*]+\*\* \(`([a-z-]+)`\)", section(
        "The ten mandatory attributes"), re.MULTILINE)
    assert [(int(number), key) for number, key in listed] == [
        (attribute.id, attribute.key) for attribute in ATTRIBUTES]


def git_table() -> dict[str, list[str]]:
    rows = re.findall(r"^\| ([a-z-]+: [a-z-]+) \| (.+) \|$", section("The git-rule table"),
                      re.MULTILINE)
    return {answer: re.findall(r"`([^`]+)`", rules) for answer, rules in rows}


def test_the_git_rule_table_has_a_row_for_every_answer() -> None:
    assert list(git_table()) == [
        "checkpointing: no", "granularity: per-phase", "granularity: per-change",
        "granularity: custom", "push: yes", "push: no",
    ]


@pytest.mark.parametrize("config", [
    GitConfig(checkpointing=False),
    *(GitConfig(checkpointing=True, granularity=granularity, push=push)
      for granularity in ("per-phase", "per-change") for push in (True, False)),
    *(GitConfig(checkpointing=True, granularity="custom", custom="the custom rule", push=push)
      for push in (True, False)),
], ids=lambda config: "-".join(str(v) for v in config.model_dump().values()))
def test_the_git_rule_table_is_what_the_renderer_writes(config: GitConfig) -> None:
    table = git_table()
    if not config.checkpointing:
        expected = table["checkpointing: no"]
    else:
        expected = [*table[f"granularity: {config.granularity}"],
                    *table[f"push: {'yes' if config.push else 'no'}"]]
    expected = [rule.replace("<the custom rule>", "the custom rule") for rule in expected]
    assert git_rules(config) == expected


def test_the_subagent_section_is_the_rendered_one_word_for_word() -> None:
    spec = example_spec()
    assert spec.subagents
    rendered = render_prompt(spec).split("\n\n## Requirements")[0].split("\n\n", 1)[1]
    [shown] = fenced(section("Subagent instructions"), "markdown")
    assert shown == rendered + "\n"
    assert "at most 2 subagents at the same time" in shown
    for heuristic in ("Independent subtasks", "Parallel verification", "Exploration benefit"):
        assert f"**{heuristic}**" in section("Subagent instructions")


# ---- the template and the example spec --------------------------------------------------


def template() -> str:
    [shown] = fenced(section("The prompt template"), "markdown")
    return shown


def test_the_template_itself_passes_the_checker() -> None:
    report = validate_prompt(template())
    assert [r.key for r in report.attributes if not r.passed] == []


def test_the_template_has_the_rendered_shape_and_its_fixed_lines() -> None:
    spec = example_spec().model_copy(update={"promise": "TASK_COMPLETE"})
    prompt = render_prompt(spec)
    headings = re.findall(r"^#+ .*$", prompt, re.MULTILINE)
    shown = re.findall(r"^#+ .*$", template(), re.MULTILINE)
    named = [re.sub(r"^(### Phase \d+): .*", r"\1: <phase name>", h) for h in headings]
    assert shown == named
    assert template().startswith("You are iterating on <project name>, a <task type> task: ")
    placeholder = re.compile(r"<(?!/?promise>)[^>]+>")
    fixed = [line for line in template().splitlines() if line and not placeholder.search(line)]
    assert [line for line in fixed if line not in prompt.splitlines()] == []


def test_the_example_spec_renders_a_prompt_that_passes() -> None:
    spec = example_spec()
    report = validate_prompt(render_prompt(spec), promise=spec.promise)
    assert [r.key for r in report.attributes if not r.passed] == []


def test_the_hand_over_and_validate_commands_match_the_tools() -> None:
    limit = example_spec().iteration_limit
    assert (f"/finesse:finesse-execute --prompt-file finesse-plans/<name>.md "
            f"--completion-promise-file finesse-plans/<name>-promise.txt "
            f"--max-iterations {limit}\n") in TEXT
    assert ("finesse validate finesse-plans/<name>.md --promise-file "
            "finesse-plans/<name>-promise.txt\n") in TEXT
    assert "finesse new finesse-plans/<name>.yaml\n" in TEXT


# ---- every command named exists ---------------------------------------------------------


def test_every_finesse_subcommand_named_exists_or_is_planned() -> None:
    named = {name for snippet in code_snippets() for name in _SUBCOMMAND.findall(snippet)}
    assert {"cache", "budget", "new", "validate", "retro"} <= named
    unknown = named - set(SUBCOMMANDS) - PLANNED_SUBCOMMANDS
    assert not unknown, f"the skill names finesse subcommands that do not exist: {unknown}"


def test_every_cache_subcommand_named_exists() -> None:
    cache = subcommand("cache")
    assert isinstance(cache, click.Group)
    named = set()
    for snippet in code_snippets():
        for found in re.findall(r"finesse cache ([a-z]+(?: \| [a-z]+)*)", snippet):
            named.update(found.split(" | "))
    assert {"show", "add", "baseline", "prune", "clear"} <= named
    assert named <= set(cache.commands)


def test_every_flag_named_with_a_finesse_command_is_one_of_its_options() -> None:
    checked = 0
    for snippet in code_snippets():
        found = _SUBCOMMAND.search(snippet)
        if not found or found.group(1) not in SUBCOMMANDS:
            continue
        command = subcommand(found.group(1))
        rest = snippet[found.end() :]
        if isinstance(command, click.Group):
            word = rest.split()[0] if rest.split() else ""
            if word not in command.commands:
                continue
            command = command.commands[word]
        options = {opt for param in command.params for opt in param.opts}
        flags = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", rest))
        assert flags <= options, f"{snippet!r}: {flags - options} are not options"
        checked += len(flags)
    assert checked >= 10


def test_every_slash_command_named_has_a_file_or_is_planned() -> None:
    named = set(_SLASH_COMMAND.findall(TEXT))
    assert {"finesse", "finesse-execute", "finesse-retro"} <= named
    unknown = named - existing_slash_commands() - PLANNED_SLASH_COMMANDS
    assert not unknown, f"the skill names slash commands with no commands/*.md: {unknown}"


def test_planned_commands_have_not_landed() -> None:
    landed = (PLANNED_SUBCOMMANDS & set(SUBCOMMANDS)) | (
        PLANNED_SLASH_COMMANDS & existing_slash_commands())
    assert not landed, f"{landed} landed: remove it from the PLANNED sets of this test"
