"""The headless loop, driven against a fake `claude` (tests/helpers/streams.py): every road
of `runner.drive` in a real git project, with the same engine, state and reports as the
in-session loop. The e2e tests drive the real binary."""

from __future__ import annotations

import os
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from finesse.headless import ending, runner
from finesse.headless.child import Cancel
from finesse.headless.exits import exit_code
from finesse.loop.lifecycle import stop_loop
from finesse.loop.request import start_request
from finesse.models import HeadlessRun, LoopState
from finesse.state.store import LoopStore, utcnow
from tests.helpers import streams as s
from tests.helpers.repo import commits, project_status
from tests.helpers.streams import FakeClaude


def start(store: LoopStore, claude: FakeClaude, args: str, **settings: Any) -> LoopState:
    request = start_request(args, store.paths.root)
    return runner.start(store, request, HeadlessRun(claude=str(claude.path), **settings))


def drive(store: LoopStore, state: LoopState, cancel: Cancel | None = None,
          **env: str) -> runner.Ended:
    clean = {key: value for key, value in os.environ.items()
             if not key.startswith(("FINESSE_", "CLAUDE_"))}
    return runner.drive(store, state.session_id, cancel or Cancel(), env={**clean, **env})


def only_history(store: LoopStore) -> LoopState:
    (ended,) = store.history()
    assert store.active_loops() == []
    return ended


def test_three_fresh_sessions_to_a_verified_success(store: LoopStore, tmp_path: Path) -> None:
    claude = FakeClaude(tmp_path / "bin", [
        {"events": s.reply_events("Started.\nLearning: the build needs make", tools=1)},
        {"events": s.reply_events("Closer.", tools=2)},
        {"events": s.reply_events("Done.\n<promise>DONE</promise>", tokens=(300, 40)),
         "write": {"out.txt": "made\n"}},
    ])
    state = start(store, claude, '"Make out.txt" --completion-promise DONE --verify '
                  '"test -f out.txt" --effort low', model="claude-opus-4-6")
    ended = drive(store, state, CLAUDE_CODE_EFFORT_LEVEL="max")
    assert ended.state == only_history(store)
    assert (ended.state.outcome, ended.state.verified, exit_code(ended.state)) == (
        "success", True, 0)
    assert [(i.result, i.tool_calls) for i in ended.state.iterations] == [
        ("continue", 1), ("continue", 2), ("success", 0)]
    assert [i.usage[0].input for i in ended.state.iterations] == [100, 100, 300]
    calls = claude.calls
    ids = [call["argv"][call["argv"].index("--session-id") + 1] for call in calls]
    assert len(set(ids)) == 3 and all(uuid.UUID(i) for i in ids)
    assert calls[0]["argv"] == ["-p", "--output-format", "stream-json", "--verbose",
                                "--session-id", ids[0], "--model", "claude-opus-4-6",
                                "--effort", "low"]
    assert [call["env"] for call in calls] == [
        {"FINESSE_HEADLESS_CHILD": state.session_id}] * 3
    assert [call["cwd"] for call in calls] == [str(store.paths.root)] * 3
    header = "Ralph iteration {}/8: output <promise>DONE</promise> only when it is completely " \
             "true (effort: low)"
    assert calls[0]["prompt"].startswith(header.format(1) + "\n\nMake out.txt\n\n---\n")
    assert calls[1]["prompt"].startswith(
        header.format(2) + "\n\nPrevious learnings: the build needs make\n\nMake out.txt")
    assert "Ralph loop done" in ended.banner


def test_an_unverified_success_exits_1(store: LoopStore, tmp_path: Path) -> None:
    claude = FakeClaude(tmp_path / "bin", [{"events": s.reply_events("<promise>OK</promise>")}])
    ended = drive(store, start(store, claude, "Do it --completion-promise OK"))
    assert (ended.state.outcome, ended.state.verified, exit_code(ended.state)) == (
        "success", False, 1)


def test_the_cap_is_a_resumable_stop(store: LoopStore, tmp_path: Path) -> None:
    claude = FakeClaude(tmp_path / "bin", [{"events": s.reply_events(f"step {n}", tools=1)}
                                           for n in range(3)])
    ended = drive(store, start(store, claude, "Work --max-iterations 2"))
    assert (ended.state.outcome, exit_code(ended.state), len(claude.calls)) == ("limit", 3, 2)
    session = ended.state.session_id
    report = Path(ended.state.report_path).read_text()
    assert (f"- `ralph resume --session {session} --max-iterations 4` (with room to go on)\n"
            f"- `ralph resume --session {session}` (continue from here)\n"
            f"- `ralph abort --session {session}` (give it up: it can no longer be resumed)"
            ) in report
    assert "- Run headless (`ralph run`): a fresh `" in report


RESET = int(time.time()) + 3600


