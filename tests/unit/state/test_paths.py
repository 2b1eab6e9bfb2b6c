"""Where a project's loop state lives, and that a session id never becomes a path."""

from __future__ import annotations

from pathlib import Path

import pytest

from finesse.state.store import LoopStore
from tests.helpers.states import SESSION


def test_paths(git_repo: Path, store: LoopStore) -> None:
    base = git_repo / ".claude" / "ralph"
    assert store.paths.loop_file(SESSION) == base / "loops" / f"{SESSION}.json"
    assert store.paths.lock_file(SESSION) == base / "locks" / f"{SESSION}.lock"
    assert (store.paths.history, store.paths.corrupt, store.paths.kill_switch) == (
        base / "history", base / "corrupt", base / "STOP"
    )


@pytest.mark.parametrize("bad", ["", "../etc/passwd", "a/b", ".hidden", "-x", "a b", "x" * 129])
def test_session_ids_never_become_paths(store: LoopStore, bad: str) -> None:
    with pytest.raises(ValueError, match="not a session id"):
        store.paths.loop_file(bad)
