"""`ralph run` and `ralph resume` of a headless loop, with a fake `claude`: the arguments,
the one-line refusals (exit 2), the output and --json, the exit codes, and SIGTERM to a
real `ralph run` process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from finesse.state.store import LoopStore
from tests.helpers import streams as s
from tests.helpers.cli import run
from tests.helpers.graphs import workflow, write_plan
from tests.helpers.streams import FakeClaude

RALPH = Path(__file__).resolve().parents[4] / "scripts" / "ralph.py"


def fake(tmp_path: Path, *entries: dict[str, object]) -> FakeClaude:
    return FakeClaude(tmp_path / "bin", list(entries))


def ralph(capsys: pytest.CaptureFixture[str], root: Path, claude: FakeClaude | None,
          *words: str) -> tuple[int, str, str]:
    where = ["--project", str(root)]
    binary = ["--claude-bin", str(claude.path)] if claude is not None else []
    return run(capsys, "run", *where, *binary, *words)


def test_a_verified_run_prints_each_iteration_and_exits_0(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore, tmp_path: Path
) -> None:
    claude = fake(tmp_path, {"events": s.reply_events("one", tools=1)},
                  {"events": s.reply_events("<promise>DONE</promise>", tools=1)})
    code, out, err = ralph(capsys, root, claude, "Fix it", "--completion-promise", "DONE",
                           "--verify", "true", "--max-iterations", "4", "--quiesce-after", "3")
    (ended,) = store.history()
    pids = [call["pid"] for call in claude.calls]
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"Ralph run {ended.loop_id}: up to 4 iterations, promise DONE, each a fresh `claude -p`.",
        f"iteration 1/4 started (claude pid {pids[0]})",
        "iteration 1/4: continue · 0:00 · 1 tool call(s) · 120 tokens",
        f"iteration 2/4 started (claude pid {pids[1]})",
        "iteration 2/4: success · 0:00 · 1 tool call(s) · 120 tokens · verification green",
        "Ralph loop done: <promise>DONE</promise> at iteration 2/4 and verified: `true` exit 0.",
        "Files modified: 0 (+0, -0)",
        f"Report: .claude/ralph/reports/{ended.loop_id}.md",
    ]


def test_json_prints_the_final_report_alone_on_stdout(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore, tmp_path: Path
) -> None:
    claude = fake(tmp_path, {"events": s.reply_events("<promise>DONE</promise>")})
    code, out, err = ralph(capsys, root, claude, "--json", "Fix it", "--completion-promise",
                           "DONE")
    record = json.loads(out)
    (ended,) = store.history()
    assert (code, record["exit_code"], record["outcome"], record["verified"],
            record["loop_id"]) == (1, 1, "success", False, ended.loop_id)
    assert record["spend"]["total"]["tokens"] == 120
    assert record["headless"] == {"claude": str(claude.path), "model": None,
                                  "claude_args": [], "iteration_timeout": None,
                                  "wait_on_limit": False, "agent": None}
    assert err.splitlines()[0].startswith(f"Ralph run {ended.loop_id}: up to 8 iterations")


def test_a_capped_run_exits_3_and_ralph_resume_finishes_it(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore, tmp_path: Path
) -> None:
    claude = fake(tmp_path, {"events": s.reply_events("one", tools=1)},
                  {"events": s.reply_events("two", tools=1)},
                  {"events": s.reply_events("<promise>DONE</promise>")})
    code, out, _ = ralph(capsys, root, claude, "Work", "--completion-promise", "DONE",
                         "--verify", "true", "--max-iterations", "2")
    assert code == 3 and "Options: ralph resume --session " in out
    code, out, err = run(capsys, "resume", "--project", str(root))
    assert (code, err) == (0, "")
    (ended,) = store.history()
    assert out.splitlines()[0] == (f"Resumed Ralph run {ended.loop_id} at iteration 3/4 (it "
                                   "had ended: limit).")
    assert (ended.outcome, ended.verified, len(ended.iterations), len(claude.calls)) == (
        "success", True, 3, 3)
    assert [r.after for r in ended.resumes] == ["limit"]


@pytest.mark.parametrize(("words", "message"), [
    (["Go", "--iteration-timeout", "5"], "--iteration-timeout needs a duration from 10 s to 7 "
                                         "days, not '5': for example 600, 90s, 20m or 2h"),
    (["Go", "--iteration-timeout", "1y"], "--iteration-timeout needs a duration"),
    (["Go", "--claude-args", "--resume x"], "--claude-args may not hold --resume"),
    (["Go", "--max-iterations", "0"], "--max-iterations must be from 1 to 1000, not 0"),
    (["Go", "--bogus"], "unknown option --bogus: type /ralph-loop"),
    (["--prompt-file", "missing.md"], "--prompt-file missing.md"),
    ([], "the prompt is empty: type /ralph-loop"),
    (["Go", "--judge", "--criteria", "it works", "--verify", "true"],
     "--judge runs inside one Claude Code session, whose hooks own the worker and judge "
     "subagents, and ralph run gives each iteration a fresh session: use /ralph-loop --judge "
     "in a session, or leave out --judge"),
])
def test_bad_arguments_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore, tmp_path: Path,
    words: list[str], message: str
) -> None:
    code, out, err = ralph(capsys, root, fake(tmp_path), *words)
    assert (code, out, len(err.splitlines())) == (2, "", 1)
    assert err.startswith(f"ralph run: {message}")
    assert store.active_loops() == [] and store.history() == []


def test_a_missing_claude_is_a_usage_error(capsys: pytest.CaptureFixture[str], root: Path,
                                           tmp_path: Path) -> None:
    code, _, err = run(capsys, "run", "--project", str(root), "--claude-bin",
                       str(tmp_path / "nope"), "Go")
    assert code == 2
    assert err == (f"ralph run: cannot run the Claude Code CLI '{tmp_path / 'nope'}': install "
                   "it (`npm install -g @anthropic-ai/claude-code`) or give --claude-bin PATH\n")


def test_a_prompt_file_that_is_a_fifo_is_refused_without_waiting_on_it(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path
) -> None:
    os.mkfifo(root / "PROMPT.md")  # hostile world: opening it for reading would block
    began = time.monotonic()
    code, _, err = ralph(capsys, root, fake(tmp_path), "--prompt-file", "PROMPT.md")
    assert (code, time.monotonic() - began < 5) == (2, True)
    assert err.startswith("ralph run: --prompt-file PROMPT.md") and "not a regular file" in err


@pytest.mark.parametrize(("words", "message"), [
    (["Build", "it"], "--graph runs the plan's own prompts: drop the prompt words (Build it)"),
    (["--max-iterations", "3"], "--graph takes each sub-workflow's --max-iterations from its "
                                "plan: drop it"),
    (["--verify"], "--verify needs a value"),
    (["--judge", "--criteria", "x"], "--judge runs inside one Claude Code session"),
])
def test_graph_refuses_what_the_plan_gives(capsys: pytest.CaptureFixture[str], root: Path,
                                           tmp_path: Path, words: list[str],
                                           message: str) -> None:
    write_plan(root, "demo", [workflow("alpha"), workflow("beta")])
    code, _, err = ralph(capsys, root, fake(tmp_path), "--graph", "finesse-plans/demo", *words)
    assert code == 2 and err.startswith(f"ralph run: {message}")


def test_graph_runs_the_plan_and_prints_a_row_per_sub_workflow(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path
) -> None:
    write_plan(root, "demo", [workflow("alpha"), workflow("beta")])
    # --jobs 1: alpha's session comes first, then beta's, each writing in its worktree.
    claude = fake(tmp_path, *({"events": s.reply_events("<promise>TASK_COMPLETE</promise>"),
                               "write": {f"{name}/done.txt": "x"}} for name in ("alpha", "beta")))
    code, out, err = ralph(capsys, root, claude, "--graph", "finesse-plans/demo", "--jobs", "1")
    assert (code, err) == (0, ""), out
    lines = out.splitlines()
    assert lines[0] == ("Ralph graph demo: 2 sub-workflow(s) in 1 wave(s), at most 1 at a "
                        "time, merged into main.")
    merges = subprocess.run(["git", "log", "--first-parent", "--format=%H %s", "-2"], cwd=root,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    merged = {subject.split()[2]: sha[:12] for sha, subject in
              (line.split(" ", 1) for line in merges)}  # "ralph: merge NAME (wave ...)"
    assert lines[-4:-1] == [
        "Ralph graph demo: every sub-workflow succeeded and was merged.",
        f"  wave 1 alpha: success (verified), merged {merged['alpha']}",
        f"  wave 1 beta: success (verified), merged {merged['beta']}"]
    assert lines[-1].startswith("Report: .claude/ralph/reports/graph-")
    assert "--no-plan" not in " ".join(call["prompt"] for call in claude.calls)
    assert [call["cwd"] for call in claude.calls] == [
        str(root / ".ralph-worktrees" / "demo" / "alpha"),
        str(root / ".ralph-worktrees" / "demo" / "beta")]


def test_sigterm_to_ralph_run_ends_the_child_and_records_the_loop_cancelled(
    root: Path, store: LoopStore, tmp_path: Path
) -> None:
    marker = tmp_path / "started"
    claude = fake(tmp_path, {"events": [s.init()], "touch": str(marker), "sleep": 60})
    env = {**os.environ, "PYTHONPATH": str(RALPH.parent)}
    process = subprocess.Popen(
        [sys.executable, str(RALPH), "run", "--claude-bin", str(claude.path), "Work"],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    (ended,) = store.history()
    assert (process.returncode, err) == (143, ""), out
    assert (ended.outcome, ended.ended_by) == ("cancelled", "SIGTERM")
    assert "Ralph loop cancelled by SIGTERM at iteration 1/8." in out
    assert Path(ended.report_path).is_file()
    with pytest.raises(ProcessLookupError):
        os.kill(claude.calls[0]["pid"], 0)


def test_ralph_resume_picks_up_a_headless_loop_whose_run_died(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore, tmp_path: Path
) -> None:
    # `ralph run` killed outright (SIGKILL: no handler runs) leaves its loop active and
    # undriven; `ralph resume` drives it on from the iteration it was in.
    from finesse.headless import runner
    from finesse.loop.request import start_request
    from finesse.models import HeadlessRun

    claude = fake(tmp_path, {"events": s.reply_events("<promise>DONE</promise>")})
    state = runner.start(store, start_request("Work --completion-promise DONE --verify true",
                                              root), HeadlessRun(claude=str(claude.path)))
    with runner.driving(store, state.session_id):  # a live `ralph run` holds it
        code, _, err = run(capsys, "resume", "--project", str(root))
        assert (code, err) == (2, "ralph resume: no ended Ralph loop in this project to "
                                  "resume; start one with /ralph-loop\n")
    code, out, err = run(capsys, "resume", "--project", str(root))
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (f"Picking up Ralph run {state.loop_id} at iteration 1/8: "
                                   "the process that ran it is gone.")
    (ended,) = store.history()
    assert (ended.loop_id, ended.outcome, ended.verified) == (state.loop_id, "success", True)
