"""The last assistant reply, the tool calls of the current turn and the active /goal, read
backwards from a transcript in bounded memory."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from finesse.support.transcript import (
    active_goal,
    iter_lines_reversed,
    last_assistant_text,
    tool_calls_since_turn_start,
)

SESSION = "6f1c0a52-3d4e-4b8a-9c1d-2e3f4a5b6c7d"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("transcript") / "data.bin"


# --- iter_lines_reversed ----------------------------------------------------------------------


def reference_lines(data: bytes, max_line: int, max_scan: int) -> list[bytes]:
    """What iter_lines_reversed promises: whole lines inside the scanned tail, last first."""
    floor = max(0, len(data) - max_scan)
    kept: list[bytes] = []
    start = 0
    for line in data.split(b"\n"):
        whole = start > floor or start == floor == 0
        if whole and len(line) <= max_line:
            kept.append(line)
        start += len(line) + 1
    return kept[::-1]


_DATA = st.one_of(
    st.binary(max_size=300),
    st.lists(st.binary(max_size=40), max_size=20).map(b"\n".join),
    st.lists(st.sampled_from([b"", b"\n", b"a", b"bc", b"\n\n", b"\r\n", b"xyz" * 7]),
             max_size=30).map(b"".join),
)


@given(_DATA, st.integers(1, 70))
def test_reversed_lines_match_split(scratch: Path, data: bytes, block_size: int) -> None:
    scratch.write_bytes(data)
    lines = list(iter_lines_reversed(
        scratch, block_size=block_size, max_line=len(data) + 1, max_scan=len(data),
    ))
    assert lines == list(reversed(data.split(b"\n")))


@given(_DATA, st.integers(1, 70), st.integers(0, 60), st.integers(0, 400))
def test_reversed_lines_with_limits(
    scratch: Path, data: bytes, block_size: int, max_line: int, max_scan: int
) -> None:
    scratch.write_bytes(data)
    lines = list(iter_lines_reversed(
        scratch, block_size=block_size, max_line=max_line, max_scan=max_scan,
    ))
    assert lines == reference_lines(data, max_line, max_scan)


def test_overlong_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"first\n" + b"x" * 100 + b"\nmiddle\n" + b"y" * 51 + b"\nlast")
    lines = list(iter_lines_reversed(path, block_size=7, max_line=50))
    assert lines == [b"last", b"middle", b"first"]


def test_line_of_exactly_max_line_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"a\n" + b"x" * 50 + b"\n")
    assert list(iter_lines_reversed(path, block_size=8, max_line=50)) == [b"", b"x" * 50, b"a"]


def test_scan_floor_drops_the_cut_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"0123456789\nabc\ndef")
    assert list(iter_lines_reversed(path, block_size=4, max_scan=9)) == [b"def", b"abc"]


# --- realistic transcripts --------------------------------------------------------------------

_counter = iter(range(1, 1_000_000))


def _envelope(kind: str, **fields: Any) -> dict[str, Any]:
    number = next(_counter)
    return {
        "parentUuid": f"uuid-{number - 1}",
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/project",
        "sessionId": SESSION,
        "version": "2.1.328",
        "gitBranch": "main",
        "type": kind,
        "uuid": f"uuid-{number}",
        "timestamp": "2026-11-30T07:00:00.000Z",
        **fields,
    }


def user(text: str, **fields: Any) -> dict[str, Any]:
    return _envelope("user", message={"role": "user", "content": text}, **fields)


def stop_feedback(reason: str) -> dict[str, Any]:
    return user(f"Stop hook feedback:\n{reason}", isMeta=True)


def tool_result(tool_use_id: str, output: str) -> dict[str, Any]:
    return _envelope("user", message={"role": "user", "content": [
        {"tool_use_id": tool_use_id, "type": "tool_result", "content": output, "is_error": False}
    ]}, toolUseResult={"stdout": output, "stderr": "", "interrupted": False})


def assistant(message_id: str, *blocks: dict[str, Any], **fields: Any) -> list[dict[str, Any]]:
    """One line per content block, sharing message.id, as Claude Code writes them."""
    return [
        _envelope("assistant", requestId=f"req_{message_id}", message={
            "id": message_id, "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [block], "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
        }, **fields)
        for block in blocks
    ]


def thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": "c2lnbmF0dXJl"}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(tool_id: str, command: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}


def attachment() -> dict[str, Any]:
    return _envelope("attachment", attachment={"type": "todo", "content": [], "itemCount": 0})


def system(content: str) -> dict[str, Any]:
    return _envelope("system", subtype="stop_hook_summary", content=content, level="info")


def write_transcript(path: Path, *entries: dict[str, Any] | list[dict[str, Any]] | str) -> Path:
    lines: list[str] = []
    for entry in entries:
        if isinstance(entry, str):
            lines.append(entry)  # a raw (possibly garbage) line
        elif isinstance(entry, list):
            lines.extend(json.dumps(item) for item in entry)
        else:
            lines.append(json.dumps(entry))
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_last_text_block_of_the_final_message(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        _envelope("queue-operation", operation="enqueue"),
        user("Fix the tests"),
        attachment(),
        assistant("msg_01", thinking("look first"), text("Let me run them."),
                  tool_use("toolu_1", "pytest -q")),
        tool_result("toolu_1", "1 failed"),
        assistant("msg_02", thinking("fix it"), text("Fixed the bug."),
                  text("All green. <promise>DONE</promise>"), tool_use("toolu_2", "true")),
        system("Stop hook ran"),
        attachment(),
        _envelope("last-prompt", lastPrompt="Fix the tests"),
    )
    assert last_assistant_text(path) == "All green. <promise>DONE</promise>"


def test_text_block_before_a_trailing_tool_use(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        user("go"),
        assistant("msg_01", thinking("t"), text("Running the suite"), tool_use("toolu_1", "ls")),
    )
    assert last_assistant_text(path) == "Running the suite"


def test_final_message_without_text_is_empty(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        user("go"),
        assistant("msg_01", text("Earlier reply <promise>DONE</promise>")),
        tool_result("toolu_0", "ok"),
        assistant("msg_02", thinking("hmm"), tool_use("toolu_1", "ls")),
    )
    assert last_assistant_text(path) == ""


def test_different_message_id_ends_the_search(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        user("go"),
        assistant("msg_01", text("old text")),
        assistant("msg_02", thinking("only thinking")),
    )
    assert last_assistant_text(path) == ""


def test_meta_user_lines_are_skipped(tmp_path: Path) -> None:
    """A Stop hook's feedback sits after the reply while the next one is not yet written."""
    path = write_transcript(
        tmp_path / "t.jsonl",
        user("go"),
        assistant("msg_01", thinking("t"), text("Iteration one reply")),
        system("Stop hook feedback"),
        stop_feedback("Ralph iteration 2/8: output <promise>DONE</promise> ...\n\ngo"),
        attachment(),
    )
    assert last_assistant_text(path) == "Iteration one reply"


