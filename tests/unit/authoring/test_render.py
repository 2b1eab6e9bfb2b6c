"""The renderer: seed 000's template word for word (golden files and the seed's own lines),
and the property that every spec that loads renders a prompt that passes the checker.

The golden files under golden/ are the expected output, checked in. After a deliberate
template change, rewrite them with `FINESSE_UPDATE_GOLDEN=1 pytest tests/unit/authoring/
test_render.py tests/unit/cli/finesse/test_new.py` and read the diff before committing it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from finesse.authoring.prompt_check.validate import validate_prompt
from finesse.authoring.render import git_rule, guardrail, render_prompt, scope_path
from finesse.authoring.spec import GitConfig, Spec, parse_spec

HERE = Path(__file__).parent
SPECS = HERE / "specs"
GOLDEN = HERE / "golden"
YAML_SPEC = SPECS / "csv-export.yaml"
JSON_SPEC = SPECS / "flaky-retry.json"
UPDATE = os.environ.get("FINESSE_UPDATE_GOLDEN") == "1"

GIT_CONFIGS: dict[str, dict[str, Any]] = {
    "no-checkpointing": {"checkpointing": False},
    "per-phase-push": {"checkpointing": True, "granularity": "per-phase", "push": True},
    "per-change-no-push": {"checkpointing": True, "granularity": "per-change", "push": False},
    "custom": {"checkpointing": True, "granularity": "custom", "push": False,
               "custom": "Squash each phase into one commit titled after the phase."},
}

# Seed 000, word for word: the template's fixed lines, attribute 10's two sentences, the
# git-rule table, the subagent section.
SEED_COLD_START = ("You are iterating on the CSV export of the reports API. Before doing "
                   "anything, check the current\n"
                   "state: run tests, read recent git log, identify what's done vs remaining.")
SEED_RULES = [
    "- Do NOT rewrite files from scratch. Make targeted edits.",
    "- Do NOT delete existing tests to make a suite pass.",
    "- Do NOT add unnecessary abstractions or extra files.",
    "- Read actual error messages before attempting fixes.",
    "- If stuck on the same error for 3+ attempts, try an alternative approach.",
]
SEED_COMPLETION = (
    "## Completion\n"
    "When ALL phases are complete and ALL verification commands pass cleanly,\n"
    "output <promise>EXPORT DONE</promise>. This must be unequivocally true.\n"
    "Do not output the completion promise unless every criterion is met. Do not lie even if "
    "you think you should exit.\n")
SEED_GIT_TABLE = [
    ({"checkpointing": False},
     "Do NOT make git commits. Do NOT push to remote repositories."),
    ({"checkpointing": True, "granularity": "per-phase", "push": False},
     "After completing each phase and verifying it passes, create a git commit with a "
     "descriptive message referencing the completed phase. Do NOT push to remote "
     "repositories."),
    ({"checkpointing": True, "granularity": "per-phase", "push": True},
     "After completing each phase and verifying it passes, create a git commit with a "
     "descriptive message referencing the completed phase. Push commits to the remote "
     "repository after committing."),
    ({"checkpointing": True, "granularity": "per-change", "push": False},
     "After each logical unit of work, create a git commit with a descriptive message "
     "describing the change. Do NOT push to remote repositories."),
    ({"checkpointing": True, "granularity": "per-change", "push": True},
     "After each logical unit of work, create a git commit with a descriptive message "
     "describing the change. Push commits to the remote repository after committing."),
    ({"checkpointing": True, "granularity": "custom", "push": False,
      "custom": "Commit when make test passes, prefixed [x]."},
     "Commit when make test passes, prefixed [x]. Do NOT push to remote repositories."),
    ({"checkpointing": True, "granularity": "custom", "push": True,
      "custom": "Commit when make test passes, prefixed [x]."},
     "Commit when make test passes, prefixed [x]. Push commits to the remote repository "
     "after committing."),
]
SEED_SUBAGENT_SECTION = """\
## Subagent Instructions

You may use the Task tool to spawn subagents for parallel work. Follow these guidelines:

### Available Subagent Types

- **Bash**: Run test suites, linting, and verification commands in parallel with continued work.
- **Explore**: Investigate unfamiliar code, research patterns, and trace execution flows.
- **general-purpose**: Perform file modifications on independent, non-overlapping file sets.

### Guardrails

