"""Files the plugin reads and writes, and file names shown to people. Standard library only:
the Stop hook uses it.

- `read_bytes` / `read_text`: a regular file only (a FIFO, a device or a socket is refused
  before anything blocks on it), at most `limit` bytes, UTF-8 for text. Every refusal is a
  `FileProblem`, one line: `<subject>: <what is wrong>; <what to do>`.
- `open_regular`: the same check for readers of their own (the transcript, the loop-done
  file): an open file, or None.
- writing is `finesse.support.writes` (the one atomic writer).
- `shown_name` / `shown_path`: a name fit for a one-line message, whatever bytes it holds.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from finesse.errors import UsageError

MAX_TEXT_BYTES = 1024 * 1024
# Opening for a read never blocks (a FIFO), never takes a terminal, never translates line
# ends: each flag where the platform has it (Windows has no FIFOs and no O_NONBLOCK).
READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
              | getattr(os, "O_BINARY", 0))
# A lone surrogate that is not an undecodable byte of a file name (U+DC80 to U+DCFF).


class FileProblem(UsageError):
    """A file could not be read as asked; `kind` says why (missing, directory, not-regular,
    too-big, not-utf8, unreadable, bad-name)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def shown_name(name: str | os.PathLike[str]) -> str:
    """A name fit for a one-line message: as it is when printable, else quoted with escapes
    (a newline, a control character, or a byte that was not UTF-8)."""
    text = os.fspath(name)
    return text if text.isprintable() else ascii(text) if _has_surrogate(text) else repr(text)


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


def shown_path(path: Path, root: Path) -> str:
    """`path` relative to the project root when it is under it, else absolute; shown_name."""
    try:
        return shown_name(path.resolve().relative_to(root.resolve()).as_posix())
    except (ValueError, OSError):
        return shown_name(str(path))


def _size_words(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit} bytes"


def _blocking(descriptor: int) -> None:
    """Reads block again once the file is known to be regular (POSIX only has the flag)."""
    if hasattr(os, "O_NONBLOCK"):
        os.set_blocking(descriptor, True)


def read_bytes(path: Path, *, subject: str, limit: int = MAX_TEXT_BYTES,
               missing: str = "; give the path of an existing file") -> bytes:
    """The bytes of a regular file of at most `limit` bytes; else a FileProblem.

    The file is opened without blocking and checked with fstat before any read, so a FIFO
    or a device at the path costs nothing and never hangs the caller.
    """
    try:
        descriptor = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        raise FileProblem(f"{subject}: no such file{missing}", "missing") from None
    except IsADirectoryError:
        raise FileProblem(f"{subject}: that is a directory; give a file", "directory") from None
    except ValueError:  # an embedded NUL byte in the name
        raise FileProblem(f"{subject}: not a usable file name", "bad-name") from None
    except OSError as err:
        raise FileProblem(f"{subject}: cannot read it ({err.strerror})", "unreadable") from None
    try:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise FileProblem(f"{subject}: that is a directory; give a file", "directory")
        if not stat.S_ISREG(info.st_mode):
            raise FileProblem(f"{subject}: not a regular file (a FIFO, device or socket); "
                              "give a plain file", "not-regular")
    except BaseException:
        os.close(descriptor)
        raise
    too_big = FileProblem(f"{subject}: over {_size_words(limit)}; point at a smaller file",
                          "too-big")
    with os.fdopen(descriptor, "rb") as handle:
        if info.st_size > limit:
            raise too_big
        _blocking(descriptor)
        try:
            data = handle.read(limit + 1)
        except OSError as err:
            raise FileProblem(f"{subject}: cannot read it ({err.strerror})",
                              "unreadable") from None
    if len(data) > limit:
        raise too_big
    return data


def read_text(path: Path, *, subject: str, limit: int = MAX_TEXT_BYTES,
              missing: str = "; give the path of an existing file") -> str:
    """`read_bytes`, decoded as UTF-8 (a FileProblem when it is not)."""
    data = read_bytes(path, subject=subject, limit=limit, missing=missing)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileProblem(f"{subject}: not UTF-8 text; save it as UTF-8", "not-utf8") from None


def read_text_if_present(path: Path, *, subject: str, limit: int = MAX_TEXT_BYTES) -> str | None:
    """`read_text`, or None when there is no such file (the user's optional files)."""
    try:
        return read_text(path, subject=subject, limit=limit)
    except FileProblem as err:
        if err.kind == "missing":
            return None
        raise


def open_regular(path: Path) -> BinaryIO | None:
    """`path` opened for reading when it is a regular file, else None (missing, unreadable,
    a directory, a FIFO, a device: nothing blocks, nothing raises). The caller closes it."""
    try:
        descriptor = os.open(path, READ_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        regular = stat.S_ISREG(os.fstat(descriptor).st_mode)
        if regular:
            _blocking(descriptor)
    except OSError:
        regular = False
    if not regular:
        os.close(descriptor)
        return None
    return os.fdopen(descriptor, "rb")


def is_regular_file(path: Path) -> bool:
    """Whether `path` is a regular file (following links); never blocks, never raises."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