def test_meta_line_between_messages_does_not_join_them(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        user("go"),
        assistant("msg_01", text("Iteration one <promise>DONE</promise>")),
        stop_feedback("Ralph iteration 2/8"),
        assistant("msg_02", thinking("no text this time"), tool_use("toolu_9", "ls")),
    )
    assert last_assistant_text(path) == ""


def test_user_prompt_ends_the_search(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        assistant("msg_01", text("before the prompt")),
        user("a new prompt"),
    )
    assert last_assistant_text(path) == "before the prompt"
    path = write_transcript(
        tmp_path / "t.jsonl",
        assistant("msg_01", text("before the prompt")),
        user("a new prompt"),
        assistant("msg_02", thinking("t")),
    )
    assert last_assistant_text(path) == ""


def test_sidechain_lines_are_ignored(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        user("go"),
        assistant("msg_01", text("Main thread reply")),
        assistant("msg_side", text("Subagent reply <promise>DONE</promise>"), isSidechain=True),
        user("subagent prompt", isSidechain=True),
    )
    assert last_assistant_text(path) == "Main thread reply"


def test_garbage_lines_are_skipped(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        "not json at all",
        user("go"),
        assistant("msg_01", text("The reply")),
        "",
        "[1, 2, 3]",
        '"a string"',
        "null",
        '{"type": "assistant", "message": "not a dict"}',
        '{"type": "assistant", "message": {"id": "msg_01", "content": [{"type": "text"}]}}',
        '{"type": "assistant", "message": {"id": "msg_01", "content": [42, "x"]}}',
        "\xff\xfe garbage",
        '{"type": "assist',
    )
    assert last_assistant_text(path) == "The reply"


