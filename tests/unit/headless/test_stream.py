"""The stream reader: what one `claude -p --output-format stream-json --verbose` said."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from finesse.headless.stream import StreamError, StreamReader, StreamSummary
from finesse.results import ModelUsage, Quota
from tests.helpers import streams as s

RESET = 1796161271
RESET_AT = datetime.fromtimestamp(RESET, UTC)


def read(events: list[s.Event] | list[object]) -> StreamSummary:
    reader = StreamReader()
    for event in events:
        reader.feed(json.dumps(event) if not isinstance(event, str) else event)
    return reader.summary()


def test_the_reply_the_tool_calls_and_the_usage_of_the_result() -> None:
    events = [s.init("abc"), *s.assistant("msg_1", s.text("Let me run it."), s.tool("toolu_1")),
              s.tool_result("toolu_1"), *s.assistant("msg_2", s.text("All done.")),
              s.result("All done.", model_usage=s.model_usage(222, 44, 666, 8888))]
    assert read(events) == StreamSummary(
        session_id="abc", reply="All done.", last_text="All done.", tool_calls=1,
        usage=[ModelUsage("claude-sonnet-4-5", 222, 44, 666, 8888)], usage_partial=False,
        error=None, complete=True)


def test_usage_of_a_stream_cut_short_is_counted_once_per_message_and_partial() -> None:
    # Each content block repeats its message's usage; output tokens are those at its start.
    figures = s.usage(input=100, output=1, cache_creation=30, cache_read=400)
    events = [s.init(), *s.assistant("msg_1", s.text("a"), s.tool("t1"), usage_figures=figures),
              *s.assistant("msg_2", s.text("b"), usage_figures=figures),
              *s.assistant("msg_3", s.text("c"), model="claude-haiku-4-5",
                           usage_figures=s.usage(input=7))]
    summary = read(events)
    assert (summary.reply, summary.last_text, summary.tool_calls, summary.usage,
            summary.usage_partial, summary.complete, summary.error) == (
        None, "c", 1, [ModelUsage("claude-haiku-4-5", 7, 1, 0, 0),
                       ModelUsage("claude-sonnet-4-5", 200, 2, 60, 800)], True, False, None)


def test_running_tokens_leave_out_synthetic_messages() -> None:
    reader = StreamReader()
    for event in [*s.assistant("msg_1", s.text("x"), usage_figures=s.usage(100, 5, 20)),
                  *s.assistant("msg_2", s.text("API Error"), model="<synthetic>",
                               usage_figures=s.usage(999, 999))]:
        reader.feed(json.dumps(event))
    assert reader.running_tokens == 125


def test_a_subagents_tool_calls_and_text_are_not_the_main_threads() -> None:
    events = [*s.assistant("msg_1", s.tool("t1")),
              *s.assistant("msg_sub", s.tool("t2"), s.text("sub says"), parent="t1"),
              *s.assistant("msg_2", s.tool("t1"), s.text("main says"))]
    summary = read(events)
    assert (summary.tool_calls, summary.last_text) == (1, "main says")


def test_an_api_error_after_the_retries_is_an_error_with_no_reply() -> None:
    events = [s.init(), {"type": "system", "subtype": "api_retry", "attempt": 1,
                         "error_status": 529},
              *s.assistant("msg_x", s.text("API Error: 529 overloaded"), model="<synthetic>"),
              s.result("API Error: 529 XOVERLOADED. This is a server-side issue",
                       is_error=True, status=529)]
    summary = read(events)
    assert (summary.reply, summary.error, summary.retries, summary.usage) == (
        None, StreamError("API Error: 529 XOVERLOADED. This is a server-side issue", 529),
        1, [])


def test_a_429_is_a_usage_limit_with_the_reset_of_the_rejecting_rate_limit_event() -> None:
    events = [s.init(), s.rate_limit("rejected", RESET, 1.0),
              s.result("You've hit your 5-hour limit · resets 9:41pm (UTC)", is_error=True,
                       status=429)]
    assert read(events).error == StreamError(
        "You've hit your 5-hour limit · resets 9:41pm (UTC)", 429, limited=True,
        resets_at=RESET_AT, limit_type="five_hour")


def test_a_429_without_a_rate_limit_event_has_no_reset_time() -> None:
    events = [s.init(), s.result("API Error: Request rejected (429)", is_error=True,
                                 status=429)]
    assert read(events).error == StreamError("API Error: Request rejected (429)", 429,
                                             limited=True)


def test_a_rejecting_event_in_a_stream_that_never_ended_is_still_a_limit() -> None:
    error = read([s.init(), s.rate_limit("rejected", RESET, 1.0, "seven_day")]).error
    assert error == StreamError("the usage limit refused the request", None, limited=True,
                                resets_at=RESET_AT, limit_type="seven_day")


def test_a_rejecting_event_then_a_success_is_no_error() -> None:
    events = [s.rate_limit("rejected", RESET, 1.0), *s.assistant("m", s.text("fine")),
              s.result("fine", model_usage=s.model_usage(1, 1))]
    summary = read(events)
    assert (summary.error, summary.reply) == (None, "fine")


def test_the_windows_of_an_allowed_event_are_the_quota() -> None:
    summary = read([s.rate_limit("allowed", RESET, 0.42), s.result("x")])
    now = datetime(2026, 12, 1, tzinfo=UTC)
    assert summary.quota(now) == Quota(
        at=now, five_hour=42.0, five_hour_resets_at=RESET_AT, seven_day=50.0,
        seven_day_resets_at=datetime.fromtimestamp(RESET + 86400, UTC))
    assert read([s.result("x")]).quota(now) is None


def test_lines_that_are_not_events_are_skipped_and_counted() -> None:
    summary = read(["not json", "[1, 2]", "", "{\"type\": \"mystery\"}", "\"text\"",
                    "{" * 100_000, s.result("done")])
    assert (summary.skipped_lines, summary.reply, summary.complete) == (4, "done", True)


def test_odd_values_in_events_never_raise() -> None:
    events: list[object] = [
        {"type": "assistant", "message": "no"}, {"type": "assistant", "message": {"content": [1,
         {"type": "tool_use"}, {"type": "text", "text": 5}], "id": 3, "usage": []}},
        {"type": "rate_limit_event", "rate_limit_info": [1]},
        {"type": "rate_limit_event", "rate_limit_info": {"status": "rejected",
                                                          "resetsAt": 10**30}},
        {"type": "result", "is_error": True, "api_error_status": True, "result": None,
         "modelUsage": {"m": {"inputTokens": -5, "outputTokens": "9"}, "n": 3}},
    ]
    summary = read(events)
    assert (summary.tool_calls, summary.error, summary.usage) == (
        1, StreamError("claude -p ended with an error (no detail)", None, limited=True),
        [ModelUsage("m", 0, 0, 0, 0)])