def limited(resets_at: int = RESET) -> dict[str, Any]:
    return {"events": [s.init(), s.rate_limit("rejected", resets_at, 1.0),
                       s.result("You've hit your 5-hour limit", is_error=True, status=429)],
            "exit": 1}


def test_a_usage_limit_stops_the_run_with_its_reset_time(store: LoopStore,
                                                         tmp_path: Path) -> None:
    claude = FakeClaude(tmp_path / "bin", [limited()])
    ended = drive(store, start(store, claude, "Work"))
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(RESET))
    assert (ended.state.outcome, exit_code(ended.state)) == ("quota", 3)
    assert ended.state.end_message == (
        f"Ralph loop stopped at iteration 1/8: claude -p hit a usage limit (five_hour); it "
        f"resets at {when} UTC. Resume after that with `ralph resume`, or run with "
        "--wait-on-limit.")
    assert [(i.result, i.reply_excerpt) for i in ended.state.iterations] == [
        ("quota", "(a usage limit (five_hour): You've hit your 5-hour limit)")]
    assert "# Ralph loop report: usage limit" in Path(ended.state.report_path).read_text()


def test_wait_on_limit_waits_for_the_reset_then_goes_on(
    store: LoopStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ending, "RESET_MARGIN", timedelta(0))
    soon = int(time.time()) + 1
    claude = FakeClaude(tmp_path / "bin", [
        limited(soon), {"events": s.reply_events("<promise>OK</promise>")}])
    said: list[str] = []

    class Listen(runner.Silent):
        def say(self, line: str) -> None:
            said.append(line)

    state = start(store, claude, "Work --completion-promise OK --verify true",
                  wait_on_limit=True)
    ended = runner.drive(store, state.session_id, Cancel(), Listen())
    assert (ended.state.outcome, exit_code(ended.state)) == ("success", 0)
    first, second = ended.state.iterations
    assert first.result == "continue" and first.reply_excerpt.startswith(
        "The last iteration was cut short by a usage limit (five_hour); the run waited until")
    assert "the run waited until its reset" in claude.calls[1]["prompt"]
    assert said[0].startswith("claude -p hit a usage limit (five_hour); it resets at ")
    assert said[1] == "the usage limit's reset time has passed: going on"
    assert second.started_at.timestamp() >= soon  # counted from after the wait


def test_wait_on_limit_does_not_wait_past_the_deadline(store: LoopStore,
                                                       tmp_path: Path) -> None:
    claude = FakeClaude(tmp_path / "bin", [limited()])
    ended = drive(store, start(store, claude, "Work --timeout-minutes 5", wait_on_limit=True))
    assert ended.state.outcome == "quota"
    assert ended.state.end_message.endswith(
        "The reset comes after the loop's deadline (--timeout-minutes), so it did not wait.")


def test_an_api_error_blocks_the_loop(store: LoopStore, tmp_path: Path) -> None:
    claude = FakeClaude(tmp_path / "bin", [{"events": [
        s.init(), s.result("API Error: 529 overloaded", is_error=True, status=529)],
        "exit": 1}])
    ended = drive(store, start(store, claude, "Work"))
    assert (ended.state.outcome, exit_code(ended.state)) == ("blocked", 1)
    assert ended.state.blocker == (
        "BLOCKED (claude -p failed at iteration 1): API Error: 529 overloaded (API status "
        "529). Required user action: fix what stops claude from running (the message "
        "above), then `ralph resume`.")


def test_a_crash_before_the_reply_ended_blocks_the_loop(store: LoopStore,
                                                        tmp_path: Path) -> None:
    claude = FakeClaude(tmp_path / "bin", [{"events": [s.init()], "stderr": "boom\nError: "
                                            "not logged in\n", "exit": 1}])
    ended = drive(store, start(store, claude, "Work"))
    assert ended.state.end_message == (
        "Ralph loop blocked at iteration 1/8: claude -p failed: it exited with code 1 before "
        "its reply ended: Error: not logged in")


def test_a_claude_that_cannot_start_blocks_the_loop(store: LoopStore, tmp_path: Path) -> None:
    claude = FakeClaude(tmp_path / "bin", [])
    state = start(store, claude, "Work")
    claude.path.unlink()
    ended = drive(store, state)
    assert ended.state.outcome == "blocked"
    assert "claude -p failed: could not start it: " in ended.state.end_message


def test_an_iteration_over_its_time_is_killed_recorded_and_the_loop_goes_on(
    store: LoopStore, tmp_path: Path
) -> None:
    claude = FakeClaude(tmp_path / "bin", [
        {"events": [s.init(), *s.assistant("m1", s.tool("t1"))], "sleep": 60},
        {"events": s.reply_events("<promise>OK</promise>")}])
    ended = drive(store, start(store, claude, "Work --completion-promise OK --verify true",
                               iteration_timeout=1))
    first, second = ended.state.iterations
    assert (first.result, first.tool_calls, first.usage_partial, second.result) == (
        "continue", 1, True, "success")
    assert first.reply_excerpt.startswith("The last iteration was killed after 1 s: it ran "
                                          "over --iteration-timeout 1. Work in smaller steps.")
    assert "The last iteration was killed after 1 s" in claude.calls[1]["prompt"]


