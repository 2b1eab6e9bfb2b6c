"""Properties of the readers of text we did not write, on generated text: the reply reader
(terminal line, promise, code), the `/ralph-loop` argument grammar and the stream reader.
Each holds for any input: no exception but the one-line refusal, and code never counts."""

from __future__ import annotations

import json
import shlex

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from finesse.errors import UsageError
from finesse.headless.stream import StreamReader
from finesse.loop.grammar import parse_loop_args
from finesse.signals import Reading, read_reply
from finesse.support.numbers import TOKEN_CEILING

TAG = "<promise>DONE</promise>"
# Prose that is no code, no tag and no result line: plain words and blank lines.
PROSE_LINE = st.text(st.characters(categories=["L", "N", "Zs"], exclude_characters="\u2028"),
                     max_size=40).filter(lambda line: "RESULT" not in line)
PROSE = st.lists(PROSE_LINE, max_size=8).map("\n".join)
# Text with the characters the reader cares about, in any order.
HOSTILE = st.lists(st.sampled_from([*"`~<>/\n \t*_#->:", "<promise>", "</promise>", "RESULT:",
                                   " BLOCKED", " VERIFIED_COMPLETE", "DONE", "```", "    "]),
                   max_size=60).map("".join)
CODE_BODY = st.text(st.characters(exclude_characters="`~\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
                    max_size=40)


@given(st.text(max_size=400))
def test_any_reply_is_read(reply: str) -> None:
    reading = read_reply(reply, "DONE")
    assert isinstance(reading, Reading)
    assert reading.blocker is None or reading.blocked


@given(HOSTILE)
@settings(max_examples=300)
def test_hostile_replies_are_read_and_blocked_wins(reply: str) -> None:
    reading = read_reply(reply, "DONE")
    if reading.blocked:
        assert not reading.claims_completion and reading.blocker


@given(PROSE, PROSE)
def test_the_promise_in_prose_claims_completion(before: str, after: str) -> None:
    assert read_reply(f"{before}\n\n{TAG}\n\n{after}", "DONE").claims_completion


@given(PROSE, CODE_BODY)
def test_the_promise_in_code_never_counts(before: str, body: str) -> None:
    for quoted in (f"`{TAG}`", f"```\n{body}\n{TAG}\n```", f"~~~\n{TAG}\n~~~",
                   f"\n\n    {TAG}\n"):
        reading = read_reply(f"{before}\n\n{quoted}\n", "DONE")
        assert not reading.promised, quoted


@given(PROSE, st.sampled_from(["BLOCKED", "VERIFIED_COMPLETE"]), PROSE)
def test_the_last_result_line_is_the_terminal_one(before: str, last: str, why: str) -> None:
    first = "VERIFIED_COMPLETE" if last == "BLOCKED" else "BLOCKED"
    reply = f"{before}\n\nRESULT: {first}\n\n{why}\n\nRESULT: {last}\n"
    assert read_reply(reply, "DONE").terminal == last


@given(PROSE, CODE_BODY, st.sampled_from(["BLOCKED", "VERIFIED_COMPLETE"]))
def test_closed_code_after_the_reply_changes_nothing(reply: str, body: str, last: str) -> None:
    text = f"{reply}\n\nRESULT: {last}\n{TAG}\n"
    fenced = f"{text}\n```\nRESULT: {'BLOCKED' if last != 'BLOCKED' else 'VERIFIED_COMPLETE'}\n"
    assert read_reply(fenced + f"{body}\n```\n", "DONE") == read_reply(text, "DONE")


# --- the /ralph-loop argument grammar ------------------------------------------------------

FLAGS = st.lists(st.sampled_from([
    "--max-iterations 7", "--completion-promise DONE", "--verify 'pytest -q'",
    "--quiesce-after 3", "--timeout-minutes 30", "--allow-dirty", "--no-plan",
    "--max-tokens 1000"]), unique=True, max_size=5)


@given(st.text(max_size=200))
def test_any_arguments_parse_or_are_refused_in_one_line(args: str) -> None:
    try:
        parse_loop_args(args)
    except UsageError as err:
        assert str(err) and "\n" not in str(err) and "\r" not in str(err)


@given(FLAGS, st.randoms())
def test_flags_mean_the_same_in_any_order(flags: list[str], random: object) -> None:
    shuffled = list(flags)
    random.shuffle(shuffled)  # type: ignore[attr-defined]
    assert parse_loop_args(" ".join([*flags, "--", "fix it"])) == parse_loop_args(
        " ".join([*shuffled, "--", "fix it"]))


@given(st.integers(min_value=10 ** 9, max_value=10 ** 400), st.sampled_from([
    "--max-iterations", "--quiesce-after", "--timeout-minutes", "--max-tokens"]))
def test_absurd_counts_are_refused_in_one_line(number: int, flag: str) -> None:
    try:
        parsed = parse_loop_args(f"{flag} {number} go")
    except UsageError as err:
        assert "\n" not in str(err)
    else:
        assert flag == "--max-tokens" and parsed.budgets.max_tokens == number


@given(st.text(max_size=100))
def test_a_quoted_prompt_is_the_prompt(text: str) -> None:
    assume(text.strip() and "\x00" not in text)
    assert parse_loop_args("-- " + shlex.quote(text)).prompt == text.strip()


# --- the stream reader ---------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10 ** 30, 10 ** 30) | st.floats() | st.text(
        max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from([
        "type", "message", "usage", "id", "model", "content", "input_tokens", "result",
        "modelUsage", "rate_limit_info", "status", "resetsAt", "inputTokens", "is_error",
        "text", "tool_use", "assistant", "unifiedWindows", "utilization"]), inner,
        max_size=5), max_leaves=20)
EVENTS = st.fixed_dictionaries({"type": st.sampled_from(
    ["assistant", "result", "rate_limit_event", "system", "user"])}, optional={
    "message": JSON_VALUES, "modelUsage": JSON_VALUES, "rate_limit_info": JSON_VALUES,
    "result": JSON_VALUES, "is_error": st.booleans()})


@given(st.lists(st.binary(max_size=80) | st.text(max_size=80), max_size=10))
def test_any_lines_are_read(lines: list[bytes | str]) -> None:
    reader = StreamReader()
    for line in lines:
        reader.feed(line)
    summary = reader.summary()
    assert summary.tool_calls >= 0


@given(st.lists(EVENTS, max_size=8))
@settings(max_examples=300)
def test_any_events_give_sane_counts(events: list[dict[str, object]]) -> None:
    reader = StreamReader()
    for event in events:
        reader.feed(json.dumps(event))
    summary = reader.summary()
    for usage in summary.usage:
        for count in (usage.input, usage.output, usage.cache_creation, usage.cache_read):
            assert isinstance(count, int) and 0 <= count <= TOKEN_CEILING * len(events)
    from datetime import UTC, datetime

    quota = summary.quota(datetime(2026, 1, 1, tzinfo=UTC))
    if quota is not None:
        for share in (quota.five_hour, quota.seven_day):
            assert share is None or 0 <= share <= 100
