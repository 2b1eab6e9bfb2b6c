"""The terminal door: the bell and single keys, on POSIX for real and on Windows through a
stand-in for msvcrt (which branch is taken, which calls are made)."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from finesse.support import terminal


def test_the_bell_rings_on_the_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tty = tmp_path / "tty"
    tty.write_bytes(b"")
    monkeypatch.setattr(terminal, "TTY", str(tty))
    assert (terminal.bell(), tty.read_bytes()) == ("", b"\a")


def test_no_terminal_no_bell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(terminal, "TTY", str(tmp_path / "none"))
    assert terminal.bell() == "no desktop notifier and no terminal for the bell"


def test_keys_from_a_pipe_are_read_as_they_come() -> None:
    reader, writer = os.pipe()
    try:
        keys = terminal.Keys(reader)
        assert keys.typed(0.01) == ""
        os.write(writer, b"q")
        assert keys.typed(1.0) == "q"
    finally:
        os.close(reader)
        os.close(writer)


def test_without_a_terminal_keys_only_wait() -> None:
    assert terminal.Keys(None).typed(0.01) == ""


class FakeConsole(types.ModuleType):
    def __init__(self, keys: str) -> None:
        super().__init__("msvcrt")
        self.keys = list(keys)
        self.written: list[str] = []

    def putwch(self, char: str) -> None:
        self.written.append(char)

    def kbhit(self) -> bool:
        return bool(self.keys)

    def getwch(self) -> str:
        return self.keys.pop(0)


def test_windows_rings_the_console_and_reads_its_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    console = FakeConsole("q")
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "msvcrt", console)
    assert terminal.bell() == ""
    assert console.written == ["\a"]
    keys = terminal.Keys(0)
    assert (keys.typed(1.0), keys.typed(0.1)) == ("q", "")
