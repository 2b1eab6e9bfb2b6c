"""actionlint, with shellcheck on every `run:` script, finds nothing in the workflows `ralph ci`
writes: the default one, a monorepo project's, one with every trigger and the subscription
credential, and one whose loop commands carry quotes, `$` and backticks. Both tools come from
the test extras (PyPI wheels that ship the binaries); a workflow broken on purpose shows
that they do look."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from finesse.headless.ci.plan import CiSettings, Trigger, load_ci_plan
from finesse.headless.ci.render import render
from tests.helpers.graphs import workflow, write_plan

TOOLS = Path(sys.executable).parent
THREE = (workflow("alpha"), workflow("beta"), workflow("gamma", ["alpha", "beta"]))
FINESSE = "git+https://github.com/example/finesse@abc123"


def lint(top: Path, text: str) -> str:
    """actionlint's findings on `text` as `top`'s workflow, one per line ("" for none)."""
    path = top / ".github" / "workflows" / "ralph-demo.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    for tool in ("actionlint", "shellcheck"):
        assert (TOOLS / tool).is_file(), f"{tool} is missing: pip install -e '.[test]'"
    done = subprocess.run([str(TOOLS / "actionlint"), "-shellcheck", str(TOOLS / "shellcheck"),
                           "-pyflakes=", "-no-color", "-oneline", str(path)], cwd=top,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout + done.stderr


@pytest.mark.parametrize("settings", [
    CiSettings(finesse=FINESSE),
    CiSettings(finesse=FINESSE, auth="oauth", jobs=5, runs_on="self-hosted",
               triggers=(Trigger("label", "ralph"), Trigger("push", "main")),
               run_options=("--model", "claude-opus-4-6", "--claude-args",
                            "--permission-mode acceptEdits", "--wait-on-limit")),
    CiSettings(finesse=FINESSE, iteration_timeout=90, extra=(
        "--verify", "grep -q \"it's\" alpha/done.txt && echo `date` $HOME",
        "--gate", "make check || { echo 'no'; exit 1; }", "--effort", "high")),
], ids=["default", "every-option", "quotes-in-commands"])
def test_actionlint_finds_nothing(git_repo: Path, settings: CiSettings) -> None:
    write_plan(git_repo, "demo", THREE)
    text = render(load_ci_plan(git_repo, Path("finesse-plans/demo"), settings))
    assert lint(git_repo, text) == ""


def test_actionlint_finds_nothing_in_a_monorepo_projects_workflow(monorepo: Path) -> None:
    write_plan(monorepo, "demo", THREE)
    text = render(load_ci_plan(monorepo, Path("finesse-plans/demo"),
                               CiSettings(finesse=FINESSE)))
    assert lint(monorepo.parent, text) == ""


def test_actionlint_and_shellcheck_do_find_a_broken_workflow(git_repo: Path) -> None:
    write_plan(git_repo, "demo", THREE)
    text = render(load_ci_plan(git_repo, Path("finesse-plans/demo"),
                               CiSettings(finesse=FINESSE)))
    unquoted = text.replace('--begin-task "$TASK"', "--begin-task $TASK", 1)
    assert "SC2086" in lint(git_repo, unquoted)
    misspelt = text.replace("needs.plan.outputs.commit", "needs.plann.outputs.commit", 1)
    assert 'property "plann" is not defined' in lint(git_repo, misspelt)