def test_a_cancel_during_an_iteration_ends_the_child_and_the_loop(
    store: LoopStore, tmp_path: Path
) -> None:
    marker = tmp_path / "started"
    claude = FakeClaude(tmp_path / "bin", [{"touch": str(marker), "sleep": 60}])
    cancel = Cancel()

    def interrupt() -> None:
        while not marker.exists():
            time.sleep(0.05)
        cancel.request("SIGINT (Ctrl-C)", 2)

    threading.Thread(target=interrupt).start()
    began = time.monotonic()
    ended = drive(store, start(store, claude, "Work"), cancel)
    assert time.monotonic() - began < 15
    assert (ended.state.outcome, ended.state.ended_by, exit_code(ended.state, 2)) == (
        "cancelled", "SIGINT (Ctrl-C)", 130)
    assert ended.state.end_message == "Ralph loop cancelled by SIGINT (Ctrl-C) at iteration 1/8."
    assert Path(ended.state.report_path).is_file()
    pid = claude.calls[0]["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_ralph_cancel_from_another_terminal_ends_the_running_child(
    store: LoopStore, tmp_path: Path
) -> None:
    marker = tmp_path / "started"
    claude = FakeClaude(tmp_path / "bin", [{"touch": str(marker), "sleep": 60}])
    state = start(store, claude, "Work")

    def cancel_it() -> None:
        while not marker.exists():
            time.sleep(0.05)
        stop_loop(store, state.session_id, utcnow(), "`ralph cancel`")

    threading.Thread(target=cancel_it).start()
    ended = drive(store, state)
    assert (ended.state.outcome, ended.state.ended_by, exit_code(ended.state)) == (
        "cancelled", "`ralph cancel`", 1)
    assert ended.banner.startswith("Ralph loop cancelled by `ralph cancel` at iteration 1/8.")


def test_a_cancel_during_the_gate_step_lets_it_commit_first(
    store: LoopStore, tmp_path: Path
) -> None:
    # The gate command itself pulls the kill switch: the step still commits the iteration,
    # then the cancel wins; nothing is left staged or half done.
    claude = FakeClaude(tmp_path / "bin", [
        {"events": s.reply_events("Wrote it.\nApproach: one file", tools=1),
         "write": {"feature.txt": "v1\n"}}])
    state = start(store, claude, 'Work --gate "touch .claude/ralph/STOP"')
    ended = drive(store, state)
    assert (ended.state.outcome, ended.state.ended_by) == ("cancelled", "the kill switch")
    (entry,) = ended.state.iterations
    assert (entry.gate_action, entry.commit is not None) == ("committed", True)
    assert commits(store.paths.root)[0] == "ralph: iteration 1: one file"
    assert project_status(store.paths.root) == ""


def test_the_state_is_the_in_session_loops_with_the_run_recorded(store: LoopStore,
                                                                 tmp_path: Path) -> None:
    claude = FakeClaude(tmp_path / "bin", [])
    state = start(store, claude, "Work --max-iterations 3", model="m", iteration_timeout=60,
                  claude_args=["--permission-mode", "acceptEdits"])
    assert store.load(state.session_id) == state
    assert state.headless == HeadlessRun(claude=str(claude.path), model="m",
                                         claude_args=["--permission-mode", "acceptEdits"],
                                         iteration_timeout=60)
    assert uuid.UUID(state.session_id).version == 4
    assert state.deadline_at is None
    assert timedelta(0) <= utcnow() - state.iteration_started_at < timedelta(minutes=5)


def test_stop_at_quota_reads_the_windows_from_the_stream(store: LoopStore,
                                                         tmp_path: Path) -> None:
    # No status line runs in print mode; the stream's rate_limit_event carries the windows.
    events = s.reply_events("working", tools=1)
    claude = FakeClaude(tmp_path / "bin", [
        {"events": [events[0], s.rate_limit("allowed", RESET, 0.85), *events[1:]]}])
    ended = drive(store, start(store, claude, "Work --stop-at-quota 80"))
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(RESET))
    assert (ended.state.outcome, exit_code(ended.state)) == ("quota", 3)
    assert ended.state.end_message == (
        "Ralph loop stopped at iteration 1/8: the five-hour usage window is at 85% "
        f"(--stop-at-quota 80); it resets at {when} UTC. Resume after that with "
        f"ralph resume --session {ended.state.session_id}.")
