"""The ralph-protocol skill cannot drift: its shape, its plan example, the commands it names."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from finesse.cli.ralph import SUBCOMMANDS as RALPH_SUBCOMMANDS

ROOT = Path(__file__).resolve().parent.parent
SKILL = ROOT / "skills" / "ralph-protocol" / "SKILL.md"
TEXT = SKILL.read_text()

SECTIONS = (
    "When a loop may start",
    "Iteration discipline",
    "Verifier hierarchy",
    "Terminal lines",
    "Stuck and idle rules",
    "The tasks/todo.md shape",
    "Command template",
)
PLAN_SECTIONS = (
    "Goal",
    "Acceptance Criteria",
    "Plan",
    "Verification Commands",
    "Attempts",
    "Review",
)
# Slash commands the skill already documents but whose commands/*.md has not landed yet.
# When one lands, remove it from here (test_planned_slash_commands_have_not_landed says so).
PLANNED_SLASH_COMMANDS: frozenset[str] = frozenset()
# Claude Code's own commands, which the skill names (and the plugin does not ship).
BUILTIN_SLASH_COMMANDS = frozenset({"goal", "clear", "compact"})
# Terminal subcommands the skill documents ahead of the `ralph` CLI.
PLANNED_RALPH_SUBCOMMANDS: frozenset[str] = frozenset()
MAX_CAP = 25

# "/name" or "/finesse:name"; not a path segment (tasks/todo.md, .claude/ralph/STOP) nor a
# closing tag (</promise>).
_SLASH_COMMAND = re.compile(r"(?<![\w./:<-])/(?:finesse:)?([a-z][a-z0-9-]*)")
_PLAN_EXAMPLE = re.compile(r"^````markdown\n(.*?)^````$", re.DOTALL | re.MULTILINE)


def _frontmatter() -> dict[str, object]:
    found = re.match(r"\A---\n(.*?)\n---\n", TEXT, re.DOTALL)
    assert found, "SKILL.md must start with a --- frontmatter block"
    data = yaml.safe_load(found.group(1))
    assert isinstance(data, dict)
    return data


def _plan_example() -> str:
    blocks = _PLAN_EXAMPLE.findall(TEXT)
    examples = [block for block in blocks if "## Goal" in block]
    assert len(examples) == 1, "the skill holds exactly one tasks/todo.md example"
    return examples[0]


def _section(markdown: str, title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown,
                      re.DOTALL | re.MULTILINE)
    assert found, title
    return found.group(1)


def _existing_commands() -> set[str]:
    names = set()
    for path in (ROOT / "commands").glob("*.md"):
        found = re.search(r"^name: (\S+)$", path.read_text(), re.MULTILINE)
        assert found, f"{path} has no name: frontmatter"
        names.add(found.group(1))
    return names


def test_frontmatter_names_the_skill_and_says_when_to_use_it() -> None:
    data = _frontmatter()
    assert data["name"] == "ralph-protocol"
    assert SKILL.parent.name == data["name"]
    description = data["description"]
    assert isinstance(description, str) and description.strip()
    for when in ("Ralph loop", "tasks/todo.md"):
        assert when in description


def test_every_protocol_section_is_a_heading_in_order() -> None:
    headings = re.findall(r"^## (.+)$", _PLAN_EXAMPLE.sub("", TEXT), re.MULTILINE)
    positions = [headings.index(title) for title in SECTIONS]
    assert positions == sorted(positions)


def test_plan_example_has_the_six_sections_in_order() -> None:
    headings = re.findall(r"^## (.+)$", _plan_example(), re.MULTILINE)
    assert tuple(headings) == PLAN_SECTIONS


def test_plan_example_criteria_and_tasks_are_checkboxes_checkable_by_command() -> None:
    example = _plan_example()
    criteria = _section(example, "Acceptance Criteria").strip().splitlines()
    assert criteria and all(re.match(r"- \[ \] `[^`]+`", line) for line in criteria)
    tasks = _section(example, "Plan").strip().splitlines()
    assert tasks and all(line.startswith("- [ ] ") for line in tasks)


def test_plan_example_verification_commands_are_backticked_or_fenced() -> None:
    section = _section(_plan_example(), "Verification Commands")
    outside_fences = re.sub(r"^```\w*\n.*?^```$", "", section, flags=re.DOTALL | re.MULTILINE)
    for line in outside_fences.strip().splitlines():
        assert re.fullmatch(r"- `[^`]+`", line), line
    assert "```" in section


def test_terminal_lines_and_attempt_lines_are_named() -> None:
    for token in ("<promise>TEXT</promise>", "RESULT: VERIFIED_COMPLETE", "RESULT: BLOCKED",
                  "Approach:", "Evidence:", "Learning:", "Next:"):
        assert token in TEXT, token


def test_every_slash_command_named_has_a_file_or_is_planned() -> None:
    named = set(_SLASH_COMMAND.findall(TEXT))
    assert {"ralph-loop", "ralph-status", "cancel-ralph", "ralph-resume"} <= named
    unknown = named - _existing_commands() - PLANNED_SLASH_COMMANDS - BUILTIN_SLASH_COMMANDS
    assert not unknown, f"the skill names slash commands with no commands/*.md: {unknown}"


def test_planned_slash_commands_have_not_landed() -> None:
    landed = PLANNED_SLASH_COMMANDS & _existing_commands()
    assert not landed, f"{landed} now has a commands/*.md: remove it from PLANNED_SLASH_COMMANDS"


def test_every_ralph_subcommand_named_exists_or_is_planned() -> None:
    named = set(re.findall(r"^ralph ([a-z]+)", TEXT, re.MULTILINE))
    assert {"start", "status", "cancel", "report", "resume"} <= named
    assert not named - set(RALPH_SUBCOMMANDS) - PLANNED_RALPH_SUBCOMMANDS


def test_every_cap_in_the_skill_is_conservative() -> None:
    caps = [int(n) for n in re.findall(r"--max-iterations (\d+)", TEXT)]
    assert caps and max(caps) <= MAX_CAP