def test_truncated_last_line_without_newline(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", user("go"), assistant("msg_01", text("whole")))
    with open(path, "a") as handle:
        handle.write('{"type": "assistant", "message": {"id": "msg_02", "content": [{"ty')
    assert last_assistant_text(path) == "whole"


def test_string_content(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        user("go"),
        _envelope("assistant", message={"id": "msg_01", "role": "assistant", "content": "plain"}),
    )
    assert last_assistant_text(path) == "plain"


def test_invalid_utf8_bytes_in_other_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = json.dumps(assistant("msg_01", text("ok"))[0]).encode()
    path.write_bytes(b"\xff\xfe\x00garbage\n" + good + b"\n\xc3\x28\n")
    assert last_assistant_text(path) == "ok"


@pytest.mark.parametrize(
    "content", ["", "\n\n", "not json\n", json.dumps(user("only a user line")) + "\n"]
)
def test_no_assistant_message_is_none(tmp_path: Path, content: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(content)
    assert last_assistant_text(path) is None


def test_missing_file_is_none(tmp_path: Path) -> None:
    assert last_assistant_text(tmp_path / "absent.jsonl") is None


def test_directory_is_none(tmp_path: Path) -> None:
    assert last_assistant_text(tmp_path) is None


def test_unusable_path_is_none(tmp_path: Path) -> None:
    assert last_assistant_text(tmp_path / "a\x00b.jsonl") is None


def test_reply_beyond_the_scan_window_is_none(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        assistant("msg_01", text("far back")),
        *[tool_result(f"toolu_{n}", "x" * 100) for n in range(20)],
    )
    assert last_assistant_text(path, max_scan=1000) is None
    assert last_assistant_text(path) == "far back"


def test_twenty_megabytes_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    filler = json.dumps(tool_result("toolu_x", "o" * 4000)) + "\n"
    huge_line = json.dumps(tool_result("toolu_big", "h" * (9 * 1024 * 1024))) + "\n"
    with open(path, "w") as handle:
        handle.write(json.dumps(user("go")) + "\n")
        handle.write(json.dumps(assistant("msg_01", text("the early reply"))[0]) + "\n")
        handle.write(huge_line)  # over MAX_LINE_BYTES: skipped, never held whole
        for _ in range(12 * 1024 * 1024 // len(filler)):
            handle.write(filler)
    assert path.stat().st_size > 20 * 1024 * 1024
    # Only tool results after the reply: the whole file is scanned back to the start.
    tracemalloc.start()
    try:
        found = last_assistant_text(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found == "the early reply"
    assert peak < 20 * 1024 * 1024


# --- tool calls since the turn started --------------------------------------------------------


def tool_results(*ids: str) -> dict[str, Any]:
    """One user line answering parallel tool calls."""
    return _envelope("user", message={"role": "user", "content": [
        {"tool_use_id": tool_id, "type": "tool_result",
         "content": [{"type": "text", "text": "ok"}]} for tool_id in ids
    ]})


def meta_feedback_blocks(reason: str) -> dict[str, Any]:
    """Stop hook feedback written with a list of text blocks rather than a string."""
    return _envelope("user", isMeta=True, message={"role": "user", "content": [
        {"type": "text", "text": f"Stop hook feedback:\n{reason}"}
    ]})


def sidechain_tool_use(tool_id: str) -> list[dict[str, Any]]:
    return assistant("msg_side", tool_use(tool_id, "ls"), isSidechain=True)


FIRST_TURN: tuple[Any, ...] = (
    user("/ralph-loop Fix the tests --max-iterations 5"),
    attachment(),
    assistant("msg_01", thinking("plan"), tool_use("toolu_01", "pytest -q")),
    tool_result("toolu_01", "1 failed"),
    assistant("msg_02", text("Editing."), tool_use("toolu_02", "sed -i s/a/b/ app.py")),
    tool_result("toolu_02", ""),
    assistant("msg_03", text("Fixed one test.")),
    system("Stop hook blocked"),
)


def test_tool_calls_of_the_first_turn(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", *FIRST_TURN)
    assert tool_calls_since_turn_start(path) == 2


def test_stop_hook_feedback_starts_the_count_again(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        *FIRST_TURN,
        stop_feedback("Ralph iteration 2/5: ..."),
        assistant("msg_04", thinking("again"), tool_use("toolu_03", "pytest -q"),
                  tool_use("toolu_04", "git diff"), tool_use("toolu_05", "cat app.py")),
        tool_results("toolu_03", "toolu_04", "toolu_05"),
        sidechain_tool_use("toolu_side_1"),
        sidechain_tool_use("toolu_side_2"),
        assistant("msg_05", text("Three checks done.")),
        system("Stop hook blocked"),
    )
    assert tool_calls_since_turn_start(path) == 3


@pytest.mark.parametrize("feedback", [stop_feedback, meta_feedback_blocks])
def test_a_talk_only_iteration_has_no_tool_calls(tmp_path: Path, feedback: Any) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        *FIRST_TURN,
        feedback("Ralph iteration 2/5: ..."),
        assistant("msg_04", thinking("hmm"), text("I think it is fine now.")),
    )
    assert tool_calls_since_turn_start(path) == 0


def test_a_typed_prompt_with_blocks_starts_a_turn(tmp_path: Path) -> None:
    typed = _envelope("user", message={"role": "user", "content": [
        {"type": "text", "text": "look at this"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
    ]})
    path = write_transcript(tmp_path / "t.jsonl", *FIRST_TURN, typed,
                            assistant("msg_04", tool_use("toolu_09", "open x.png")),
                            tool_result("toolu_09", "ok"), assistant("msg_05", text("Seen.")))
    assert tool_calls_since_turn_start(path) == 1


def test_compact_json_and_garbage_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    compact = [
        json.dumps(entry, separators=(",", ":"))
        for entry in (stop_feedback("go on"),
                      *assistant("msg_04", tool_use("toolu_03", "make"),
                                 tool_use("toolu_04", "make test")),
                      tool_results("toolu_03", "toolu_04"))
    ]
    path.write_text("\n".join([*compact, '{"type": "assistant", "message": {"content": [',
                               "\xff\xfe not json", '["tool_use"]', ""]))
    assert tool_calls_since_turn_start(path) == 2


def test_without_any_turn_start_every_call_counts(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl",
                            assistant("msg_01", tool_use("toolu_01", "ls")),
                            tool_result("toolu_01", "a b"),
                            assistant("msg_02", tool_use("toolu_02", "ls -l")))
    assert tool_calls_since_turn_start(path) == 2
    (tmp_path / "empty.jsonl").write_text("")
    assert tool_calls_since_turn_start(tmp_path / "empty.jsonl") == 0


@pytest.mark.parametrize("name", ["missing.jsonl", "a\x00b.jsonl", ""])
def test_unreadable_transcript_cannot_tell(tmp_path: Path, name: str) -> None:
    assert tool_calls_since_turn_start(tmp_path / name if name else tmp_path) is None


def test_tool_calls_beyond_the_scan_window_are_not_seen(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        stop_feedback("go on"),
        assistant("msg_01", tool_use("toolu_01", "pytest")),
        *[tool_result(f"toolu_{n}", "x" * 100) for n in range(20)],
        assistant("msg_02", text("done")),
    )
    assert tool_calls_since_turn_start(path) == 1
    assert tool_calls_since_turn_start(path, max_scan=1000) == 0


# --- active_goal: the goal_status lines Claude Code 2.1.328 writes ----------------------------


def goal_line(**fields: Any) -> str:
    return json.dumps({"type": "attachment", "attachment": {"type": "goal_status", **fields}})


SET = goal_line(met=False, sentinel=True, condition="all tests pass")
NOT_MET = goal_line(met=False, condition="all tests pass", reason="tests not run")
MET = goal_line(met=True, condition="all tests pass", reason="green", iterations=3, tokens=92)
IMPOSSIBLE = goal_line(met=False, failed=True, condition="all tests pass", reason="no",
                       iterations=1, tokens=37)
CLEARED = goal_line(met=True, sentinel=True, condition="all tests pass")
TALK = json.dumps({"type": "assistant", "message": {"id": "m", "content": [
    {"type": "text", "text": '"goal_status" is only words here'}]}})


@pytest.mark.parametrize(
    ("lines", "active"),
    [
        ([SET], "all tests pass"),
        ([SET, TALK, NOT_MET, TALK], "all tests pass"),
        ([SET, NOT_MET, MET], None),
        ([SET, IMPOSSIBLE], None),
        ([SET, NOT_MET, CLEARED, TALK], None),
        ([SET, MET, goal_line(met=False, sentinel=True, condition="docs written")],
         "docs written"),
        ([goal_line(met=False, sentinel=True)], "(a goal)"),
        ([TALK], None),
        ([], None),
        ([SET, "{not json", '{"type": "attachment", "attachment": "goal_status"}'],
         "all tests pass"),
    ],
)
def test_active_goal(tmp_path: Path, lines: list[str], active: str | None) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    assert active_goal(path) == active


def test_active_goal_of_what_cannot_be_read(tmp_path: Path) -> None:
    assert active_goal(tmp_path / "missing.jsonl") is None
    assert active_goal(tmp_path) is None
