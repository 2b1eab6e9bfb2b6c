"""finesse.support.usage: the tool calls and token usage a transcript gained since the last
stop, read from the new bytes only, each API message counted once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from finesse.results import Cursor
from finesse.support import usage
from finesse.support.usage import Tokens, read_increment, start_cursor


def assistant(message_id: str, blocks: list[dict[str, object]], *, model: str = "claude-opus-4-5",
              tokens: tuple[int, int, int, int] = (10, 20, 30, 40), **extra: object) -> bytes:
    """One transcript line of an assistant message, as Claude Code writes one per block."""
    entry = {
        "type": "assistant", **extra,
        "message": {
            "id": message_id, "model": model, "role": "assistant", "content": blocks,
            "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1],
                      "cache_creation_input_tokens": tokens[2],
                      "cache_read_input_tokens": tokens[3]},
        },
    }
    return json.dumps(entry).encode() + b"\n"


TEXT = {"type": "text", "text": "done"}
TOOL = {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}
USER = json.dumps({"type": "user", "message": {"role": "user", "content": "go"}}).encode() + b"\n"


def append(path: Path, *lines: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(b"".join(lines))


def tokens(increment: usage.Increment | None) -> dict[str, Tokens]:
    assert increment is not None
    return increment.by_model


def test_a_message_split_over_lines_is_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(USER)
    cursor = start_cursor(path)
    append(path, assistant("m1", [TEXT]), assistant("m1", [TOOL]), assistant("m1", [TOOL]))
    found = read_increment(path, cursor)
    assert found is not None
    assert found.tool_calls == 2
    assert tokens(found) == {"claude-opus-4-5": Tokens(10, 20, 30, 40)}
    assert found.cursor == Cursor(path.stat().st_size, cursor.identity, ("m1",))
    assert cursor.identity == f"{path.stat().st_dev}:{path.stat().st_ino}"
    assert not found.partial


def test_each_stop_reads_only_what_was_added(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(assistant("old", [TOOL], tokens=(999, 999, 999, 999)))  # before the loop
    first = read_increment(path, start_cursor(path))
    assert first is not None and (first.tool_calls, first.by_model) == (0, {})
    append(path, USER, assistant("m1", [TEXT]))
    second = read_increment(path, first.cursor)
    append(path, USER, assistant("m2", [TOOL], model="claude-haiku-4-5", tokens=(1, 2, 3, 4)),
           assistant("m3", [TEXT], tokens=(5, 5, 5, 5)))
    third = read_increment(path, second.cursor if second else None)
    assert tokens(second) == {"claude-opus-4-5": Tokens(10, 20, 30, 40)}
    assert tokens(third) == {"claude-haiku-4-5": Tokens(1, 2, 3, 4),
                             "claude-opus-4-5": Tokens(5, 5, 5, 5)}
    assert third is not None and third.tool_calls == 1
    assert third.cursor is not None and third.cursor.recent_ids == ("m1", "m2", "m3")


def test_a_message_whose_lines_straddle_two_stops_is_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    append(path, assistant("m1", [TEXT]))
    first = read_increment(path, start_cursor(path.parent / "none"))  # no cursor: from the end
    append(path, assistant("m1", [TOOL]))
    second = read_increment(path, first.cursor if first else None)
    assert tokens(first) == {"claude-opus-4-5": Tokens(10, 20, 30, 40)}
    assert second is not None and (second.by_model, second.tool_calls) == ({}, 1)


def test_an_unfinished_last_line_waits_for_the_next_stop(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(USER)
    cursor = start_cursor(path)
    line = assistant("m1", [TOOL])
    append(path, line[:25])
    early = read_increment(path, cursor)
    assert early is not None and (early.tool_calls, early.by_model) == (0, {})
    assert early.cursor is not None and early.cursor.offset == len(USER)
    append(path, line[25:])
    late = read_increment(path, early.cursor)
    assert late is not None and late.tool_calls == 1
    assert tokens(late) == {"claude-opus-4-5": Tokens(10, 20, 30, 40)}


def test_garbage_and_foreign_lines_are_passed_over(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    cursor = start_cursor(path)
    deep = b'{"type": "assistant", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    append(path, b'{"type": "assistant", not json\n', b'"assistant"\n', b"[\"assistant\"]\n",
           deep, b'\xff\xfe "assistant" \x00\n',
           json.dumps({"type": "assistant", "message": "text"}).encode() + b"\n",
           json.dumps({"type": "user", "message": {"id": "u", "content": [TOOL],
                                                   "usage": {"input_tokens": 5}},
                       "note": "assistant"}).encode() + b"\n",
           assistant("side", [TOOL], isSidechain=True),  # a subagent's, in its own file
           assistant("bad", [TEXT, "not a block", TOOL],
                     tokens=(-5, True, "7", 2**40)),  # type: ignore[arg-type]
           assistant("m1", [TEXT]))
    found = read_increment(path, cursor)
    assert found is not None and found.tool_calls == 1
    assert tokens(found) == {"claude-opus-4-5": Tokens(10, 20, 30, 40 + 2**40)}
    assert found.cursor is not None and found.cursor.recent_ids == ("bad", "m1")


def test_a_message_without_id_or_model(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    cursor = start_cursor(path)
    no_id = json.loads(assistant("x", [TOOL]))
    del no_id["message"]["id"]
    no_model = json.loads(assistant("m2", [TEXT]))
    del no_model["message"]["model"]
    append(path, json.dumps(no_id).encode() + b"\n", json.dumps(no_model).encode() + b"\n")
    found = read_increment(path, cursor)
    assert found is not None and found.tool_calls == 1  # its tool call counts, not its usage
    assert tokens(found) == {"unknown": Tokens(10, 20, 30, 40)}


def test_a_transcript_rewritten_shorter_is_read_again_without_double_counting(
        tmp_path: Path) -> None:
    # /compact appends, but a transcript may also be rewritten: a cursor past the end means
    # the file is not the one it was. It is read again from a safe point; the messages
    # counted before are known by id.
    path = tmp_path / "t.jsonl"
    path.write_bytes(USER + USER + USER)
    cursor = start_cursor(path)
    append(path, assistant("m1", [TOOL]), assistant("m2", [TEXT]))
    first = read_increment(path, cursor)
    assert first is not None and first.cursor is not None
    path.write_bytes(assistant("m2", [TEXT]) + assistant("m3", [TOOL], tokens=(1, 1, 1, 1)))
    assert path.stat().st_size < first.cursor.offset
    again = read_increment(path, Cursor(first.cursor.offset, _identity(path),
                                        first.cursor.recent_ids))
    assert again is not None and again.partial
    assert tokens(again) == {"claude-opus-4-5": Tokens(1, 1, 1, 1)}


def test_a_replaced_transcript_starts_again(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(USER)
    cursor = start_cursor(path)
    append(path, assistant("m1", [TEXT]))
    first = read_increment(path, cursor)
    assert first is not None and first.cursor is not None
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(USER * 50 + assistant("m1", [TEXT]) + assistant("m2", [TEXT]))
    os.replace(replacement, path)  # a new inode: the offset means nothing there
    again = read_increment(path, first.cursor)
    assert again is not None and again.partial
    assert tokens(again) == {"claude-opus-4-5": Tokens(10, 20, 30, 40)}  # m2 only


def test_more_than_a_window_is_read_from_its_end_and_marked_partial(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usage, "WINDOW", 4096)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    cursor = start_cursor(path)
    append(path, assistant("early", [TOOL]), USER * 200, assistant("late", [TOOL]))
    found = read_increment(path, cursor)
    assert found is not None and found.partial and found.tool_calls == 1
    assert found.cursor is not None and found.cursor.recent_ids == ("late",)


def test_a_cursor_remembers_a_bounded_number_of_ids(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    cursor = start_cursor(path)
    append(path, *(assistant(f"m{n}", [TEXT]) for n in range(100)))
    found = read_increment(path, cursor)
    assert found is not None and found.cursor is not None
    assert found.cursor.recent_ids == tuple(f"m{n}" for n in range(100 - usage.RECENT_IDS, 100))
    assert tokens(found)["claude-opus-4-5"].output == 100 * 20


def test_what_cannot_be_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert read_increment(fifo, None) is None  # never blocks on a FIFO
    assert start_cursor(fifo) is None
    assert read_increment(tmp_path / "missing", None) is None
    assert start_cursor(tmp_path / "missing") is None
    assert read_increment(tmp_path, None) is None  # a directory
    assert read_increment(Path("bad\x00name"), None) is None


def _identity(path: Path) -> str:
    info = path.stat()
    return f"{info.st_dev}:{info.st_ino}"


def test_a_transcript_that_did_not_exist_yet_is_read_from_its_start(tmp_path: Path) -> None:
    # A session's first prompt starts the loop before Claude Code writes the transcript:
    # the cursor then has no identity and whatever file appears is read from offset 0.
    path = tmp_path / "t.jsonl"
    path.write_bytes(USER + assistant("m1", [TOOL]))
    found = read_increment(path, Cursor(0, ""))
    assert found is not None and not found.partial and found.tool_calls == 1
    assert tokens(found) == {"claude-opus-4-5": Tokens(10, 20, 30, 40)}
    assert found.cursor is not None and found.cursor.identity == _identity(path)
