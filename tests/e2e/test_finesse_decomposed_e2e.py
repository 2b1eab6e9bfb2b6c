"""A decomposed plan in the real CLI: every command `finesse new` writes into
execution-graph.md starts its sub-workflow's loop through /finesse:finesse-execute, and the
validation agents the /finesse skill runs are the plugin's read-only agents."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from finesse.authoring.workflows.folder import load_execution_graph
from tests.e2e.fakeapi import FakeModel, text, tool_use
from tests.e2e.harness import REPO_ROOT, ClaudeRunner

pytestmark = pytest.mark.e2e

SPEC = REPO_ROOT / "tests" / "unit" / "authoring" / "specs" / "todo-api.yaml"
SESSION = "build-todo-api-with-auth"


def finesse(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO_ROOT / "bin" / "finesse"), *args],
                          cwd=project, capture_output=True, text=True, timeout=120)


def test_every_command_of_the_execution_graph_runs_its_loop_to_its_promise(
        run_claude: ClaudeRunner, project: Path) -> None:
    written = finesse(project, "new", str(SPEC), "--project", str(project))
    assert written.returncode == 0, written.stderr
    folder = project / "finesse-plans" / SESSION
    graph = load_execution_graph(folder)
    commands = [(w, w.command) for wave in graph.waves for w in wave]
    assert [w.name for w, _ in commands] == ["auth-endpoints", "todo-store", "todo-routes"]
    # The commands in the graph file are the ones finesse new printed.
    assert [c for _, c in commands] == [line.strip() for line in written.stdout.splitlines()
                                        if line.startswith("  /finesse:finesse-execute")]
    history = project / ".claude" / "ralph" / "history"
    for workflow, command in commands:
        promise = workflow.promise.read_text().strip()
        prompt = workflow.prompt.read_text().strip()
        with FakeModel([[text(f"All phases verified.\n<promise>{promise}</promise>")]]) as model:
            run = run_claude(command, cwd=project, model=model)
        assert run.returncode == 0, run.describe()
        assert model.call_count == 1, run.describe()
        assert f"<ralph-task>\n{prompt}\n</ralph-task>" in model.all_text(0)
        ended = [json.loads(p.read_text()) for p in sorted(history.glob("*.json"))]
        loop = next(e for e in ended if e["prompt_file"].endswith(
            f"wave-{workflow.wave}/{workflow.name}/prompt.md"))
        assert (loop["outcome"], loop["promise"], loop["max_iterations"], loop["forced_past"]) \
            == ("success", promise, workflow.max_iterations, [])
    assert len(list(history.glob("*.json"))) == 3


@pytest.mark.parametrize("agent", ["finesse-criteria-review", "finesse-scope-review"])
def test_a_validation_agent_is_the_plugins_read_only_agent_and_returns_its_verdicts(
        run_claude: ClaudeRunner, project: Path, agent: str) -> None:
    verdict = {"agent": agent, "verdicts": {"1": "pass"}, "notes": "checked"}
    call = tool_use("Agent", {"description": "review the prompt",
                              "prompt": "Review finesse-plans/x.md and finesse-plans/x-promise.txt",
                              "subagent_type": f"finesse:{agent}",
                              "run_in_background": False})
    with FakeModel([[call], [text("reviewed")]],
                   subagent_script=[[text(json.dumps(verdict))]]) as model:
        run = run_claude("review", cwd=project, model=model,
                         extra_args=["--allowedTools", "Agent"])
    assert run.returncode == 0, run.describe()
    [sub] = model.subagent_calls
    tools = sorted(tool["name"] for tool in sub.get("tools", []))
    assert tools == ["Glob", "Grep", "Read"]
    system = json.dumps(sub.get("system"))
    body = (REPO_ROOT / "agents" / f"{agent}.md").read_text().split("---\n", 2)[2]
    assert body.strip().split("\n")[0][:60] in system
    assert json.dumps(verdict) in model.last_user_text(1)
