"""`/finesse:finesse-execute` in the real CLI: a valid plan runs as a loop to its promise, an
invalid prompt is refused before any model call (or run anyway with --force, recorded)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.fakeapi import FakeModel, bash, text
from tests.e2e.harness import REPO_ROOT, ClaudeRunner

pytestmark = pytest.mark.e2e

CORPUS = REPO_ROOT / "tests" / "unit" / "authoring" / "prompt_check" / "corpus"
# Prompt-only files (the corpus prompts open with a title line, as hand-written ones do).
BLIND = CORPUS.with_name("corpus_blind")


def _plan(project: Path, source: str, promise: str, corpus: Path = CORPUS) -> None:
    plans = project / "finesse-plans"
    plans.mkdir()
    shutil.copy(corpus / source, plans / "task.md")
    (plans / "task-promise.txt").write_text(promise + "\n")


def _ended(project: Path) -> list[dict[str, object]]:
    history = project / ".claude" / "ralph" / "history"
    return [json.loads(path.read_text()) for path in sorted(history.glob("*.json"))]


COMMAND = ("/finesse:finesse-execute --prompt-file finesse-plans/task.md "
           "--completion-promise-file finesse-plans/task-promise.txt --max-iterations 6")


def test_valid_plan_runs_to_its_promise(run_claude: ClaudeRunner, project: Path) -> None:
    _plan(project, "complete-feature-dry-run.md", "DRY_RUN_DONE")
    prompt = (CORPUS / "complete-feature-dry-run.md").read_text().strip()
    with FakeModel([[text("Phase 1 done.")], [text("All phases verified.\n"
                                                  "<promise>DRY_RUN_DONE</promise>")]]) as model:
        run = run_claude(COMMAND, cwd=project, model=model)
    assert run.returncode == 0, run.describe()
    assert model.call_count == 2, run.describe()
    assert f"<ralph-task>\n{prompt}\n</ralph-task>" in model.all_text(0)
    [loop] = _ended(project)
    assert (loop["outcome"], loop["promise"], loop["forced_past"]) == (
        "success", "DRY_RUN_DONE", [])


def test_invalid_prompt_is_refused_without_a_model_call(
    run_claude: ClaudeRunner, project: Path
) -> None:
    _plan(project, "missing-guardrails-none.md", "PROPERTIES_DONE")
    with FakeModel([[text("should not be asked")]]) as model:
        run = run_claude(COMMAND, cwd=project, model=model)
    assert model.call_count == 0, run.describe()
    assert run.text == (
        "UserPromptSubmit operation blocked by hook:\nfinesse: finesse-plans/task.md fails the "
        "loop-prompt check (guardrails): fix it (`finesse validate finesse-plans/task.md` says "
        f"how) or add --force\n\nOriginal prompt: {COMMAND}"
    )
    assert _ended(project) == []


def test_force_runs_an_invalid_prompt_and_records_it(
    run_claude: ClaudeRunner, project: Path
) -> None:
    _plan(project, "missing-guardrails-none.md", "PROPERTIES_DONE")
    with FakeModel([[text("<promise>PROPERTIES_DONE</promise>")]]) as model:
        run = run_claude(COMMAND + " --force", cwd=project, model=model)
    assert model.call_count == 1, run.describe()
    [loop] = _ended(project)
    assert (loop["outcome"], loop["forced_past"]) == ("success", ["guardrails"])
    report = Path(str(loop["report_path"])).read_text()
    assert "- Started with --force past failing prompt checks: guardrails" in report


def test_model_runs_the_finesse_tools_from_its_bash_tool(
    run_claude: ClaudeRunner, project: Path
) -> None:
    # Claude Code puts the plugin's bin/ on the Bash tool's PATH: the /finesse workflow's
    # `finesse validate` and `ralph status` work there without any install step.
    _plan(project, "golden-template-filled.md", "TODO API COMPLETE", BLIND)
    script = [[bash("finesse validate finesse-plans/task.md --promise-file "
                    "finesse-plans/task-promise.txt --json; ralph status")], [text("checked")]]
    with FakeModel(script) as model:
        run = run_claude("Check the plan.", cwd=project, model=model)
    assert run.returncode == 0, run.describe()
    output = model.last_user_text(1)
    report = json.loads(output[output.index("{"):output.index("No active Ralph loop")])
    assert (report["path"], report["passed"]) == ("finesse-plans/task.md", True)
    assert f"No active Ralph loop in {project}." in output
