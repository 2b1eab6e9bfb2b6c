"""The /finesse skill cannot drift from the tools: its attributes, its git-rule table, its
subagent section, its template, its example spec, and every command it names."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from finesse.authoring.iterations import TABLE, reasoning
from finesse.authoring.plan import unresolved_reviews
from finesse.authoring.prompt_check.registry import RULES
from finesse.authoring.prompt_check.validate import validate_prompt
from finesse.authoring.render import git_rule, render_prompt
from finesse.authoring.spec import AgentReview, GitConfig, Spec
from finesse.authoring.workflows.decompose import DecomposedSpec, Dependency, SubWorkflowSpec
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
# Not an HTTP route either ("GET /users", "/reports/<id>/export.csv").
_SLASH_COMMAND = re.compile(
    r"(?<![\w./:<>-])(?<!GET )/(?:finesse:)?([a-z][a-z0-9-]*)(?![\w/-])")
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
    [example] = [block for block in fenced(section("Workflow"), "yaml")
                 if block.startswith("project:")]
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
        (rule.id, rule.key) for rule in RULES]


CUSTOM_WORDS = "Commit when make test passes, prefixed [x]."
ANSWERS: dict[str, dict[str, Any]] = {
    "checkpointing: no": {"checkpointing": False},
    **{f"{granularity}, push: {push}": {
        "checkpointing": True, "granularity": granularity, "push": push == "yes",
        **({"custom": CUSTOM_WORDS} if granularity == "custom" else {})}
       for granularity in ("per-phase", "per-change", "custom") for push in ("no", "yes")},
}


def git_table() -> dict[str, str]:
    rows = re.findall(r"^\| ([a-z-]+(?:: [a-z]+|, push: [a-z]+)) \| `([^`]+)` \|$",
                      section("The git-rule table"), re.MULTILINE)
    return dict(rows)


def test_the_git_rule_table_is_the_renderers_row_for_every_answer() -> None:
    table = git_table()
    assert list(table) == ["checkpointing: no", "per-phase, push: no", "per-phase, push: yes",
                           "per-change, push: no", "per-change, push: yes", "custom, push: no",
                           "custom, push: yes"]
    for answer, rule in table.items():
        config = GitConfig.model_validate(ANSWERS[answer])
        assert git_rule(config) == rule.replace("<the user's words, verbatim>", CUSTOM_WORDS)


def test_the_subagent_section_is_the_rendered_one_word_for_word() -> None:
    spec = example_spec()
    assert spec.subagents
    rendered = render_prompt(spec).split("\n\n## Requirements")[0].split("\n\n", 1)[1]
    [shown] = fenced(section("Subagent instructions"), "markdown")
    assert shown == rendered + "\n"
    for heuristic, kind in (("Independent subtasks", "general-purpose"),
                            ("Parallel verification", "Bash"),
                            ("Exploration benefit", "Explore")):
        assert f"**{heuristic}**" in section("Subagent instructions")
        assert f"Type:\n  `{kind}`" in section("Subagent instructions") or \
            f"Type: `{kind}`" in section("Subagent instructions")


# ---- the template and the example spec --------------------------------------------------


def template() -> str:
    [shown] = fenced(section("The prompt template"), "markdown")
    return shown


def test_the_template_is_what_the_renderer_writes() -> None:
    spec = example_spec()
    prompt = render_prompt(spec)
    headings = re.findall(r"^#+ .*$", prompt, re.MULTILINE)
    shown = [h for h in re.findall(r"^#+ .*$", template(), re.MULTILINE)]
    assert shown == [h for h in headings if h.startswith("## ")]
    placeholder = re.compile(r"\[(?!Subagent opportunity\])[^\]]+\]")
    fixed = [line for line in template().splitlines() if line and not placeholder.search(line)]
    assert fixed and [line for line in fixed if line not in prompt.splitlines()] == []
    assert template().startswith("You are iterating on [PROJECT]. Before doing anything, check "
                                 "the current\nstate: run tests, read recent git log, identify "
                                 "what's done vs remaining.\n")


def test_the_example_spec_renders_a_prompt_that_passes() -> None:
    spec = example_spec()
    report = validate_prompt(render_prompt(spec), promise=spec.promise)
    assert ([r.key for r in report.attributes if not r.passed], report.passed) == ([], True)


def test_the_decomposition_example_names_the_fields_of_the_decomposed_spec() -> None:
    [example] = fenced(section("Decomposition"), "yaml")
    keys = set(re.findall(r"^\s*(?:- )?([a-z_]+):", example, re.MULTILINE))
    known = {*DecomposedSpec.model_fields, *SubWorkflowSpec.model_fields,
             *Dependency.model_fields, *GitConfig.model_fields}
    assert keys <= known, keys - known
    assert {"session", "task", "workflows", "depends_on", "kind", "why"} <= keys
    text = section("Decomposition")
    assert "`## Wave 1 (run in parallel)`" in text
    assert "`## Wave 2 (run after Wave 1 completes)`" in text


def test_the_hand_over_and_validate_commands_match_the_tools() -> None:
    assert ("/finesse:finesse-execute --prompt-file finesse-plans/<name>.md "
            "--completion-promise-file finesse-plans/<name>-promise.txt "
            "--max-iterations 8\n") in TEXT
    assert example_spec().iteration_limit == 8
    assert ("finesse validate finesse-plans/<name>.md --promise-file "
            "finesse-plans/<name>-promise.txt\n") in TEXT
    assert "finesse new finesse-plans/<name>.yaml\n" in TEXT


# ---- the validation agents and the task-workflows skill ---------------------------------

AGENTS = {"finesse-criteria-review": [1, 2, 5, 9, 10], "finesse-scope-review": [3, 4, 6, 7, 8]}


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_each_validation_agent_is_read_only_and_returns_the_verdicts_reviews_hold(
        name: str) -> None:
    text = (ROOT / "agents" / f"{name}.md").read_text()
    data = frontmatter(text)
    assert data == {"name": name, "description": data["description"],
                    "tools": "Read, Grep, Glob", "model": "sonnet"}
    [contract] = fenced(text, "json")
    reply = json.loads(contract)
    review = AgentReview.model_validate({**reply, "round": 1})
    assert (review.agent, sorted(review.verdicts)) == (name, AGENTS[name])
    assert f'subagent_type: "finesse:{name}"' in TEXT


def test_the_agents_together_cover_the_ten_attributes_once() -> None:
    assert sorted(n for numbers in AGENTS.values() for n in numbers) == list(range(1, 11))
    assert sorted(p.stem for p in (ROOT / "agents").glob("finesse-*.md")) == sorted(AGENTS)


TASK_WORKFLOWS = ROOT / "skills" / "task-workflows" / "SKILL.md"


def test_the_task_workflows_table_is_the_one_finesse_new_reads() -> None:
    text = TASK_WORKFLOWS.read_text()
    assert frontmatter(text)["name"] == "task-workflows"
    rows = re.findall(r"^\| ([a-z]+) \| (\d+)-(\d+) \| (\d+)-(\d+) \| (\d+)-(\d+) \|$", text,
                      re.MULTILINE)
    assert {kind: {"small": (int(a), int(b)), "medium": (int(c), int(d)),
                   "large": (int(e), int(f))} for kind, a, b, c, d, e, f in rows} == TABLE
    assert max(high for row in TABLE.values() for _, high in row.values()) == 25
    assert "`task-workflows` skill" in TEXT


def test_recommended_max_iterations_cites_the_task_workflows_table() -> None:
    spec = example_spec()
    assert reasoning(spec.project.task_type, len(spec.phases), spec.iteration_limit,
                     spec.iteration_reasoning).startswith(
        "8: the task-workflows table gives 5-8 iterations for a small feature (2 phases).")


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


def test_the_reviews_example_is_what_the_spec_holds() -> None:
    [example] = [block for block in fenced(section("Workflow"), "yaml")
                 if block.startswith("reviews:")]
    reviews = [AgentReview.model_validate(item) for item in yaml.safe_load(example)["reviews"]]
    assert [(r.agent, r.round, r.verdicts[5]) for r in reviews] == [
        ("finesse-criteria-review", 1, "fail")]
    spec = example_spec().model_copy(update={"reviews": reviews})
    assert unresolved_reviews(spec) == [
        "finesse-criteria-review (round 1 of 2) still fails attribute 5: Phase 2's Verify "
        "command runs the whole suite; name the endpoint test."]


# ---- the Finesse page (docs/finesse.md) shows what the tools write --------------------------

FINESSE_SECTION = (ROOT / "docs" / "finesse.md").read_text()
GOLDEN = ROOT / "tests" / "unit" / "authoring" / "golden"


def test_the_readme_graph_excerpt_is_the_golden_execution_graph() -> None:
    [excerpt] = fenced(FINESSE_SECTION, "markdown")
    golden = (GOLDEN / "execution-graph.md").read_text().splitlines()
    shown = [line for line in excerpt.splitlines() if line]
    assert shown and [line for line in shown if line not in golden] == []


def test_the_accuracy_table_is_the_suites_floor() -> None:
    from tests.unit.authoring.prompt_check.test_corpus import FLOOR

    history = (ROOT / "docs" / "validator-history.md").read_text()
    rows = re.findall(r"^\| (blind|old)\b.*?now .*?\| (\d+) of (\d+) \| (\d+) of (\d+) \|$",
                      history, re.MULTILINE)
    assert {name: (int(exact), int(verdicts)) for name, exact, _, verdicts, _ in rows} == {
        "blind": FLOOR["corpus_blind"], "old": FLOOR["corpus"]}
