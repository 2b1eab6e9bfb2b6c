"""Loop state on disk: atomic writes, corrupt files moved aside, locked read-modify-write."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from finesse.errors import StateError
from finesse.models import IterationRecord
from finesse.record import replace
from finesse.state import store as store_module
from finesse.state.store import CorruptStateError, LoopStore, Scan, UnreadableState
from tests.helpers.states import (
    OTHER_SESSION,
    SESSION,
    T0,
    T1,
    files_under,
    hold_lock,
    increment_iteration,
    lock_is_free,
    make_state,
    read_json,
    store_for,
)


def test_save_load_round_trip(git_repo: Path, store: LoopStore) -> None:
    record = IterationRecord(number=1, started_at=T0, ended_at=T1, result="continue",
                             reply_excerpt="working on it")
    state = make_state(git_repo, iteration=2, verify=["pytest -q", "ruff check"],
                       prompt="quotes ' \" $(x) `y`\nand a newline", iterations=[record],
                       prompt_file="plans/x.md", last_reply_excerpt="working on it")
    store.save(state)
    assert store.load(SESSION) == state
    assert read_json(store.paths.loop_file(SESSION)) == json.loads(state.to_json())


def test_load_without_a_loop_is_none(store: LoopStore) -> None:
    assert store.load(SESSION) is None


def test_save_leaves_no_temp_files(git_repo: Path, store: LoopStore) -> None:
    state = make_state(git_repo)
    store.save(state)
    store.save(replace(state, iteration=2))
    assert files_under(store.paths.base) == [f"loops/{SESSION}.json"]


def test_failed_write_keeps_the_old_file_and_no_temp(
    git_repo: Path, store: LoopStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = make_state(git_repo)
    store.save(state)

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        store.save(replace(state, iteration=5))
    monkeypatch.undo()
    assert files_under(store.paths.base) == [f"loops/{SESSION}.json"]
    assert store.load(SESSION) == state


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (b"{not json", "the file: not valid JSON (Expecting property name enclosed in double "
         "quotes: line 1 column 2 (char 1))"),
        (b"", "the file: not valid JSON (Expecting value: line 1 column 1 (char 0))"),
        (b"\xff\xfe\x00", "the file: not valid JSON ('utf-16-le' codec can't decode byte 0x00 in "
         "position 2: truncated data)"),
        (b"[1, 2]", "the file: expected an object"),
        (b"{}", "loop_id: missing"),
    ],
)
def test_unreadable_file_is_moved_aside(store: LoopStore, content: bytes, where: str) -> None:
    path = store.paths.loop_file(SESSION)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.raises(CorruptStateError) as caught:
        store.load(SESSION)
    moved_to = caught.value.moved_to
    assert str(caught.value) == (
        f"the loop state {SESSION}.json was unreadable ({where}); "
        f"it was moved to {moved_to} and the loop has stopped"
    )
    assert moved_to.parent == store.paths.corrupt
    assert moved_to.name.startswith(f"{SESSION}.") and moved_to.suffix == ".json"
    assert moved_to.read_bytes() == content
    assert not path.exists()
    assert store.load(SESSION) is None


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"iteration": 0}, "iteration: expected an integer >= 1"),
        ({"max_iterations": "many"},
         "max_iterations: expected an integer"),
        ({"version": 3}, "version: expected one of 2, not 3"),
        ({"outcome": "exploded"},
         "outcome: expected one of 'success', 'limit', 'cancelled', 'aborted', 'blocked', "
         "'failure', 'quiesced', 'timeout', 'budget', 'quota', 'error', not 'exploded'"),
        ({"surprise": True}, "surprise: unknown field"),
        ({"budgets": {"max_tokens": -1}},
         "budgets.max_tokens: expected an integer from 0 to 1000000000000"),
        ({"budgets": {"max_cost": -5.0}}, "budgets.max_cost: expected an amount from 0 to 1000000"),
        ({"budgets": {"stop_at_quota": 101}},
         "budgets.stop_at_quota: expected an integer from 0 to 100"),
    ],
)
def test_wrong_schema_is_moved_aside(
    git_repo: Path, store: LoopStore, change: dict[str, object], where: str
) -> None:
    store.save(make_state(git_repo))
    path = store.paths.loop_file(SESSION)
    data = read_json(path)
    data.update(change)
    path.write_text(json.dumps(data))
    with pytest.raises(CorruptStateError) as caught:
        store.load(SESSION)
    assert str(caught.value) == (
        f"the loop state {SESSION}.json was unreadable ({where}); "
        f"it was moved to {caught.value.moved_to} and the loop has stopped"
    )
    assert json.loads(caught.value.moved_to.read_text()) == data
    assert files_under(store.paths.base) == [f"corrupt/{caught.value.moved_to.name}"]


def test_corrupt_error_is_a_state_error() -> None:
    assert issubclass(CorruptStateError, StateError)


def test_a_directory_where_the_file_should_be_is_moved_aside(store: LoopStore) -> None:
    # Corruption of any kind is moved aside with a message, and the loop has stopped (this
    # test used to expect a plain StateError that left the directory in the way for ever).
    store.paths.loop_file(SESSION).mkdir(parents=True)
    with pytest.raises(CorruptStateError) as caught:
        store.load(SESSION)
    assert str(caught.value) == (
        f"the loop state {SESSION}.json was unreadable (that is a directory; give a file); it "
        f"was moved to {caught.value.moved_to} and the loop has stopped"
    )
    assert not store.paths.loop_file(SESSION).exists() and caught.value.moved_to.is_dir()


def test_a_file_that_cannot_be_read_is_a_state_error_and_stays(store: LoopStore,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    store.save(make_state(store.paths.root))

    def refuse(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("finesse.support.files.os.open", refuse)
    with pytest.raises(StateError) as caught:
        store.load(SESSION)
    assert not isinstance(caught.value, CorruptStateError)
    assert str(caught.value) == (
        f"{store.paths.loop_file(SESSION)}: cannot read it (Permission denied)")
    monkeypatch.undo()
    assert store.load(SESSION) is not None


def test_archive_writes_history_and_removes_the_active_file(
    git_repo: Path, store: LoopStore
) -> None:
    state = make_state(git_repo)
    store.save(state)
    ended = replace(state, **{"outcome": "success", "ended_at": T1,
                                     "end_message": "done"})
    target = store.archive(ended)
    assert target == store.paths.history / f"{state.loop_id}.json"
    assert files_under(store.paths.base) == [f"history/{state.loop_id}.json"]
    assert read_json(target) == json.loads(ended.to_json())
    assert store.history() == [ended]
    assert store.active_loops() == []


def test_archive_into_a_history_that_is_no_folder_says_so_and_keeps_the_loop(
    git_repo: Path, store: LoopStore
) -> None:
    """Something not a folder where history/ goes: the end was a FileExistsError traceback
    from `ralph run` and a silent stop from the hook. One line says what to do, and the
    loop's file is kept, so nothing of it is lost."""
    state = make_state(git_repo)
    store.save(state)
    store.paths.history.write_text("mine\n")
    ended = replace(state, **{"outcome": "success", "ended_at": T1, "end_message": "done"})
    with pytest.raises(StateError) as refused:
        store.archive(ended)
    assert str(refused.value) == (
        f"cannot archive the ended loop into {store.paths.history} (File exists): make it a "
        "writable folder (move what is there aside); the loop is still active, and its next "
        "stop or cancel ends it")
    assert store.load(SESSION) == state
    assert store.paths.history.read_text() == "mine\n"


