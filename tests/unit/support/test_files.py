"""Files the plugin reads and writes."""

from __future__ import annotations

from pathlib import Path

from finesse.support.files import storable, write_atomic
from tests.helpers.states import files_under


def test_write_atomic_creates_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c.txt"
    write_atomic(target, "hello\n")
    assert target.read_text() == "hello\n"
    assert files_under(tmp_path) == ["a/b/c.txt"]


def test_storable_keeps_name_bytes_and_replaces_other_lone_surrogates(tmp_path: Path) -> None:
    # An undecodable file name's bytes stay as they were; a lone surrogate from JSON is
    # U+FFFD (it was "?", and the name bytes beside it became "?" too).
    assert storable("caf\udce9 \ud800 \udfff ok") == b"caf\xe9 \xef\xbf\xbd \xef\xbf\xbd ok"
    assert storable("caf\udce9") == b"caf\xe9"
    write_atomic(tmp_path / "x.md", "fix \ud800 it")
    assert (tmp_path / "x.md").read_text(encoding="utf-8") == "fix \ufffd it"
