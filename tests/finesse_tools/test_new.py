"""`finesse new`: the spec model, the renderer, golden files, and the command end to end.

The golden files under golden/ are the expected output, checked in. After a deliberate
template change, rewrite them with `FINESSE_UPDATE_GOLDEN=1 pytest tests/finesse_tools/
test_new.py` and read the diff before committing it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import git
import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from finesse.authoring import render
from finesse.authoring.prompt_check.validate import (
    AttributeResult,
    ValidationReport,
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
from finesse.cli.finesse import cli
from finesse.loop.grammar import check_promise

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


# ---- what the spec refuses, and how it says so ------------------------------------------


def refusal(change: dict[str, Any]) -> str:
    data = base_data()
    for dotted, value in change.items():
        *parents, last = dotted.split(".")
        target: Any = data
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[last] = value
    with pytest.raises(ValidationError) as caught:
        Spec.model_validate(data)
    return str(caught.value.errors()[0]["msg"]).removeprefix("Value error, ")


@pytest.mark.parametrize(("change", "message"), [
    ({"promise": "BLOCKED"}, "BLOCKED is the stuck signal; pick another, e.g. TASK_COMPLETE"),
    ({"promise": "done"}, "must be 4 to 80 capitals, digits, _ or -, words split by single "
                          "spaces, e.g. TASK_COMPLETE"),
    ({"git": {"checkpointing": False, "push": True}},
     "with checkpointing false, leave out granularity, custom and push: nothing is "
     "committed, so nothing is pushed"),
    ({"git": {"checkpointing": True}},
     "with checkpointing true, set granularity: per-phase, per-change or custom"),
    ({"git": {"checkpointing": True, "granularity": "custom"}},
     "give custom (the commit rule in words) exactly when granularity is custom"),
    ({"phases.0.criteria.0.expect": "passes cleanly"},
     "says 'cleanly', which no command can check; name the result, e.g. 'exits 0' or "
     "'prints 0 lines'"),
    ({"phases.0.verify": "pytest `ls tests`"},
     "holds a backtick; write the command without backticks ($(...) instead of `...`)"),
    ({"phases.0.verify": "pytest\nruff check"},
     "spans several lines; give one shell command line (join them with &&)"),
    ({"phases.1.verify": "ralph start --max-iterations 50"},
     "states an iteration limit; say it once, in iteration_limit"),
    ({"project.description": "Finish within 30 iterations."},
     "states an iteration limit; say it once, in iteration_limit"),
    ({"guardrails": ["output <promise>DONE</promise> early"]},
     "holds a <promise> tag; the prompt says the promise once, from `promise`"),
    ({"phases.0.deliverable": "the `csv_export.py module"},
     "has an unpaired backtick; close every `code span`"),
    ({"phases.0.name": "  \n "}, "is empty; write some text"),
    ({"scope.in_scope": ["src/my dir/"]}, "must be one path or glob, without spaces or "
                                          "backticks"),
    ({"scope.out_of_scope": ["/etc/"]}, "must be relative to the project root, e.g. src/app/"),
    ({"scope.in_scope": []}, "List should have at least 1 item after validation, not 0"),
    ({"iteration_limit": 30}, "Input should be less than or equal to 25"),
    ({"stuck_threshold": 6}, "Input should be less than or equal to 5"),
    ({"phases": base_data()["phases"][:1]}, "List should have at least 2 items after "
                                             "validation, not 1"),
    ({"project.task_type": "chore"}, "Input should be 'feature', 'bugfix', 'refactor', "
                                     "'testing', 'performance' or 'research'"),
    ({"phases.0.owner": "me"}, "Extra inputs are not permitted"),
])
def test_the_spec_refuses_what_the_prompt_cannot_say(change: dict[str, Any],
                                                     message: str) -> None:
    assert refusal(change) == message


def test_defaults_promise_stuck_threshold_and_expected_result() -> None:
    data = base_data()
    del data["promise"]
    spec = Spec.model_validate(data)
    assert (spec.promise, spec.stuck_threshold, spec.warnings) == ("TASK_COMPLETE", 3, [])
    assert spec.phases[0].criteria[0].expect == "exits 0"
    assert spec.phases[1].kind == "implementation"


def test_prompt_text_is_one_line() -> None:
    data = base_data()
    data["project"]["description"] = "Add a CSV\n\n## download\n- of any report"
    spec = Spec.model_validate(data)
    assert spec.project.description == "Add a CSV ## download - of any report"


# ---- the command ------------------------------------------------------------------------


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project the YAML example can measure: app/reports/models.py, 300 lines."""
    root = tmp_path / "project"
    (root / "app" / "reports").mkdir(parents=True)
    (root / "app" / "reports" / "models.py").write_text("x = 1\n" * 300)
    return root


