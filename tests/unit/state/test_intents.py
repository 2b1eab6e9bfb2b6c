"""Intent records read by the lock holder: a record that is not one is moved aside to
`corrupt/`, never trusted and never lost, however often it happens."""

from __future__ import annotations

from pathlib import Path

from finesse.state.intents import Intents
from finesse.state.paths import StatePaths
from tests.helpers.states import SESSION


def test_unreadable_records_are_moved_aside_each_kept(tmp_path: Path) -> None:
    paths = StatePaths(tmp_path)
    intents = Intents(paths)
    for garbage in (b"not json", b"[" * 100_000, b'{"no": "op"}', b"\xff\xfe"):
        paths.intents.mkdir(parents=True, exist_ok=True)
        paths.intent_file(SESSION).write_bytes(garbage)
        assert intents.read(SESSION) is None
        assert not paths.intent_file(SESSION).exists()
    kept = sorted(p.read_bytes() for p in paths.corrupt.iterdir())
    assert kept == sorted([b"not json", b"[" * 100_000, b'{"no": "op"}', b"\xff\xfe"])
    assert all(p.name.startswith(f"intent-{SESSION}.") for p in paths.corrupt.iterdir())


def test_a_reader_without_the_lock_moves_nothing(tmp_path: Path) -> None:
    paths = StatePaths(tmp_path)
    paths.intents.mkdir(parents=True)
    paths.intent_file(SESSION).write_bytes(b"not json")
    assert Intents(paths).read(SESSION, repair=False) is None
    assert paths.intent_file(SESSION).read_bytes() == b"not json"
    assert not paths.corrupt.exists()


def test_a_record_written_reads_back_with_who_wrote_it(tmp_path: Path) -> None:
    intents = Intents(StatePaths(tmp_path))
    intents.write(SESSION, {"op": "start", "started_at": "t"})
    record = intents.read(SESSION)
    assert record is not None and (record["op"], record["started_at"]) == ("start", "t")
    assert isinstance(record["pid"], int) and isinstance(record["written_ns"], int)
    intents.clear(SESSION)
    assert intents.read(SESSION) is None
