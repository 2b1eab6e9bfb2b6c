"""`ralph run` driving the real Claude Code CLI (2.1.328) against the scripted model: each
iteration a fresh `claude -p` session, a capped run resumed, Ctrl-C mid-iteration, a
two-wave decomposed plan in parallel worktrees, a conflicting wave, effort and usage limits
in print mode."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fakeapi import FakeModel, bash, rate_limited, text, usage
from tests.e2e.harness import REPO_ROOT
from tests.e2e.headless import (
    bash_then_promise,
    by_task,
    conversation,
    history,
    ralph_args,
    ralph_env,
    run_ralph,
)
from tests.e2e.interactive import GATEWAY_TOKEN
from tests.helpers.graphs import PROMISE, workflow, write_plan
from tests.helpers.repo import branches, git

pytestmark = pytest.mark.e2e


def only_loop(project: Path) -> dict[str, Any]:
    (ended,) = history(project)
    assert list((project / ".claude" / "ralph" / "loops").glob("*.json")) == []
    return ended


def first_calls(model: FakeModel) -> list[int]:
    """The main calls that open a session: their conversation is the one prompt."""
    return [index for index, body in enumerate(model.calls) if len(body["messages"]) == 1]


def test_three_iterations_each_a_fresh_session_end_verified_with_exit_0(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    script = [
        [text("Starting."), bash("echo 1 > step1.txt"), usage(100, 20, 30, 400)],
        [text("Step one is done.\nLearning: each step is a file"), usage(200, 40, 0, 800)],
        [bash("echo 2 > step2.txt")], [text("Step two is done.")],
        [bash("echo 3 > step3.txt")], [text("All three exist.\n<promise>DONE</promise>")],
    ]
    with FakeModel(script) as model:
        # The plugin is loaded in every iteration's session: its hooks must stay out of it.
        args = ralph_args(claude_bin, "run", "Create step1.txt, step2.txt and step3.txt",
                          "--max-iterations", "5", "--completion-promise", "DONE",
                          "--verify", "test -f step3.txt")
        args[-1] += f" --plugin-dir {REPO_ROOT}"
        done = run_ralph(args, cwd=project, env=ralph_env(claude_home, model.base_url))
    assert done.returncode == 0, done.describe()
    assert model.call_count == 6
    assert first_calls(model) == [0, 2, 4]
    header = "Ralph iteration {}/5: output <promise>DONE</promise> only when it is completely true"
    for iteration, index in enumerate((0, 2, 4), start=1):
        said = model.all_text(index)
        assert header.format(iteration) in said
        assert "Create step1.txt, step2.txt and step3.txt" in said
        assert ("Step one is done" in said) is False  # no conversation carries over
    assert "Previous learnings: each step is a file" in model.all_text(2)
    loop = only_loop(project)
    assert (loop["outcome"], loop["verified"]) == ("success", True)
    assert [i["result"] for i in loop["iterations"]] == ["continue", "continue", "success"]
    assert [i["tool_calls"] for i in loop["iterations"]] == [1, 1, 1]
    # An iteration's usage is its session's, summed over its requests (the result event).
    assert loop["iterations"][0]["usage"] == [{
        "model": "claude-sonnet-4-5", "input": 300, "output": 60, "cache_creation": 30,
        "cache_read": 1200}]
    # Each iteration is its own session (--session-id), none of them the loop's own id.
    sessions = [r.headers["x-claude-code-session-id"] for r in model.requests if r.kind == "main"]
    assert sessions[0] == sessions[1] != sessions[2] == sessions[3] != sessions[4] == sessions[5]
    assert len(set(sessions)) == 3 and loop["session_id"] not in sessions
    assert re.search(r"iteration 3/5: success · \d+:\d\d · 1 tool call\(s\) · [\d.k]+ tokens · "
                     r"verification green", done.stdout), done.stdout
    assert (project / "step3.txt").read_text() == "3\n"


def test_a_capped_run_exits_3_and_ralph_resume_finishes_it(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    script = [[text("First try.")], [text("Second try, different.")],
              [bash("echo done > out.txt")], [text("Now it is there.\n<promise>DONE</promise>")]]
    with FakeModel(script) as model:
        env = ralph_env(claude_home, model.base_url)
        capped = run_ralph(ralph_args(claude_bin, "run", "Write out.txt", "--max-iterations", "2",
                                      "--completion-promise", "DONE", "--verify",
                                      "test -f out.txt", "--quiesce-after", "5"),
                           cwd=project, env=env)
        assert capped.returncode == 3, capped.describe()
        (stopped,) = history(project)
        assert (stopped["outcome"], stopped["iteration"]) == ("limit", 2)
        assert f"Options: ralph resume --session {stopped['session_id']} --max-iterations 4" \
            in capped.stdout
        resumed = run_ralph([sys.executable, str(REPO_ROOT / "scripts" / "ralph.py"), "resume"],
                            cwd=project, env=env)
    assert resumed.returncode == 0, resumed.describe()
    assert first_calls(model) == [0, 1, 2]
    loop = only_loop(project)
    assert (loop["outcome"], loop["verified"], len(loop["iterations"])) == ("success", True, 3)
    assert "Ralph iteration 3/4" in model.all_text(2)


def test_ctrl_c_mid_iteration_cancels_the_loop_with_its_report_and_ends_the_child(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    marker = project / "started"
    with FakeModel([[text("Working."), bash("touch started; sleep 73")]]) as model:
        process = subprocess.Popen(
            ralph_args(claude_bin, "run", "Do a long thing"), cwd=project,
            env=ralph_env(claude_home, model.base_url), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marker.exists(), process.communicate(timeout=30)
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C sends: the foreground group
        out, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (130, ""), out
    loop = only_loop(project)
    assert (loop["outcome"], loop["ended_by"]) == ("cancelled", "SIGINT (Ctrl-C)")
    assert Path(loop["report_path"]).is_file()
    assert "Ralph loop cancelled by SIGINT (Ctrl-C) at iteration 1/8." in out
    pid = int(re.search(r"claude pid (\d+)", out).group(1))  # type: ignore[union-attr]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    running = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "sleep 73" not in running


def plan_three(project: Path) -> None:
    write_plan(project, "demo", [workflow("alpha"), workflow("beta"),
                                 workflow("gamma", ["alpha", "beta"])])


def test_a_two_wave_graph_runs_wave_one_in_parallel_worktrees_then_wave_two_on_the_merge(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    plan_three(project)
    answer = by_task({
        "the alpha part": bash_then_promise("mkdir -p alpha && echo a > alpha/done.txt",
                                            PROMISE),
        "the beta part": bash_then_promise("mkdir -p beta && echo b > beta/done.txt", PROMISE),
        "the gamma part": bash_then_promise(
            "mkdir -p gamma && cat alpha/done.txt beta/done.txt > gamma/done.txt", PROMISE)})
    with FakeModel([answer] * 6) as model:
        began = time.monotonic()
        done = run_ralph(ralph_args(claude_bin, "run", "--graph", "finesse-plans/demo",
                                    "--jobs", "2"),
                         cwd=project, env=ralph_env(claude_home, model.base_url))
        took = time.monotonic() - began
    print(f"two-wave graph e2e: {took:.1f} s wall time")
    assert done.returncode == 0, done.describe()
    assert model.call_count == 6
    where = {name: {re.search(r"Primary working directory: (\S+)", conversation(body))
                    .group(1)  # type: ignore[union-attr]
                    for body in model.calls if f"the {name} part" in conversation(body)}
             for name in ("alpha", "beta", "gamma")}
    assert where == {name: {str(project / ".ralph-worktrees" / "demo" / name)}
                     for name in ("alpha", "beta", "gamma")}
    assert (project / "gamma" / "done.txt").read_text() == "a\nb\n"  # it saw both merged
    log = git(project, "log", "--first-parent", "--format=%s").splitlines()
    assert log[:3] == ["ralph: merge gamma (wave 2 of demo)",
                       "ralph: merge beta (wave 1 of demo)", "ralph: merge alpha (wave 1 of demo)"]
    assert not (project / ".ralph-worktrees").exists()
    assert re.search(r"wave 1: 2 sub-workflow\(s\) to run \(alpha, beta\)\n(.*\n)*"
                     r"merged ralph/demo/alpha into main .*\n(.*\n)*wave 2:", done.stdout)


def test_a_conflicting_wave_stops_before_wave_two(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    plan_three(project)
    answer = by_task({
        "the alpha part": bash_then_promise(
            "mkdir -p alpha && echo a > alpha/done.txt && echo alpha > shared.txt", PROMISE),
        "the beta part": bash_then_promise(
            "mkdir -p beta && echo b > beta/done.txt && echo beta > shared.txt", PROMISE),
        "the gamma part": bash_then_promise("echo never > gamma.txt", PROMISE)})
    with FakeModel([answer] * 6) as model:
        before = branches(project)["main"]
        done = run_ralph(ralph_args(claude_bin, "run", "--graph", "finesse-plans/demo"),
                         cwd=project, env=ralph_env(claude_home, model.base_url))
    assert done.returncode == 1, done.describe()
    assert not any("the gamma part" in conversation(body) for body in model.calls)
    assert "stop: merging ralph/demo/beta into main failed (conflicts in shared.txt)" in done.stdout
    assert set(branches(project)) == {"main", "ralph/demo/alpha", "ralph/demo/beta"}
    assert git(project, "rev-parse", "HEAD^1") == before  # alpha's merge only
    assert (project / ".ralph-worktrees" / "demo" / "beta" / "shared.txt").read_text() == "beta\n"
    report = next((project / ".claude" / "ralph" / "reports").glob("graph-*.md")).read_text()
    assert "- Conflicting files: `shared.txt`" in report
    assert "| 2 | gamma | not run | 0 | 0 | `ralph/demo/gamma` | - |" in report


def test_effort_reaches_every_iteration_in_print_mode(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    # --effort is sent as output_config.effort by an effort model; the CLI's own
    # CLAUDE_CODE_EFFORT_LEVEL would beat the flag, so ralph run leaves it out of the child.
    script = [[text("one")], [text("<promise>DONE</promise>")]]
    with FakeModel(script) as model:
        done = run_ralph(ralph_args(claude_bin, "run", "Go", "--completion-promise", "DONE",
                                    "--effort", "low", "--quiesce-after", "5",
                                    model="claude-opus-4-6"),
                         cwd=project, env=ralph_env(claude_home, model.base_url,
                                                    {"CLAUDE_CODE_EFFORT_LEVEL": "max"}))
    assert done.returncode == 1, done.describe()  # an unverified success
    assert [body.get("output_config") for body in model.calls] == [{"effort": "low"}] * 2
    assert "(effort: low)" in model.all_text(0)
    with FakeModel([[text("<promise>DONE</promise>")]]) as model:
        run_ralph(ralph_args(claude_bin, "run", "Go", "--completion-promise", "DONE",
                             "--effort", "low"),
                  cwd=project, env=ralph_env(claude_home, model.base_url))
    assert "output_config" not in model.calls[0]  # claude-sonnet-4-5 takes no effort


def rejected(reset: int) -> dict[str, str]:
    return {"anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": str(reset),
            "anthropic-ratelimit-unified-representative-claim": "five_hour",
            "anthropic-ratelimit-unified-5h-utilization": "1.0",
            "anthropic-ratelimit-unified-5h-reset": str(reset),
            "anthropic-ratelimit-unified-5h-status": "rejected"}


def gateway_env(home: Path, model: FakeModel) -> dict[str, str]:
    """Plan limits apply (a gateway token), and no retries of a 429 inside the CLI."""
    env = ralph_env(home, model.base_url, {"ANTHROPIC_AUTH_TOKEN": GATEWAY_TOKEN,
                                           "CLAUDE_CODE_MAX_RETRIES": "0"})
    del env["ANTHROPIC_API_KEY"]
    return env


def test_a_usage_limit_in_print_mode_is_a_resumable_stop_with_the_reset_time(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    reset = int(time.time()) + 3 * 3600
    with FakeModel([[text("never")]], errors=[rate_limited(rejected(reset))]) as model:
        done = run_ralph(ralph_args(claude_bin, "run", "Go", "--verify", "true"), cwd=project,
                         env=gateway_env(claude_home, model))
    assert done.returncode == 3, done.describe()
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(reset))
    loop = only_loop(project)
    assert loop["outcome"] == "quota"
    assert loop["end_message"] == (
        f"Ralph loop stopped at iteration 1/8: claude -p hit a usage limit (five_hour); it "
        f"resets at {when} UTC. Resume after that with `ralph resume`, or run with "
        "--wait-on-limit.")
    assert loop["iterations"][0]["reply_excerpt"].startswith(
        "(a usage limit (five_hour): You've hit your 5-hour limit")
    assert f"resets at {when} UTC" in Path(loop["report_path"]).read_text()


def test_wait_on_limit_waits_for_the_reset_then_goes_on(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    reset = int(time.time()) + 2
    with FakeModel([[text("<promise>DONE</promise>")]],
                   errors=[rate_limited(rejected(reset))]) as model:
        done = run_ralph(ralph_args(claude_bin, "run", "Go", "--completion-promise", "DONE",
                                    "--verify", "true", "--wait-on-limit"),
                         cwd=project, env=gateway_env(claude_home, model))
    assert done.returncode == 0, done.describe()
    assert "(--wait-on-limit)" in done.stdout and time.time() >= reset
    loop = only_loop(project)
    assert [i["result"] for i in loop["iterations"]] == ["continue", "success"]


def test_a_429_with_an_api_key_stops_with_no_reset_time_to_report(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    # With an API key the CLI ignores the plan-limit headers: no rate_limit_event, no time.
    with FakeModel([[text("never")]], errors=[rate_limited(rejected(int(time.time()) + 60))]
                   ) as model:
        done = run_ralph(ralph_args(claude_bin, "run", "Go"), cwd=project,
                         env=ralph_env(claude_home, model.base_url,
                                       {"CLAUDE_CODE_MAX_RETRIES": "0"}))
    assert done.returncode == 3, done.describe()
    assert only_loop(project)["end_message"] == (
        "Ralph loop stopped at iteration 1/8: claude -p hit a usage limit (HTTP 429); no reset "
        "time was reported (with an API key the CLI gives none). Resume once the limit has "
        "passed with `ralph resume`, or run with --wait-on-limit.")


@pytest.mark.slow
def test_stress_ten_tool_using_iterations_each_a_fresh_session(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    script: list[Any] = []
    for number in range(1, 11):
        script += [[bash(f"echo {number} >> steps.txt")],
                   [text("<promise>DONE</promise>" if number == 10 else f"step {number}")]]
    with FakeModel(script) as model:
        done = run_ralph(ralph_args(claude_bin, "run", "Append ten steps", "--max-iterations",
                                    "12", "--completion-promise", "DONE", "--verify",
                                    "test $(wc -l < steps.txt) -eq 10"),
                         cwd=project, env=ralph_env(claude_home, model.base_url))
    assert done.returncode == 0, done.describe()
    assert first_calls(model) == list(range(0, 20, 2))
    loop = only_loop(project)
    assert [i["result"] for i in loop["iterations"]] == ["continue"] * 9 + ["success"]
    assert all(i["usage"] and not i["usage_partial"] for i in loop["iterations"])


@pytest.mark.slow
def test_stress_a_wide_graph_runs_at_most_jobs_at_once_and_merges_everything(
    claude_bin: Path, claude_home: Path, project: Path
) -> None:
    names = ["w1", "w2", "w3", "w4", "w5"]
    write_plan(project, "wide", [*(workflow(name) for name in names),
                                 workflow("last", names)])
    replies = {f"the {name} part": bash_then_promise(
        f"mkdir -p {name} && echo {name} > {name}/done.txt", PROMISE) for name in names}
    replies["the last part"] = bash_then_promise(
        "mkdir -p last && cat w*/done.txt > last/done.txt", PROMISE)
    with FakeModel([by_task(replies)] * 12) as model:
        done = run_ralph(ralph_args(claude_bin, "run", "--graph", "finesse-plans/wide",
                                    "--jobs", "3"),
                         cwd=project, env=ralph_env(claude_home, model.base_url))
    assert done.returncode == 0, done.describe()
    # Each sub-workflow's `claude -p` runs from its "started" line to its result's line.
    running, most = 0, 0
    for line in done.stdout.splitlines():
        if re.match(r"\[\w+\] iteration 1/3 started", line):
            running += 1
        elif re.match(r"\[\w+\] iteration 1/3: ", line):
            running -= 1
        most = max(most, running)
    assert (running, most) == (0, 3)
    assert (project / "last" / "done.txt").read_text() == "w1\nw2\nw3\nw4\nw5\n"
    merges = git(project, "log", "--first-parent", "--format=%s").splitlines()[:6]
    assert merges == [f"ralph: merge {name} (wave {2 if name == 'last' else 1} of wide)"
                      for name in ["last", *reversed(names)]]
    started = [line for line in done.stdout.splitlines() if "iteration 1/3 started" in line]
    assert len(started) == 6