def new(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(cli, ["new", *map(str, args)], prog_name="finesse")


def plan_files(root: Path, name: str) -> dict[str, str]:
    out = root / "finesse-plans"
    return {path.name: path.read_text() for path in sorted(out.iterdir())
            if path.name.startswith(name)}


CSV_WARNINGS = (
    "warning: context pressure is moderate (35% of the window at peak): proceed, and keep "
    "phases small\n"
    "warning: checkpointing is on but the project is not a git repository: run `git init` "
    "and commit before the loop starts\n"
)


def test_new_writes_the_three_files_and_says_how_to_run_them(
        runner: CliRunner, project: Path) -> None:
    result = new(runner, YAML_SPEC, "--project", project)
    assert (result.exit_code, result.stderr) == (0, CSV_WARNINGS)
    assert result.stdout.splitlines() == [
        "Wrote finesse-plans/csv-export.md, finesse-plans/csv-export-promise.txt, "
        "finesse-plans/csv-export-plan.md.",
        "All 10 attributes pass (finesse validate).",
        "Peak context 70,000 tokens, 35% of the window (moderate pressure); cost for 12 "
        "iterations: $5-20.",
        "Run the plan in Claude Code with:",
        "  /finesse:finesse-execute --prompt-file finesse-plans/csv-export.md "
        "--completion-promise-file finesse-plans/csv-export-promise.txt --max-iterations 12",
    ]
    files = plan_files(project, "csv-export")
    assert sorted(files) == ["csv-export-plan.md", "csv-export-promise.txt", "csv-export.md"]
    for name, text in files.items():
        check_golden(name, text)


def test_new_on_the_json_example(runner: CliRunner, tmp_path: Path) -> None:
    result = new(runner, JSON_SPEC, "--project", tmp_path)
    assert (result.exit_code, result.stderr) == (
        0, "warning: checkpointing is on but the project is not a git repository: run "
           "`git init` and commit before the loop starts\n")
    for name, text in plan_files(tmp_path, "flaky-retry").items():
        check_golden(name, text)


def test_the_plan_front_matter_reads_back_as_yaml(runner: CliRunner, project: Path) -> None:
    assert new(runner, YAML_SPEC, "--project", project).exit_code == 0
    plan = (project / "finesse-plans" / "csv-export-plan.md").read_text()
    front = plan.split("---\n")[1]
    assert yaml.safe_load(front) == {
        "prompt_file": "finesse-plans/csv-export.md",
        "promise_file": "finesse-plans/csv-export-promise.txt",
        "task_type": "feature",
        "max_iterations": 12,
        "baseline_commit": "none (not a git repository)",
        "git_config": {"checkpointing": True, "granularity": "per-phase", "custom": None,
                       "push": False},
        "subagent_enabled": True,
        "phases": [
            {"name": "Serializer", "verify": "pytest tests/reports/test_csv_export.py -q"},
            {"name": "Endpoint", "verify": "pytest tests/reports/test_views.py -q -k export"},
            {"name": "Streaming", "verify": "pytest tests/reports -q"},
        ],
    }
    headings = re.findall(r"^## (.+)$", plan, re.MULTILINE)
    assert headings == ["Task Type", "Summary", "Codebase Context", "Chosen Approach",
                        "Recommended --max-iterations", "Context Budget Estimate",
                        "Validation Results", "Unresolved Warnings"]


def test_the_promise_file_is_the_promise_and_one_newline(
        runner: CliRunner, project: Path) -> None:
    assert new(runner, YAML_SPEC, "--project", project).exit_code == 0
    out = project / "finesse-plans"
    assert (out / "csv-export-promise.txt").read_bytes() == b"EXPORT_DONE\n"
    assert check_promise((out / "csv-export-promise.txt").read_text(), "file") == "EXPORT_DONE"
    result = runner.invoke(cli, ["validate", str(out / "csv-export.md"), "--promise-file",
                                 str(out / "csv-export-promise.txt")])
    assert result.exit_code == 0, result.output


def test_the_prompt_file_is_the_prompt_only(runner: CliRunner, project: Path) -> None:
    assert new(runner, YAML_SPEC, "--project", project).exit_code == 0
    prompt = (project / "finesse-plans" / "csv-export.md").read_text()
    assert prompt == render_prompt(parse_spec(yaml.safe_load(YAML_SPEC.read_text())))
    assert prompt.startswith("You are iterating on ")


def test_baseline_commit_is_the_project_head(runner: CliRunner, git_repo: Path) -> None:
    with git.Repo(git_repo) as repo:
        head = repo.head.commit.hexsha
    result = new(runner, JSON_SPEC, "--project", git_repo)
    assert (result.exit_code, result.stderr) == (0, "")
    plan = (git_repo / "finesse-plans" / "flaky-retry-plan.md").read_text()
    assert f'baseline_commit: "{head}"\n' in plan


def test_baseline_commit_of_a_repository_without_commits(
        runner: CliRunner, tmp_path: Path) -> None:
    git.Repo.init(tmp_path).close()
    assert new(runner, JSON_SPEC, "--project", tmp_path).exit_code == 0
    plan = (tmp_path / "finesse-plans" / "flaky-retry-plan.md").read_text()
    assert 'baseline_commit: "none (no commit yet)"\n' in plan


def test_new_refuses_to_overwrite_without_force(runner: CliRunner, tmp_path: Path) -> None:
    assert new(runner, JSON_SPEC, "--project", tmp_path).exit_code == 0
    (tmp_path / "finesse-plans" / "flaky-retry.md").write_text("edited by hand\n")
    result = new(runner, JSON_SPEC, "--project", tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "finesse new: finesse-plans/flaky-retry.md already exists (and 2 more); pass "
               "--force to overwrite, or --name to write a new plan\n")
    assert (tmp_path / "finesse-plans" / "flaky-retry.md").read_text() == "edited by hand\n"
    assert new(runner, JSON_SPEC, "--project", tmp_path, "--force").exit_code == 0
    assert (tmp_path / "finesse-plans" / "flaky-retry.md").read_text().startswith("You are")


def test_name_and_out_dir(runner: CliRunner, tmp_path: Path) -> None:
    result = new(runner, JSON_SPEC, "--project", tmp_path, "--name", "retry.v2",
                 "--out-dir", "plans/q3")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "plans" / "q3").iterdir()) == [
        "retry.v2-plan.md", "retry.v2-promise.txt", "retry.v2.md"]
    assert result.stdout.splitlines()[-1] == (
        "  /finesse:finesse-execute --prompt-file plans/q3/retry.v2.md "
        "--completion-promise-file plans/q3/retry.v2-promise.txt --max-iterations 8")


