"""Files the plugin reads and writes: regular files only, never blocking on a FIFO; names
of any bytes shown on one line and stored as they were."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from finesse.support.files import FileProblem, open_regular, read_bytes, read_text, shown_name
from finesse.support.writes import storable, write_atomic
from tests.helpers.states import files_under


def test_write_atomic_creates_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c.txt"
    write_atomic(target, "hello\n")
    assert target.read_text() == "hello\n"
    assert files_under(tmp_path) == ["a/b/c.txt"]


@pytest.mark.parametrize(
    ("make", "kind", "message"),
    [
        (lambda p: None, "missing",
         "the prompt file: no such file; give the path of an existing file"),
        (lambda p: p.mkdir(), "directory", "the prompt file: that is a directory; give a file"),
        (lambda p: os.mkfifo(p), "not-regular",
         "the prompt file: not a regular file (a FIFO, device or socket); give a plain file"),
        (lambda p: p.write_bytes(b"x" * 11), "too-big",
         "the prompt file: over 10 bytes; point at a smaller file"),
    ],
)
def test_read_bytes_refuses_in_one_line(tmp_path: Path, make: Callable[[Path], object],
                                        kind: str, message: str) -> None:
    path = tmp_path / "p"
    make(path)
    with pytest.raises(FileProblem) as refused:
        read_bytes(path, subject="the prompt file", limit=10)
    assert (refused.value.kind, str(refused.value)) == (kind, message)


def test_read_text(tmp_path: Path) -> None:
    path = tmp_path / "p"
    path.write_bytes("café\n".encode())
    assert read_text(path, subject="it") == "café\n"
    path.write_bytes(b"caf\xe9\n")
    with pytest.raises(FileProblem, match=r"^it: not UTF-8 text; save it as UTF-8$"):
        read_text(path, subject="it")
    with pytest.raises(FileProblem, match=r"^it: not a usable file name$"):
        read_text(Path("a\x00b"), subject="it")


def test_open_regular_opens_files_only(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"data")
    handle = open_regular(path)
    assert handle is not None
    with handle:
        assert handle.read() == b"data"
    os.mkfifo(tmp_path / "fifo")
    for other in (tmp_path, tmp_path / "fifo", tmp_path / "missing", Path("a\x00b")):
        assert open_regular(other) is None  # and nothing blocked


def test_names_of_any_bytes_are_shown_on_one_line_and_stored() -> None:
    latin = os.fsdecode(b"caf\xe9.txt")
    assert shown_name("café.txt") == "café.txt"
    assert shown_name(latin) == "'caf\\udce9.txt'"
    assert shown_name("two\nlines") == "'two\\nlines'"
    assert storable(latin) == b"caf\xe9.txt"
    assert storable("lone \ud800") == "lone \ufffd".encode()
    assert storable(latin + "\udfff") == "caf\xe9.txt".encode("latin-1") + "\ufffd".encode()

def test_storable_keeps_name_bytes_and_replaces_other_lone_surrogates(tmp_path: Path) -> None:
    # An undecodable file name's bytes stay as they were; a lone surrogate from JSON is
    # U+FFFD (it was "?", and the name bytes beside it became "?" too).
    assert storable("caf\udce9 \ud800 \udfff ok") == b"caf\xe9 \xef\xbf\xbd \xef\xbf\xbd ok"
    assert storable("caf\udce9") == b"caf\xe9"
    write_atomic(tmp_path / "x.md", "fix \ud800 it")
    assert (tmp_path / "x.md").read_text(encoding="utf-8") == "fix \ufffd it"


def test_reads_where_the_platform_has_no_nonblocking_flag(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Windows has no O_NONBLOCK (and no FIFOs to guard against), and before Python 3.12 no
    # os.set_blocking for files: a read must not reach for either.
    from finesse.support import files

    def no_such_call(fd: int, blocking: bool) -> None:
        raise AttributeError("module 'os' has no attribute 'set_blocking'")

    monkeypatch.delattr(os, "O_NONBLOCK")
    monkeypatch.setattr(os, "set_blocking", no_such_call)
    path = tmp_path / "plan.md"
    path.write_bytes(b"# Plan\r\n")
    assert files.read_bytes(path, subject="the plan") == b"# Plan\r\n"
    handle = files.open_regular(path)
    assert handle is not None
    with handle:
        assert handle.read() == b"# Plan\r\n"
