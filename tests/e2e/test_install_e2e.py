"""Installing the plugin as a user does, and its first-run environment build, in the real CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.fakeapi import FakeModel, text
from tests.e2e.harness import REPO_ROOT, ClaudeRunner, claude_env

pytestmark = pytest.mark.e2e


def _published_copy(destination: Path) -> Path:
    """The repository as a fresh clone has it: tracked and unignored files only."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO_ROOT, check=True, capture_output=True,
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO_ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def _loop_outcomes(project: Path) -> list[tuple[str, int]]:
    history = project / ".claude" / "ralph" / "history"
    # In start order: two loops started within one second have ids that sort by session.
    loops = sorted((json.loads(path.read_text()) for path in history.glob("*.json")),
                   key=lambda loop: loop["started_at"])
    return [(loop["outcome"], loop["iteration"]) for loop in loops]


def test_loop_runs_after_marketplace_add_and_install(
    run_claude: ClaudeRunner, claude_bin: Path, claude_home: Path, project: Path,
    tmp_path: Path,
) -> None:
    checkout = _published_copy(tmp_path / "finesse-checkout")
    with FakeModel([[text("first")], [text("<promise>DONE</promise>")]]) as model:
        env = claude_env(home=claude_home, base_url=model.base_url)
        for step in (["plugin", "marketplace", "add", str(checkout)],
                     ["plugin", "install", "finesse@finesse-marketplace"]):
            done = subprocess.run([str(claude_bin), *step], cwd=project, env=env,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, (step, done.stdout, done.stderr)
        run = run_claude('/ralph-loop "Installed" --completion-promise DONE', cwd=project,
                         model=model, plugin_dir=None)
    assert run.returncode == 0, run.describe()
    assert model.call_count == 2, run.describe()
    assert _loop_outcomes(project) == [("success", 2)]


@pytest.mark.slow
def test_first_loop_builds_the_plugin_environment_once(
    run_claude: ClaudeRunner, claude_home: Path, project: Path
) -> None:
    # No FINESSE_RUNTIME=inherit: the hooks must build and use their own virtualenv, in the
    # plugin data folder Claude Code gives them, from PyPI.
    real_runtime = {"FINESSE_RUNTIME": "build"}
    with FakeModel([[text("one")], [text("two")]]) as model:
        first = run_claude('/ralph-loop "Build me" --max-iterations 2 --quiesce-after 5',
                           cwd=project, model=model, env=real_runtime, timeout=600)
    assert first.returncode == 0, first.describe()
    assert model.call_count == 2, first.describe()
    markers = list((claude_home / ".claude" / "plugins" / "data").glob(
        "*/venv-*/.finesse-complete"))
    assert len(markers) == 1, sorted((claude_home / ".claude").rglob("venv-*"))
    built_at = markers[0].stat().st_mtime_ns

    with FakeModel([[text("<promise>RALPH_LOOP_STOP</promise>")]]) as model:
        second = run_claude('/ralph-loop "Again"', cwd=project, model=model, env=real_runtime)
    assert second.returncode == 0, second.describe()
    assert model.call_count == 1, second.describe()
    assert markers[0].stat().st_mtime_ns == built_at
    assert _loop_outcomes(project) == [("limit", 2), ("success", 1)]
