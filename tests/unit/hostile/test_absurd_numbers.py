"""Numbers from outside (transcript and stream usage, reset times, status line percentages)
are checked where they come in: an absurd one is refused with a line in the log, never an
exception, and a loop never stalls on it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from finesse.loop import observe
from finesse.state.store import LoopStore
from tests.helpers.hooks import Session, stop_hook, stop_input
from tests.helpers.states import SESSION

HUGE = 10 ** 400


def _reply_line(reply: str, message_id: str, usage: dict[str, Any]) -> dict[str, Any]:
    return {"type": "assistant", "message": {
        "id": message_id, "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": reply}], "usage": usage}}


def test_a_400_digit_token_count_is_refused_and_the_loop_goes_on(
        session: Session, store: LoopStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(observe, "_sleep", lambda seconds: None)
    session.submit("/ralph-loop go --max-iterations 3")
    session._write(_reply_line("working", "msg_1", {"input_tokens": HUGE, "output_tokens": 7}))
    output = stop_hook(session.root, stop_input("working", SESSION, str(session.root),
                                                str(session.transcript)))
    assert output is not None and "hookSpecificOutput" in output  # the loop went on
    state = store.load(SESSION)
    assert state is not None and state.iteration == 2
    assert [(u.input, u.output) for u in state.iterations[-1].usage] == [(0, 7)]
    log = store.paths.log.read_text()
    assert "refused" in log and "input_tokens" in log


@pytest.mark.parametrize("value", [HUGE, -5, math.nan, math.inf, 1.5, True, "12"])
def test_the_transcript_reader_counts_only_sane_token_counts(tmp_path: Path,
                                                             value: object) -> None:
    from finesse.support.usage import read_increment

    transcript = tmp_path / "t.jsonl"
    line = _reply_line("x", "msg_1", {"input_tokens": value, "output_tokens": 3})
    transcript.write_text(json.dumps(line) + "\n")
    increment = read_increment(transcript, None)
    assert [(u.input, u.output) for u in increment.model_usage()] == [(0, 3)]
    assert increment.refused == ["input_tokens"]


# --- ralph run: the stream ---------------------------------------------------------------


def _start(store: LoopStore, claude: Any, args: str, **settings: Any) -> Any:
    from finesse.headless import runner
    from finesse.loop.request import start_request
    from finesse.models import HeadlessRun

    request = start_request(args, store.paths.root)
    return runner.start(store, request, HeadlessRun(claude=str(claude.path), **settings))


def _drive(store: LoopStore, state: Any) -> Any:
    import os

    from finesse.headless import runner
    from finesse.headless.child import Cancel

    clean = {key: value for key, value in os.environ.items()
             if not key.startswith(("FINESSE_", "CLAUDE_"))}
    return runner.drive(store, state.session_id, Cancel(), env=clean)


YEAR_9999 = 253402300799  # 9999-12-31 23:59:59 UTC, the last second a datetime holds


def test_a_reset_in_the_year_9999_is_no_reset_time_and_the_run_goes_on(
        store: LoopStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import timedelta

    from finesse.headless import ending
    from tests.helpers import streams as s
    from tests.helpers.streams import FakeClaude

    monkeypatch.setattr(ending, "UNKNOWN_RESET_WAIT", timedelta(0))
    limited = {"events": [s.init(), s.rate_limit("rejected", YEAR_9999, 1.0),
                          s.result("You've hit your limit", is_error=True, status=429)],
               "exit": 1}
    claude = FakeClaude(tmp_path / "bin", [limited, {"events": s.reply_events(
        "<promise>OK</promise>")}])
    state = _start(store, claude, "Work --completion-promise OK --verify true",
                   wait_on_limit=True)
    ended = _drive(store, state)
    assert ended.state.outcome == "success"
    assert store.active_loops() == []
    assert "reset time 9999-12-31 is further off than any usage window: refused" in (
        store.paths.log.read_text())


def test_a_400_digit_model_usage_is_refused_and_the_run_ends_as_it_would(
        store: LoopStore, tmp_path: Path) -> None:
    from tests.helpers import streams as s
    from tests.helpers.streams import FakeClaude

    events = s.reply_events("<promise>OK</promise>")
    events[-1] = s.result("<promise>OK</promise>", model_usage={"claude-sonnet-4-5": {
        "inputTokens": HUGE, "outputTokens": 20, "cacheCreationInputTokens": 0,
        "cacheReadInputTokens": 0}})
    claude = FakeClaude(tmp_path / "bin", [{"events": events}])
    ended = _drive(store, _start(store, claude, "Work --completion-promise OK --verify true"))
    assert ended.state.outcome == "success"
    assert [(u.input, u.output) for u in ended.state.iterations[-1].usage] == [(0, 20)]
    assert "the stream's usage held no token count in inputTokens: refused" in (
        store.paths.log.read_text())


@pytest.mark.parametrize("utilization", [math.nan, -0.3, math.inf, -math.inf, HUGE, "0.9"])
def test_the_streams_window_figures_are_percentages_or_nothing(utilization: object) -> None:
    from datetime import UTC, datetime

    from finesse.headless.stream import StreamReader
    from tests.helpers import streams as s

    event = s.rate_limit("allowed", YEAR_9999)
    event["rate_limit_info"]["unifiedWindows"]["five_hour"]["utilization"] = utilization
    reader = StreamReader()
    reader.feed(json.dumps(event))
    quota = reader.summary().quota(datetime(2026, 1, 1, tzinfo=UTC))
    assert quota is not None and (quota.five_hour, quota.seven_day) == (None, 50.0)


def test_the_streams_window_above_full_reads_as_full() -> None:
    from datetime import UTC, datetime

    from finesse.headless.stream import StreamReader
    from tests.helpers import streams as s

    reader = StreamReader()
    reader.feed(json.dumps(s.rate_limit("allowed", YEAR_9999, five_hour=1.7)))
    quota = reader.summary().quota(datetime(2026, 1, 1, tzinfo=UTC))
    assert quota is not None and quota.five_hour == 100.0


# --- the status line ---------------------------------------------------------------------


@pytest.mark.parametrize("used", ["NaN", "-1", "Infinity", "-Infinity", "1" * 400])
def test_a_status_line_percentage_that_is_no_percentage_is_refused_and_logged(
        git_repo: Path, store: LoopStore, used: str) -> None:
    from datetime import UTC, datetime

    from finesse.engine import quota_reached
    from finesse.hooks.statusline import render
    from finesse.models import Budgets
    from finesse.state.quota import read_quota
    from tests.helpers.states import make_state

    now = datetime(2026, 6, 1, tzinfo=UTC)
    state = make_state(git_repo, budgets=Budgets(stop_at_quota=80))
    store.save(state)
    week = int(now.timestamp()) + 3600
    raw = (f'{{"session_id": "x", "workspace": {{"project_dir": "{git_repo}"}}, "rate_limits": '
           f'{{"five_hour": {{"used_percentage": {used}, "resets_at": {YEAR_9999 * 10}}}, '
           f'"seven_day": {{"used_percentage": 10, "resets_at": {week}}}}}}}').encode()
    line = render(raw, {}, now, None)
    assert line.startswith("ralph")
    recorded = read_quota(store.paths, now)
    assert recorded is not None and (recorded.five_hour, recorded.five_hour_resets_at,
                                     recorded.seven_day) == (None, None, 10.0)
    assert "rate_limits.five_hour.used_percentage is no percentage" in (
        store.paths.log.read_text())
    assert quota_reached(state, recorded) == ""  # neither never nor always: not at all
