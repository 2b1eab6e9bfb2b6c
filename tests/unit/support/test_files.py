"""Files the plugin reads and writes."""

from __future__ import annotations

from pathlib import Path

from finesse.support.files import write_atomic
from tests.helpers.states import files_under


def test_write_atomic_creates_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c.txt"
    write_atomic(target, "hello\n")
    assert target.read_text() == "hello\n"
    assert files_under(tmp_path) == ["a/b/c.txt"]