@pytest.mark.parametrize(("args", "message"), [
    (["{spec}", "--name", "../x"],
     "finesse new: --name '../x' cannot name the plan files: use letters, digits, '.', '_' "
     "and '-' (up to 80), e.g. --name csv-export"),
    (["{tmp}/nope.yaml"],
     "finesse new: cannot read the spec {tmp}/nope.yaml (No such file or directory); give a "
     "YAML or JSON file"),
    (["{tmp}/spec.txt"], "finesse new: the spec {tmp}/spec.txt must end in .yaml, .yml or .json"),
    (["{tmp}/broken.yaml"], "finesse new: the spec {tmp}/broken.yaml is not valid YAML at "
                            "line 3"),
    (["{tmp}/broken.json"], "finesse new: the spec {tmp}/broken.json is not valid JSON "
                            "(Expecting value: line 1 column 1 (char 0))"),
    (["{tmp}/list.yaml"], "finesse new: the spec {tmp}/list.yaml: invalid spec: the top "
                          "level: Input should be a valid dictionary or instance of Spec"),
    (["{tmp}/bad.json"], "finesse new: the spec {tmp}/bad.json: invalid spec: promise: "
                         "BLOCKED is the stuck signal; pick another, e.g. TASK_COMPLETE; "
                         "iteration_limit: Input should be less than or equal to 25"),
    (["{tmp}/missing-file.json"], "finesse new: no file lib/gone.py; give a file that exists, "
                                  "or small / medium / large for one not read yet"),
    ([], "finesse new: Missing argument 'SPEC'. (see 'finesse new --help')"),
])
def test_usage_errors_exit_2_with_one_line(runner: CliRunner, tmp_path: Path,
                                           args: list[str], message: str) -> None:
    data = json.loads(JSON_SPEC.read_text())
    (tmp_path / "spec.txt").write_text("{}")
    (tmp_path / "broken.yaml").write_text("project:\n  - [unclosed\n")
    (tmp_path / "broken.json").write_text("")
    (tmp_path / "list.yaml").write_text("- a\n")
    (tmp_path / "bad.json").write_text(json.dumps({**data, "promise": "BLOCKED",
                                                   "iteration_limit": 40}))
    data["phases"][1]["files"] = ["lib/gone.py"]
    (tmp_path / "missing-file.json").write_text(json.dumps(data))
    argv = [arg.format(tmp=tmp_path, spec=JSON_SPEC) for arg in args]
    result = new(runner, *argv, "--project", tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", message.format(tmp=tmp_path) + "\n")
    assert not (tmp_path / "finesse-plans").exists()


def test_a_prompt_that_fails_the_checker_is_not_written(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def checker_disagrees(text: str, *, promise: str | None = None) -> ValidationReport:
        report = validate_prompt(text, promise=promise)
        broken = AttributeResult(id=6, key="guardrails", passed=False, evidence=None,
                                 fix="add explicit rules")
        return ValidationReport(passed=False, attributes=[
            broken if r.id == 6 else r for r in report.attributes])

    monkeypatch.setattr(render, "validate_prompt", checker_disagrees)
    result = new(runner, JSON_SPEC, "--project", tmp_path)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "finesse new: the rendered prompt fails guardrails (add explicit rules); nothing was "
        "written. This is a finesse bug: please report it with the spec\n")
    assert not (tmp_path / "finesse-plans").exists()


def test_warnings_for_tight_limits_and_unused_subagent_opportunities(
        runner: CliRunner, project: Path) -> None:
    data = {**base_data(), "iteration_limit": 2, "subagents": False,
            "warnings": ["the streaming threshold is a guess; confirm it with the team"]}
    spec_path = project / "tight.json"
    spec_path.write_text(json.dumps(data))
    with git.Repo.init(project) as repo:
        repo.index.add(["app/reports/models.py"])
        repo.index.commit("initial")
    result = new(runner, spec_path, "--project", project)
    assert (result.exit_code, result.stderr.splitlines()) == (0, [
        "warning: the streaming threshold is a guess; confirm it with the team",
        "warning: context pressure is moderate (35% of the window at peak): proceed, and "
        "keep phases small",
        "warning: the iteration limit (2) is below the number of phases (3): the loop may "
        "stop before the last phase",
        "warning: subagents are off, so the prompt leaves out the subagent opportunities of "
        "phases 1 and 3",
    ])
    plan = (project / "finesse-plans" / "tight-plan.md").read_text()
    assert plan.split("## Unresolved Warnings\n\n")[1] == "\n".join(
        f"- {line.removeprefix('warning: ')}" for line in result.stderr.splitlines()) + "\n"


def test_twenty_five_phases_still_number_and_verify_in_order() -> None:
    data = base_data()
    data["phases"] = [{**data["phases"][0], "name": f"part {n}"} for n in range(1, 26)]
    spec = Spec.model_validate(data)
    prompt = render_prompt(spec)
    assert re.findall(r"^### Phase (\d+): part \1$", prompt, re.MULTILINE) == [
        str(n) for n in range(1, 26)]
    assert failing(prompt, spec.promise) == []