def test_archive_refuses_an_active_loop(git_repo: Path, store: LoopStore) -> None:
    state = make_state(git_repo)
    store.save(state)
    with pytest.raises(ValueError, match="only an ended loop is archived"):
        store.archive(state)
    assert files_under(store.paths.base) == [f"loops/{SESSION}.json"]


def test_a_scan_reads_the_loops_oldest_first_and_moves_nothing(
        git_repo: Path, store: LoopStore) -> None:
    """Readers never write (issue 18): an unreadable file stays where it is, named in the
    scan, until its session's own stop moves it aside under the session's lock."""
    newer = make_state(git_repo, OTHER_SESSION, started_at=T1)
    older = make_state(git_repo, SESSION)
    store.save(newer)
    store.save(older)
    (store.paths.loops / "broken-session.json").write_text("{")
    (store.paths.loops / "..weird.json").write_text("{")  # no session has such an id
    (store.paths.loops / "notes.txt").write_text("x")
    before = files_under(store.paths.base)
    assert store.scan() == Scan([older, newer], [
        "..weird.json: not a session's loop file",
        "broken-session.json: the file: not valid JSON (Expecting property name enclosed in "
        "double quotes: line 1 column 2 (char 1))"])
    assert store.active_loops() == [older, newer]
    assert files_under(store.paths.base) == before
    with pytest.raises(CorruptStateError):
        store.load("broken-session")  # under the lock: repaired
    assert [name.split(".2026")[0] for name in files_under(store.paths.corrupt)] == [
        "broken-session"]


