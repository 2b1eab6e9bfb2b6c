"""The renderer: golden files, the template's shape, and the property that every spec that
loads renders a prompt that passes the checker.

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

from finesse.authoring.prompt_check.validate import (
    validate_prompt,
)
from finesse.authoring.render import (
    CUSTOM,
    KEEP_HISTORY,
    NO_CHECKPOINTS,
    NO_PUSH,
    PER_CHANGE,
    PER_PHASE,
    PUSH,
    git_rules,
    guardrail,
    render_prompt,
    scope_path,
)
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
               "custom": "squash each phase into one commit titled after the phase"},
}


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
    assert failing(render_prompt(spec), spec.promise) == []


@pytest.mark.parametrize("subagents", [False, True], ids=["solo", "subagents"])
@pytest.mark.parametrize("git_config", sorted(GIT_CONFIGS))
def test_golden_prompt_for_each_git_config(git_config: str, subagents: bool) -> None:
    spec = variant(git_config, subagents)
    prompt = render_prompt(spec)
    check_golden(f"prompt-{git_config}{'-subagents' if subagents else ''}.md", prompt)
    assert failing(prompt, spec.promise) == []


@pytest.mark.parametrize("subagents", [False, True], ids=["solo", "subagents"])
@pytest.mark.parametrize("git_config", sorted(GIT_CONFIGS))
def test_the_prompt_has_the_template_shape(git_config: str, subagents: bool) -> None:
    prompt = render_prompt(variant(git_config, subagents))
    assert prompt.startswith("You are iterating on CSV export for the reports API, a feature "
                             "task: ")
    assert re.findall(r"^#+ .*$", prompt, re.MULTILINE) == [
        *(["## Subagent Instructions"] if subagents else []),
        "## Requirements (in order)",
        "### Phase 1: Serializer",
        "### Phase 2: Endpoint",
        "### Phase 3: Streaming",
        "## Rules",
        "## Completion",
    ]
    assert re.findall(r"^Verify: .*$", prompt, re.MULTILINE) == [
        "Verify: `pytest tests/reports/test_csv_export.py -q`",
        "Verify: `pytest tests/reports/test_views.py -q -k export`",
        "Verify: `pytest tests/reports -q`",
    ]
    assert re.findall(r"^\[Subagent opportunity\]: .*$", prompt, re.MULTILINE) == ([
        "[Subagent opportunity]: write the serializer tests while you write the serializer.",
        "[Subagent opportunity]: run the full `pytest tests/reports -q` suite in parallel.",
    ] if subagents else [])
    assert ("at most 2 subagents at the same time" in prompt) == subagents
    completion = prompt.split("## Completion\n\n")[1]
    assert completion == (
        "Output <promise>EXPORT_DONE</promise> when ALL of the following are true:\n\n"
        "- `pytest tests/reports/test_csv_export.py -q` exits 0\n"
        "- `pytest tests/reports/test_views.py -q -k export` exits 0\n"
        "- `curl -s localhost:8000/reports/1/export.csv | head -1` prints "
        "`id,title,created_at,total`\n"
        "- `pytest tests/reports/test_views.py -q -k streaming` exits 0\n"
        "- `ruff check app/reports tests/reports` exits 0\n\n"
        "Do not output the completion promise unless every criterion is met. If one is not "
        "met, keep working.\n\n"
        "Iteration limit: 12 (--max-iterations 12).\n"
    )


@pytest.mark.parametrize(("git_config", "rules"), [
    ("no-checkpointing", [NO_CHECKPOINTS]),
    ("per-phase-push", [PER_PHASE, KEEP_HISTORY, PUSH]),
    ("per-change-no-push", [PER_CHANGE, KEEP_HISTORY, NO_PUSH]),
    ("custom", [CUSTOM.format(custom="squash each phase into one commit titled after the "
                                     "phase."), NO_PUSH]),
])
def test_the_git_rules_match_the_git_config(git_config: str, rules: list[str]) -> None:
    spec = variant(git_config, subagents=False)
    assert git_rules(spec.git) == rules
    rule_lines = render_prompt(spec).split("## Rules\n\n")[1].split("\n\n")[0].splitlines()
    assert rule_lines[7 : 7 + len(rules)] == [f"- {rule}" for rule in rules]


def test_every_git_config_and_push_choice_has_its_rules() -> None:
    for granularity in ("per-phase", "per-change"):
        for push in (True, False):
            rules = git_rules(GitConfig(checkpointing=True, granularity=granularity, push=push))
            assert rules[-1] == (PUSH if push else NO_PUSH)
            assert "commit" in rules[0].lower()


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


def test_a_criterion_named_twice_is_listed_once_in_completion() -> None:
    data = base_data()
    data["phases"][1]["criteria"].append(data["phases"][0]["criteria"][0])
    spec = Spec.model_validate(data)
    assert len(spec.criteria) == 5
    completion = render_prompt(spec).split("## Completion")[1]
    assert completion.count("- `pytest tests/reports/test_csv_export.py -q`") == 1


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
    criterion = st.fixed_dictionaries({"command": command}, optional={"expect": text})
    phase = st.fixed_dictionaries(
        {"name": text, "deliverable": text, "verify": command,
         "criteria": st.lists(criterion, min_size=1, max_size=3)},
        optional={"kind": st.sampled_from(["implementation", "verification", "exploration"]),
                  "subagent_opportunity": text},
    )
    git_config = st.one_of(
        st.just({"checkpointing": False}),
        st.fixed_dictionaries({"checkpointing": st.just(True),
                               "granularity": st.sampled_from(["per-phase", "per-change"]),
                               "push": st.booleans()}),
        st.fixed_dictionaries({"checkpointing": st.just(True), "granularity": st.just("custom"),
                               "custom": text, "push": st.booleans()}),
    )
    return st.fixed_dictionaries({
        "project": st.fixed_dictionaries({
            "name": text, "description": text, "task_type": st.sampled_from(TASK_TYPES),
            "summary": text, "codebase_context": text, "chosen_approach": text,
        }),
        "phases": st.lists(phase, min_size=2, max_size=6),
        "scope": st.fixed_dictionaries({"in_scope": st.lists(path, min_size=1, max_size=3),
                                        "out_of_scope": st.lists(path, max_size=3)}),
        "git": git_config,
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


WELL_FORMED = spec_data(texts(SAFE_WORDS + TRICKY), texts(COMMAND_PARTS, max_words=6),
                        st.sampled_from(PATHS), PROMISES)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(WELL_FORMED)
def test_every_well_formed_spec_renders_a_prompt_that_passes(data: dict[str, Any]) -> None:
    spec = Spec.model_validate(data)
    prompt = render_prompt(spec)
    assert failing(prompt, spec.promise) == [], prompt


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
    assert re.findall(r"^### Phase (\d+): part \1$", prompt, re.MULTILINE) == [
        str(n) for n in range(1, 26)]
    assert failing(prompt, spec.promise) == []
