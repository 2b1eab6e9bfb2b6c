"""Judge mode in the real Claude Code CLI with the scripted model: the main thread plays the
orchestrator, `subagent_script` answers the worker and the judge (in order, since every
Agent call here but one sets run_in_background false), and the plugin's hooks do the rest."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fakeapi import Block, FakeModel, bash, message_text, text, tool_use
from tests.e2e.harness import REPO_ROOT, ClaudeRun, ClaudeRunner

pytestmark = pytest.mark.e2e

VERIFY = "grep -q ok out.txt"
START = (f'/ralph-loop "Write ok into out.txt" --judge --criteria "out.txt says ok" '
         f'--verify "{VERIFY}"')
AGENT_TOOLS = ["--allowedTools", "Agent"]


def agent(kind: str, background: bool = False) -> Block:
    call: dict[str, Any] = {"description": f"the {kind}", "prompt": f"Do your {kind} job.",
                            "subagent_type": f"finesse:ralph-{kind}"}
    if not background:
        call["run_in_background"] = False
    return tool_use("Agent", call)


def worker_json(status: str = "pass", summary: str = "Wrote out.txt.") -> Block:
    return text(json.dumps({
        "summary": summary, "changes": ["out.txt: written"],
        "verifier_runs": [{"cmd": VERIFY, "status": status, "output_excerpt": ""}],
        "remaining_known_failures": [], "next_suggestions": []}))


def verdict(passed: bool, focus: str = "Write the word ok into out.txt.", **extra: Any) -> Block:
    body = {"pass": passed, "score": 90 if passed else 20,
            "blocking_issues": [] if passed else ["out.txt does not say ok"],
            "non_blocking_issues": [], "required_actions": [] if passed else ["write ok"],
            "evidence": ["grep -q ok out.txt"], "next_iteration_focus": focus, **extra}
    return text("```json\n" + json.dumps(body) + "\n```")


def history(project: Path) -> dict[str, Any]:
    [path] = sorted((project / ".claude" / "ralph" / "history").glob("*.json"))
    loop = json.loads(path.read_text())
    assert isinstance(loop, dict)
    return loop


def first_block(body: dict[str, Any]) -> str:
    """The first block of a request's first user message (SubagentStart's context)."""
    return message_text(body["messages"][0]["content"])[0]


def ok(run: ClaudeRun) -> None:
    assert run.returncode == 0, run.describe()


def test_a_failed_judge_then_a_fresh_worker_and_a_pass(
        run_claude: ClaudeRunner, project: Path) -> None:
    main = [[agent("worker")], [agent("judge")], [text("The judge failed attempt 1.")],
            [agent("worker")], [agent("judge")], [text("The judge passed.")]]
    subagents = [[bash("echo wrong > out.txt")], [worker_json("fail")],
                 [verdict(False, "Write the word ok, not wrong, into out.txt.")],
                 [bash("echo ok > out.txt")], [worker_json()], [verdict(True)]]
    with FakeModel(main, subagent_script=subagents) as model:
        run = run_claude(START, cwd=project, model=model, extra_args=AGENT_TOOLS)
    ok(run)
    assert model.call_count == 6, run.describe()
    loop = history(project)
    assert (loop["outcome"], loop["verified"]) == ("success", True)
    workers = [attempt["worker_id"] for attempt in loop["judge"]["attempts"]]
    assert len(workers) == 2 and workers[0] != workers[1] and all(workers)
    # The plugin's prompt is the first block of each subagent's first message.
    second_worker = model.subagent_calls[3]
    assert first_block(second_worker).startswith(
        "<system-reminder>\nSubagentStart hook additional context: You are the worker of "
        "attempt 2/100")
    assert ("## Next attempt focus\nWrite the word ok, not wrong, into out.txt."
            in first_block(second_worker))
    assert "Do your worker job." in message_text(second_worker["messages"][0]["content"])[-1]
    judge_brief = first_block(model.subagent_calls[2])
    assert "- `grep -q ok out.txt`: red (exit 1)" in judge_brief
    # The main thread was told the next step at its stop.
    assert "Judge mode, attempt 2/100: attempt 1 ended: failed." in model.last_user_text(3)


def test_a_worker_claiming_done_on_a_red_verifier_is_not_a_success(
        run_claude: ClaudeRunner, project: Path) -> None:
    main = [[agent("worker")], [agent("judge")], [text("All done!\n<promise>RALPH_LOOP_STOP"
                                                       "</promise>")]]
    subagents = [[worker_json("pass")], [verdict(True)]]
    with FakeModel(main, subagent_script=subagents) as model:
        run = run_claude(START + " --max-iterations 1", cwd=project, model=model,
                         extra_args=AGENT_TOOLS)
    ok(run)
    loop = history(project)
    [attempt] = loop["judge"]["attempts"]
    assert (loop["outcome"], attempt["result"], attempt["note"]) == (
        "limit", "failed", "the judge passed it, but the plugin's verifiers are red: "
        f"`{VERIFY}`")
    assert loop["blocker"].startswith("Final status (judge mode, 1 attempt(s)):\n"
                                      "- Passes: no verifier is green\n"
                                      f"- Fails: `{VERIFY}` exit 2")


@pytest.mark.parametrize("judge_tools", ["shipped", "given Write"])
def test_a_judge_that_tries_to_write_is_refused(
        run_claude: ClaudeRunner, project: Path, tmp_path: Path, judge_tools: str) -> None:
    plugin = REPO_ROOT
    if judge_tools == "given Write":  # a tampered definition: the hook still refuses it
        plugin = tmp_path / "plugin"
        for name in (".claude-plugin", "agents", "commands", "hooks", "scripts", "skills", "bin"):
            shutil.copytree(REPO_ROOT / name, plugin / name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        judge = plugin / "agents" / "ralph-judge.md"
        judge.write_text(judge.read_text().replace("tools: Read, Grep, Glob",
                                                   "tools: Read, Grep, Glob, Write"))
    target = str(project / "judged.txt")
    main = [[agent("worker")], [agent("judge")], [text("Judged.")]]
    subagents = [[bash("echo ok > out.txt")], [worker_json()],
                 [tool_use("Write", {"file_path": target, "content": "fixed\n"})],
                 [verdict(True)]]
    with FakeModel(main, subagent_script=subagents) as model:
        run = run_claude(START, cwd=project, model=model, plugin_dir=plugin,
                         extra_args=AGENT_TOOLS, permission_mode="acceptEdits")
    ok(run)
    assert not Path(target).exists()
    refused = "\n".join(message_text(model.subagent_calls[3]["messages"][-1]["content"]))
    if judge_tools == "shipped":
        assert "No such tool available: Write" in refused
    else:
        assert ("PreToolUse:Write hook error: judge mode: the judge is read-only: Write is not "
                "allowed; read and search, then give your verdict") in refused
    assert history(project)["outcome"] == "success"


def test_a_judge_given_bash_that_tries_to_delete_is_refused(
        run_claude: ClaudeRunner, project: Path, tmp_path: Path) -> None:
    # The PreToolUse matcher names the guard's tools; Bash is one of them.
    plugin = tmp_path / "plugin"
    for name in (".claude-plugin", "agents", "commands", "hooks", "scripts", "skills", "bin"):
        shutil.copytree(REPO_ROOT / name, plugin / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    judge = plugin / "agents" / "ralph-judge.md"
    judge.write_text(judge.read_text().replace("tools: Read, Grep, Glob",
                                               "tools: Read, Grep, Glob, Bash"))
    main = [[agent("worker")], [agent("judge")], [text("Judged.")]]
    subagents = [[bash("echo ok > out.txt")], [worker_json()],
                 [bash("rm out.txt")], [verdict(True)]]
    with FakeModel(main, subagent_script=subagents) as model:
        run = run_claude(START, cwd=project, model=model, plugin_dir=plugin,
                         extra_args=AGENT_TOOLS, permission_mode="acceptEdits")
    ok(run)
    assert (project / "out.txt").read_text() == "ok\n"
    refused = "\n".join(message_text(model.subagent_calls[3]["messages"][-1]["content"]))
    assert ("PreToolUse:Bash hook error: judge mode: the judge is read-only and this command "
            "is not provably read-only") in refused


def test_the_orchestrator_that_edits_a_file_itself_is_refused(
        run_claude: ClaudeRunner, project: Path) -> None:
    target = project / "out.txt"
    main = [[tool_use("Write", {"file_path": str(target), "content": "ok\n"})],
            [text("I was told to delegate.")], [text("Still talking.")]]
    with FakeModel(main) as model:
        run = run_claude(START, cwd=project, model=model, extra_args=AGENT_TOOLS,
                         permission_mode="acceptEdits")
    ok(run)
    assert not target.exists()
    assert ("PreToolUse:Write hook error: judge mode: the orchestrator does not do the work: "
            "delegate this to the ralph-worker subagent") in model.last_user_text(1)
    assert history(project)["outcome"] == "quiesced"


def test_a_judge_pass_while_a_protected_path_changed_is_not_a_success(
        run_claude: ClaudeRunner, project: Path) -> None:
    from tests.e2e.harness import GIT_IDENTITY, base_env

    billing = project / "src" / "billing"
    billing.mkdir(parents=True)
    (billing / "rates.py").write_text("RATE = 1\n")
    import subprocess

    for argv in (["add", "-A"], ["commit", "-qm", "billing"]):
        subprocess.run(["git", *argv], cwd=project, check=True, capture_output=True,
                       env={**base_env(), **GIT_IDENTITY})
    main = [[agent("worker")], [agent("judge")], [text("Judged.")]]
    subagents = [[bash("echo ok > out.txt && echo 'RATE = 2' > src/billing/rates.py")],
                 [worker_json()], [verdict(True)]]
    with FakeModel(main, subagent_script=subagents) as model:
        run = run_claude(START + " --protect src/billing/ --max-iterations 1", cwd=project,
                         model=model, extra_args=AGENT_TOOLS)
    ok(run)
    loop = history(project)
    [attempt] = loop["judge"]["attempts"]
    assert (loop["outcome"], attempt["protect_changed"], attempt["note"]) == (
        "limit", ["src/billing/rates.py"],
        "the judge passed it, but protected paths changed: src/billing/rates.py")


def test_invalid_judge_json_twice_then_valid(run_claude: ClaudeRunner, project: Path) -> None:
    main = [[agent("worker")], [agent("judge")], [text("Judged.")]]
    subagents = [[bash("echo ok > out.txt")], [worker_json()],
                 [text("It looks fine to me: pass.")],
                 [verdict(True, confidence=0.9)], [verdict(True)]]
    with FakeModel(main, subagent_script=subagents) as model:
        run = run_claude(START, cwd=project, model=model, extra_args=AGENT_TOOLS)
    ok(run)
    asked = ["\n".join(message_text(call["messages"][-1]["content"]))
             for call in model.subagent_calls[3:5]]
    assert "no JSON found" in asked[0] and "try 1 of 2" in asked[0]
    assert "confidence: Extra inputs are not permitted" in asked[1] and "try 2 of 2" in asked[1]
    loop = history(project)
    [attempt] = loop["judge"]["attempts"]
    assert (loop["outcome"], len(attempt["judge_problems"])) == ("success", 2)


def test_the_budget_exhausted_ends_with_the_final_status(
        run_claude: ClaudeRunner, project: Path) -> None:
    main = [[agent("worker")], [agent("judge")], [text("Failed again.")]]
    subagents = [[bash("echo nope > out.txt")], [worker_json("fail")], [verdict(False)]]
    with FakeModel(main, subagent_script=subagents) as model:
        run = run_claude(START + " --max-iterations 1", cwd=project, model=model,
                         extra_args=AGENT_TOOLS)
    ok(run)
    loop = history(project)
    status = ("Final status (judge mode, 1 attempt(s)):\n- Passes: no verifier is green\n"
              f"- Fails: `{VERIFY}` exit 1; out.txt does not say ok\n"
              "- Smallest next actions: write ok\n- Last judge (attempt 1): pass false, "
              "score 20")
    assert (loop["outcome"], loop["blocker"]) == ("limit", status)
    assert status in Path(loop["report_path"]).read_text()
    # Subagents' spend is counted: the worker's and the judge's own transcripts were read.
    [attempt] = loop["judge"]["attempts"]
    worker_out = sum(usage["output"] for usage in attempt["worker_usage"])
    judge_out = sum(usage["output"] for usage in attempt["judge_usage"])
    assert worker_out > 0 and judge_out > 0
    [record] = loop["iterations"]
    assert sum(usage["output"] for usage in record["usage"]) > worker_out + judge_out


def slow(reply: list[Block], seconds: float) -> Callable[[dict[str, Any]], list[Block]]:
    def answer(body: dict[str, Any]) -> list[Block]:
        time.sleep(seconds)
        return reply
    return answer


def test_a_worker_still_running_in_the_background_at_the_main_stop(
        run_claude: ClaudeRunner, project: Path) -> None:
    main = [[agent("worker", background=True)], [text("Spawned the worker.")],
            [text("Waiting for it.")], [agent("judge")], [text("Judged.")]]
    subagents = [slow([bash("echo ok > out.txt")], 4), [worker_json()], [verdict(True)]]
    with FakeModel(main, subagent_script=subagents) as model:
        run = run_claude(START, cwd=project, model=model, extra_args=AGENT_TOOLS)
    ok(run)
    assert ("Judge mode: the worker " in model.last_user_text(2)
            and "is still running in the background" in model.last_user_text(2))
    assert "<task-notification>" in model.all_text(3)
    loop = history(project)
    assert (loop["outcome"], len(loop["judge"]["attempts"])) == ("success", 1)


def test_the_orchestrator_agent_loads_on_a_cheap_model(
        run_claude: ClaudeRunner, project: Path) -> None:
    target = project / "out.txt"
    main = [[tool_use("Write", {"file_path": str(target), "content": "ok\n"})],
            [text("Delegating.")], [text("Nothing more.")]]
    with FakeModel(main) as model:
        run = run_claude(START, cwd=project, model=model, model_name=None,
                         permission_mode="acceptEdits",
                         extra_args=["--agent", "finesse:ralph-orchestrator", *AGENT_TOOLS])
    ok(run)
    first = model.calls[0]
    assert first["model"].startswith("claude-haiku")
    system = json.dumps(first["system"])
    assert "You are the Agent Loop Orchestrator" in system
    assert "You are Claude Code" not in system
    # Seed 004's `Task, Read, Write, Bash, Glob, Grep, TodoWrite, Edit`: Task is the Agent
    # tool; Glob, Grep and TodoWrite are not offered to a main thread in 2.1.328.
    tools = {tool["name"] for tool in first["tools"]} - {"DeferredToolPlaceholder"}
    assert tools == {"Agent", "Read", "Write", "Edit", "Bash"}
    # Its main thread's hook input has an agent_type but no agent_id: still the orchestrator.
    assert "PreToolUse:Write hook error: judge mode: the orchestrator" in model.last_user_text(1)
    assert not target.exists()
