"""Gate mode in the real Claude Code CLI: commit on green, one repair on red, revert when
still red, the red streak, and the loop-done channel."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fakeapi import Block, FakeModel, bash, text
from tests.e2e.harness import ClaudeRunner

pytestmark = pytest.mark.e2e


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True,
                          text=True).stdout


def _ended(project: Path) -> dict[str, Any]:
    [path] = (project / ".claude" / "ralph" / "history").glob("*.json")
    loop: dict[str, Any] = json.loads(path.read_text())
    return loop


def _commits(project: Path) -> list[str]:
    return _git(project, "log", "--format=%s").splitlines()


def test_green_iteration_makes_exactly_one_commit(run_claude: ClaudeRunner, project: Path) -> None:
    before = _commits(project)
    script = [[bash("echo hello > ok.txt")], [text("Approach: add ok.txt\nWrote it.")]]
    with FakeModel(script) as model:
        run = run_claude('/ralph-loop "Add ok.txt" --gate "test -f ok.txt" --max-iterations 1',
                         cwd=project, model=model)
    assert run.returncode == 0, run.describe()
    assert model.call_count == 2, run.describe()
    assert _commits(project) == ["ralph: iteration 1: add ok.txt", *before]
    loop = _ended(project)
    assert _git(project, "log", "-1", "--format=%B").strip() == (
        f"ralph: iteration 1: add ok.txt\n\nRalph-Loop: {loop['loop_id']}")
    assert _git(project, "status", "--porcelain", "--", ".", ":(exclude).claude") == ""
    assert loop["outcome"] == "limit"
    assert [(r["gate_action"], r["commit"]) for r in loop["iterations"]] == [
        ("committed", _git(project, "rev-parse", "HEAD").strip())]


def test_failed_repair_is_reverted_and_new_files_are_gone(
    run_claude: ClaudeRunner, project: Path
) -> None:
    before = _commits(project)
    script = [
        [bash("echo broken > broken.txt && mkdir -p newdir && echo x > newdir/new.txt "
              "&& echo changed >> README.md")],
        [text("Approach: break things\nDone for now.")],
        [text("Approach: I could not find the cause.")],
    ]
    with FakeModel(script) as model:
        run = run_claude(
            '/ralph-loop "Work" --gate "test ! -f broken.txt" --max-iterations 2',
            cwd=project, model=model,
        )
    assert run.returncode == 0, run.describe()
    assert model.call_count == 3, run.describe()
    repair = model.last_user_text(2)
    assert "Ralph iteration 2/2" in repair
    assert "Repair: the gate failed after your last iteration." in repair
    assert "`test ! -f broken.txt`: exit code 1" in repair
    assert not (project / "broken.txt").exists()
    assert not (project / "newdir").exists()
    assert (project / "README.md").read_text() == "test project\n"
    assert _commits(project) == before
    loop = _ended(project)
    assert [r["gate_action"] for r in loop["iterations"]] == ["repair", "reverted"]
    assert loop["iterations"][1]["removed"] == ["broken.txt", "newdir/new.txt"]
    assert loop["iterations"][1]["restored"] == ["README.md"]
    assert (loop["gate"]["red_streak"], loop["outcome"]) == (1, "limit")


def test_three_reverted_iterations_end_the_loop_as_failure(
    run_claude: ClaudeRunner, project: Path
) -> None:
    script: list[list[Block]] = []
    for n in range(1, 4):
        script += [[bash(f"echo {n} > broken.txt")], [text(f"Approach: attempt {n}")],
                   [text(f"Approach: repair {n} failed")]]
    with FakeModel(script) as model:
        run = run_claude(
            '/ralph-loop "Work" --gate "test ! -f broken.txt" --max-iterations 8',
            cwd=project, model=model,
        )
    assert run.returncode == 0, run.describe()
    assert model.call_count == 9, run.describe()
    loop = _ended(project)
    assert (loop["outcome"], loop["gate"]["red_streak"], loop["iteration"]) == ("failure", 3, 6)
    assert loop["end_message"] == (
        "Ralph loop failed: a systemic red streak reverted three consecutive iterations "
        "(at iteration 6/8)."
    )
    assert not (project / "broken.txt").exists()


def _write_loop_done(request: dict[str, Any]) -> list[Block]:
    found = re.search(r"write `done` to (\S+) to end the loop", json.dumps(request))
    assert found, "the prompt names the loop-done file"
    return [bash(f"echo done > {found.group(1)}")]


def test_loop_done_file_ends_the_loop_as_success(run_claude: ClaudeRunner, project: Path) -> None:
    with FakeModel([_write_loop_done, [text("Approach: finished\nAll done.")]]) as model:
        run = run_claude('/ralph-loop "Finish" --gate "true" --max-iterations 5',
                         cwd=project, model=model)
    assert run.returncode == 0, run.describe()
    assert model.call_count == 2, run.describe()
    loop = _ended(project)
    assert loop["outcome"] == "success"
    assert (loop["end_message"], loop["verified"]) == (
        "Ralph loop done: the loop-done file at iteration 1/5 with the gate green "
        "(1 command(s)).", True)
    assert not list(project.glob(".ralph-loop-done-*"))


def test_gate_mode_refuses_a_dirty_tree_without_a_model_call(
    run_claude: ClaudeRunner, project: Path
) -> None:
    (project / "scratch.txt").write_text("uncommitted\n")
    with FakeModel([[text("should not be asked")]]) as model:
        run = run_claude('/ralph-loop "Work" --gate "true"', cwd=project, model=model)
    assert model.call_count == 0, run.describe()
    assert run.text is not None and "--allow-dirty" in run.text, run.describe()