- Run at most 2 concurrent subagents at a time.
- Subagents must NOT make git commits or push to remote repositories.
- Subagents must NOT modify files outside their assigned scope.
- Wait for all subagent results before marking a phase complete.
- If a subagent fails, retry once. If it fails again, do the work yourself.
- Provide clear, scoped instructions when spawning a subagent — include specific file paths \
and expected outcomes.
"""


def base_data() -> dict[str, Any]:
    data = yaml.safe_load(YAML_SPEC.read_text())
    assert isinstance(data, dict)
    return data


def variant(git_config: str, subagents: bool) -> Spec:
    return Spec.model_validate({**base_data(), "git": GIT_CONFIGS[git_config],
                                "subagents": subagents})


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs from its golden file"


def failing(prompt: str, promise: str | None = None) -> list[str]:
    return [r.key for r in validate_prompt(prompt, promise=promise).attributes if not r.passed]


# ---- the example specs and the golden prompts -------------------------------------------


@pytest.mark.parametrize("path", [YAML_SPEC, JSON_SPEC], ids=["yaml", "json"])
def test_the_example_specs_render_prompts_that_pass(path: Path) -> None:
    spec = parse_spec(yaml.safe_load(path.read_text()))
    report = validate_prompt(render_prompt(spec), promise=spec.promise)
    assert ([r.key for r in report.attributes if not r.passed], report.passed) == ([], True)


@pytest.mark.parametrize("subagents", [False, True], ids=["solo", "subagents"])
@pytest.mark.parametrize("git_config", sorted(GIT_CONFIGS))
def test_golden_prompt_for_each_git_config(git_config: str, subagents: bool) -> None:
    spec = variant(git_config, subagents)
    prompt = render_prompt(spec)
    check_golden(f"prompt-{git_config}{'-subagents' if subagents else ''}.md", prompt)
    assert failing(prompt, spec.promise) == []


@pytest.mark.parametrize("subagents", [False, True], ids=["solo", "subagents"])
def test_the_prompt_is_the_seeds_template(subagents: bool) -> None:
    prompt = render_prompt(variant("per-phase-push", subagents))
    assert prompt.startswith(SEED_COLD_START + "\n\n")
    assert re.findall(r"^#+ .*$", prompt, re.MULTILINE) == [
        *(["## Subagent Instructions", "### Available Subagent Types", "### Guardrails"]
          if subagents else []),
        "## Requirements (in order)", "## Rules", "## Completion",
    ]
    # The subagent section sits after the cold start, before the requirements.
    section = prompt.split("\n\n", 1)[1].split("## Requirements")[0]
    assert section == (SEED_SUBAGENT_SECTION + "\n" if subagents else "")
    rules = prompt.split("## Rules\n")[1].split("\n\n")[0].splitlines()
    assert [line for line in rules if line in SEED_RULES] == SEED_RULES
    assert rules[0] == "- Run `pytest tests/reports -q` after every change. Fix failures before " \
                       "moving on."
    assert rules[-2:] == ["- If unable to make progress after 8 iterations, document blockers "
                          "and", "  output <promise>BLOCKED</promise>."]
    assert prompt.endswith("\n\n" + SEED_COMPLETION)
    assert re.findall(r"^  Verify: .*$", prompt, re.MULTILINE) == [
        "  Verify: pytest tests/reports/test_csv_export.py -q",
        "  Verify: pytest tests/reports/test_views.py -q -k export",
        "  Verify: pytest tests/reports -q",
    ]


def test_subagent_annotations_follow_the_seeds_format() -> None:
    prompt = render_prompt(variant("per-phase-push", subagents=True))
    assert re.findall(r"^  \[Subagent opportunity\]: .*$", prompt, re.MULTILINE) == [
        "  [Subagent opportunity]: Trace how app/reports/views.py builds the JSON rows before "
        "you write the serializer, using Explore subagent. It only reads files, so it cannot "
        "conflict with the serializer edits.",
        "  [Subagent opportunity]: Run the full `pytest tests/reports -q` suite while you "
        "finish the streaming test, using Bash subagent. The suite only reads files, so there "
        "is no write conflict.",
    ]
    solo = render_prompt(variant("per-phase-push", subagents=False))
    assert "Subagent" not in solo and "subagent" not in solo


@pytest.mark.parametrize(("config", "rule"), SEED_GIT_TABLE,
                         ids=[f"row-{n}" for n in range(1, len(SEED_GIT_TABLE) + 1)])
def test_the_git_rule_is_the_seeds_table_row(config: dict[str, Any], rule: str) -> None:
    assert git_rule(GitConfig.model_validate(config)) == rule
    spec = Spec.model_validate({**base_data(), "git": config})
    rules = render_prompt(spec).split("## Rules\n")[1].splitlines()
    assert rules[3] == f"- {rule}"
    assert sum("git" in line.lower() or "push" in line.lower() for line in rules) == 1


def test_blocked_after_defaults_to_the_iteration_limit() -> None:
    data = {**base_data(), "iteration_limit": 10}
    del data["blocked_after"]
    prompt = render_prompt(Spec.model_validate(data))
    assert "- If unable to make progress after 10 iterations, document blockers and\n" in prompt


def test_guardrails_become_do_not_rules() -> None:
    assert [guardrail(text) for text in (
        "add dependencies", "Do not add dependencies.", "don't touch the schema",
        "Never push to main", "API keys in the code; keep them in the environment",
        "Change the public API",
    )] == [
        "Do NOT add dependencies.", "Do NOT add dependencies.", "Do NOT touch the schema.",
        "Do NOT push to main.", "Do NOT API keys in the code; keep them in the environment.",
        "Do NOT change the public API.",
    ]


def test_scope_paths_always_read_as_paths() -> None:
    assert [scope_path(p) for p in ("src/app/", "Makefile", "*.sql", "docs/*.md", ".env")] == [
        "src/app/", "./Makefile", "**/*.sql", "docs/*.md", "./.env",
    ]
    prompt = render_prompt(variant("custom", subagents=False))
    assert "- Only modify files in `app/reports/` and `tests/reports/`.\n" in prompt
    assert "- Do not modify anything in `app/auth/` or `migrations/`.\n" in prompt


# ---- the property: a spec that loads renders a prompt that passes -----------------------

TASK_TYPES = ["feature", "bugfix", "refactor", "testing", "performance", "research"]
# Words that look like the checker's vocabulary, so generated specs probe its edges.
TRICKY = [
    "Phase 2", "phase 9:", "Step 1.", "### Phase 3", "done", "complete", "criteria:",
    "all of the following", "Output", "when", "Do not", "never", "Don't", "out of scope",
    "in scope", "leave it alone", "read-only", "every other path", "Verify:", "run",
    "after every change", "the same error 3 times", "BLOCKED", "promise", "iterations",
    "max", "limit", "12", "`pytest -q`", "`src/app/`", "src/app/", "tests/test_x.py",
    "README.md", "e.g.", "etc.", "i.e.", "—", ";", ":", ".", "?", "!", "|", "#", "- ",
    "1.", "**Rules**", "RULES", "<b>", "->", "=>", "→", "``x``", "~~~", "<!--", "[x]",
    "you are iterating", "check the current state", "git status", "fresh",
]
SAFE_WORDS = [
    "add", "the", "export", "endpoint", "parser", "report", "rows", "header", "stream",
    "cache", "module", "tests", "API", "CSV", "JSON", "user", "with", "for", "of", "and",
    "a", "to", "in", "keep", "write", "move", "split", "fast", "path", "flag", "option",
]
# Phrases the spec refuses: limits in the wrong place, vague results, promise tags.
REFUSED = [
    "max iterations 40", "up to 30 iterations", "--max-iterations 99", "clean", "properly",
    "good", "<promise>DONE</promise>", "`", "```", "\n\n# Heading", "\x00",
]
COMMAND_PARTS = [
    "pytest", "-q", "tests/", "make", "test", "ruff", "check", ".", "npm", "run", "build",
    "./run.sh", "grep", "-c", "TODO", "src/", "|", "wc", "-l", "&&", "'a b'", "-k", "export",
]
PATHS = [
    "src/", "tests/test_app.py", "Makefile", "*.sql", "docs/**/*.md", "README", "app/api/",
    "vendor/", ".env", "db/migrations/", "a.b.c", "Dockerfile", "lib/x.pyx", "x",
]


def texts(words: list[str], *, max_words: int = 8) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(words), min_size=1, max_size=max_words).map(" ".join)


def spec_data(text: st.SearchStrategy[str], command: st.SearchStrategy[str],
              path: st.SearchStrategy[str],
              promise: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    # Free-text criteria from plain words: tricky ones ("Phase 2") are refused, rightly.
    criterion = st.one_of(
        st.fixed_dictionaries({"command": command}, optional={"expect": text}),
        texts(SAFE_WORDS))
    subagent = st.fixed_dictionaries({
        "what": text, "type": st.sampled_from(["Bash", "Explore", "general-purpose"]),
        "why": text})
    phase = st.fixed_dictionaries(
        {"name": text.filter(lambda name: len(name) <= 120),  # the spec's limit on names
         "verify": command,
         "criteria": st.lists(criterion, min_size=1, max_size=3)},
        optional={"kind": st.sampled_from(["implementation", "verification", "exploration"]),
                  "subagent": subagent},
    )
    git_config = st.one_of(
        st.just({"checkpointing": False}),
        st.fixed_dictionaries({"checkpointing": st.just(True),
                               "granularity": st.sampled_from(["per-phase", "per-change"]),
                               "push": st.booleans()}),
        st.fixed_dictionaries({"checkpointing": st.just(True), "granularity": st.just("custom"),
                               "custom": texts(SAFE_WORDS), "push": st.booleans()}),
    )
    return st.fixed_dictionaries({
        "project": st.fixed_dictionaries({
            "name": text, "task_type": st.sampled_from(TASK_TYPES),
            "summary": text, "codebase_context": text, "chosen_approach": text,
        }),
        "phases": st.lists(phase, min_size=2, max_size=6),
        "scope": st.fixed_dictionaries({"in_scope": st.lists(path, min_size=1, max_size=3),
                                        "out_of_scope": st.lists(path, max_size=3)}),
        "git": git_config,
        "test_command": command,
        "subagents": st.booleans(),
        "promise": promise,
        "iteration_limit": st.integers(1, 25),
        "stuck_threshold": st.integers(2, 5),
        "guardrails": st.lists(text, max_size=4),
    })


PROMISES = st.one_of(
    st.sampled_from(["DONE", "TASK_COMPLETE", "ALL DONE", "NOT DONE", "DO NOT", "EXITS 0",
                     "VERIFY", "PHASE 2 DONE", "APIS", "BLOCKED_NOT"]),
    st.from_regex(r"[A-Z][A-Z0-9_-]{3,20}", fullmatch=True),
)


# A command starts with a program; what follows may be anything shell-like.
COMMANDS = st.tuples(st.sampled_from(["pytest", "make", "npm", "./run.sh", "go", "tox"]),
                     texts(COMMAND_PARTS, max_words=5)).map(" ".join)
WELL_FORMED = spec_data(texts(SAFE_WORDS + TRICKY), COMMANDS, st.sampled_from(PATHS), PROMISES)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(WELL_FORMED)
def test_every_well_formed_spec_renders_a_prompt_that_passes(data: dict[str, Any]) -> None:
    spec = Spec.model_validate(data)
    prompt = render_prompt(spec)
    assert failing(prompt, spec.promise) == [], prompt
    assert validate_prompt(prompt).prompt_only.passed, prompt


ANY_TEXT = st.one_of(
    texts(SAFE_WORDS + TRICKY + REFUSED + COMMAND_PARTS + PATHS),
    st.text(max_size=40),
    st.sampled_from(REFUSED + PATHS + ["DONE", "BLOCKED", "ALL DONE", " "]),
)
ENUM_KEYS = {"task_type", "kind", "granularity"}


def text_leaves(node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) of a string in the spec data, other than the enum fields."""
    items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
    found = []
    for key, value in items:
        if isinstance(value, str) and key not in ENUM_KEYS:
            found.append((node, key))
        elif isinstance(value, dict | list):
            found += text_leaves(value)
    return found


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_spec_that_loads_always_renders_a_prompt_that_passes(data: st.DataObject) -> None:
    """A well-formed spec with one to three fields replaced by anything at all."""
    spec_data_ = data.draw(WELL_FORMED)
    leaves = text_leaves(spec_data_)
    for _ in range(data.draw(st.integers(1, 3))):
        container, key = data.draw(st.sampled_from(leaves))
        container[key] = data.draw(ANY_TEXT)
    try:
        spec = Spec.model_validate(spec_data_)
    except ValidationError:
        event("refused")
        return  # refused with a message: the other way a spec can end
    event("loaded")
    prompt = render_prompt(spec)
    assert failing(prompt, spec.promise) == [], prompt


def test_twenty_five_phases_still_number_and_verify_in_order() -> None:
    data = base_data()
    data["phases"] = [{**data["phases"][0], "name": f"part {n}"} for n in range(1, 26)]
    spec = Spec.model_validate(data)
    prompt = render_prompt(spec)
    assert re.findall(r"^Phase (\d+): part \1$", prompt, re.MULTILINE) == [
        str(n) for n in range(1, 26)]
    assert failing(prompt, spec.promise) == []