def test_a_scan_passes_over_a_corrupt_file_and_an_ended_loop(
        git_repo: Path, store: LoopStore) -> None:
    ended = make_state(git_repo)
    store.save(ended)
    store.paths.history.mkdir(parents=True)
    # Archived as ended, while its active file could not be removed (a read-only folder).
    (store.paths.history / f"{ended.loop_id}.json").write_text(
        replace(ended, outcome="cancelled", ended_at=T1).to_json())
    (store.paths.loops / f"{OTHER_SESSION}.json").write_text("[" * 100_000)
    assert store.scan() == Scan([], [
        f"{OTHER_SESSION}.json: the file: nested too deeply to be a loop state"])
    assert files_under(store.paths.loops) == [f"{SESSION}.json", f"{OTHER_SESSION}.json"]
    assert store.peek(SESSION) is None
    assert store.load(SESSION) is None  # the lock holder removes the ended loop's file
    assert files_under(store.paths.loops) == [f"{OTHER_SESSION}.json"]


def test_peek_leaves_an_unreadable_file_where_it_is(git_repo: Path, store: LoopStore) -> None:
    store.save(make_state(git_repo))
    store.paths.loop_file(SESSION).write_text("{")
    with pytest.raises(UnreadableState) as caught:
        store.peek(SESSION)
    assert str(caught.value) == (
        f"the loop state {SESSION}.json is unreadable (the file: not valid JSON (Expecting "
        "property name enclosed in double quotes: line 1 column 2 (char 1)))")
    assert files_under(store.paths.base) == [f"loops/{SESSION}.json"]


def test_log_appends_one_line_per_call(store: LoopStore) -> None:
    store.log("first\nwith a newline")
    store.log("second")
    lines = store.paths.log.read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == ["first with a newline", "second"]


def test_lock_is_exclusive_across_stores(tmp_path: Path) -> None:
    store = store_for(tmp_path)
    with store.locked(SESSION):
        assert not lock_is_free(store.paths.lock_file(SESSION))
    assert lock_is_free(store.paths.lock_file(SESSION))


def test_lock_timeout_is_a_state_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import finesse.state.store

    monkeypatch.setattr(finesse.state.store, "LOCK_TIMEOUT_SECONDS", 0.05)
    store = store_for(tmp_path)
    store.paths.locks.mkdir(parents=True)
    held = hold_lock(store.paths.lock_file(SESSION))
    with held, pytest.raises(StateError) as caught, store.locked(SESSION):
        pass
    assert str(caught.value) == (
        f"another process holds {store.paths.lock_file(SESSION)} for over 0 s; "
        "try again, or run `ralph status`"
    )


def test_concurrent_writers_lose_no_update(tmp_path: Path) -> None:
    processes, increments = 4, 25
    store = store_for(tmp_path)
    store.save(make_state(tmp_path, max_iterations=1000))
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=increment_iteration, args=(str(tmp_path), SESSION, increments))
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0] * processes
    final = store.load(SESSION)
    assert final is not None
    assert final.iteration == 1 + processes * increments
    assert files_under(store.paths.loops) == [f"{SESSION}.json"]


def test_the_loop_done_channel_is_read_once_and_only_from_a_regular_file(
        git_repo: Path, store: LoopStore) -> None:
    path = store.paths.loop_done_file(SESSION)
    assert not store.consume_loop_done(SESSION)  # nothing there
    path.write_text(" Done\n")
    assert store.consume_loop_done(SESSION) and not path.exists()
    path.write_text("not yet")
    assert not store.consume_loop_done(SESSION) and not path.exists()  # read and removed
    os.mkfifo(path)
    assert not store.consume_loop_done(SESSION) and path.exists()  # no signal, left alone


def test_a_resumed_loop_is_loaded_without_reading_its_old_record(
        git_repo: Path, store: LoopStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # The archived copy of a loop ended and then resumed: older than the active file, which
    # every stop rewrites; load reads the active file alone.
    state = make_state(git_repo)
    store.save(state)
    archived = store.archive(replace(state, outcome="limit", ended_at=T1))
    store.save(state)  # the resume, written after the archive
    os.utime(archived, ns=(1, 1))
    read: list[str] = []
    real = store_module.read_bytes

    def counting(path: Path, **options: object) -> bytes:
        read.append(Path(path).name)
        return real(path, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "read_bytes", counting)
    assert store.load(SESSION) == state
    assert read == [f"{SESSION}.json"]
    # Archived after the active file was last written: ended, read and honoured.
    os.utime(archived, ns=(2 * 10**18, 2 * 10**18))
    assert store.load(SESSION) is None
