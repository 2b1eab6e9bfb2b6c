"""Files the plugin reads and writes, and file names shown to people. Standard library only:
the Stop hook uses it.

- `read_bytes` / `read_text`: a regular file only (a FIFO, a device or a socket is refused
  before anything blocks on it), at most `limit` bytes, UTF-8 for text. Every refusal is a
  `FileProblem`, one line: `<subject>: <what is wrong>; <what to do>`.
- `open_regular`: the same check for readers of their own (the transcript, the loop-done
  file): an open file, or None.
- `write_atomic`: the one atomic writer: a temp file (beside the target, or in the plugin's
  own folder), synced, then `os.replace`, so a crash leaves the old file or the new one,
  never half of one; links, mode and owner kept; `fault_point` is its kill points.
- `shown_name` / `shown_path`: a name fit for a one-line message, whatever bytes it holds.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from pathlib import Path
from typing import BinaryIO

from finesse.errors import UsageError

MAX_TEXT_BYTES = 1024 * 1024
# Opening for a read never blocks (a FIFO), never takes a terminal, never translates line
# ends: each flag where the platform has it (Windows has no FIFOs and no O_NONBLOCK).
READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
              | getattr(os, "O_BINARY", 0))
# A lone surrogate that is not an undecodable byte of a file name (U+DC80 to U+DCFF).
_OTHER_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


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


def storable(text: str) -> bytes:
    """`text` as UTF-8: the bytes of undecodable file names (U+DC80 to U+DCFF) as they were,
    any other lone surrogate as U+FFFD. Never fails."""
    try:
        return text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:  # ("replace" would give "?", and for the name bytes too)
        return _OTHER_SURROGATE.sub("\ufffd", text).encode("utf-8", errors="surrogateescape")


# Kill points for the crash-safety tests (docs/design.md, "Crash safety"): with this set to
# N, the process SIGKILLs itself right after the N-th step of its atomic writes (the steps of
# one write: the temp file made, its bytes written and synced, the rename, the folder
# synced). Read at each step, so a test sweeps every instant of every write of a hook.
FAULT_ENV = "FINESSE_FAULT_DIE_AFTER_WRITE_STEP"
_steps_taken = [0]


def fault_point() -> None:
    """One step of an atomic write done: die here when FAULT_ENV says so (tests only)."""
    limit = os.environ.get(FAULT_ENV)
    if not limit:
        return
    _steps_taken[0] += 1
    if str(_steps_taken[0]) == limit.strip():
        from finesse.support.processes import kill_self

        kill_self()


def real_target(path: Path) -> Path:
    """The file a write to `path` must change: `path` itself, or, when it is a symbolic
    link (a settings file linked into a dotfiles folder, a plan linked from elsewhere), the
    file the link chain ends at, so the link stays a link."""
    try:
        if not os.path.islink(path):
            return path
    except (OSError, ValueError):
        return path
    return Path(os.path.realpath(path))


def _temp_folder(folder: Path, temp_dir: Path | None) -> Path:
    """Where a write's temp file goes: `temp_dir` (the plugin's own folder, which no commit
    and no revert ever touches) when it is on the target's file system, so the rename
    stays atomic; else beside the target."""
    if temp_dir is None:
        return folder
    try:
        temp_dir.mkdir(parents=True, exist_ok=True)
        if os.stat(temp_dir).st_dev == os.stat(folder).st_dev:
            return temp_dir
    except OSError:
        pass
    return folder


def sync_folder(folder: Path) -> None:
    """Make a rename into `folder` durable (POSIX; a folder cannot be opened on Windows)."""
    if os.name == "nt":
        return
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def write_atomic(path: Path, text: str, *, temp_dir: Path | None = None,
                 durable: bool = False, follow_links: bool = True) -> None:
    """Write `text` (UTF-8; lone surrogates from undecodable names kept as their bytes):
    a temp file, synced, then renamed over the target, so a crash leaves the old file or
    the new one, never half of one.

    What the user set up is kept: through a symbolic link the link's target is written and
    the link stays; an existing file keeps its mode and, where the process may set them,
    its owner and group. `temp_dir`: where the temp file goes when it is on the target's
    file system (a file in the project tree passes the plugin's own folder, so a kill
    before the rename leaves nothing a commit could pick up). `durable`: the folder is
    synced after the rename too, so the new file survives a power cut (intent records).
    `follow_links=False`: a link at `path` is replaced by the file (`ralph ci --force`).
    """
    target = real_target(path) if follow_links else path
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        before: os.stat_result | None = os.stat(target)
    except (OSError, ValueError):
        before = None
    # Not tempfile: it costs the Stop hook more to import than this whole function takes.
    temporary = (_temp_folder(folder, temp_dir)
                 / f".{target.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                         0o644 if before is None else 0o600)
    try:
        fault_point()
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(storable(text))
            handle.flush()
            if before is not None:
                _keep_owner_and_mode(handle.fileno(), before)
            os.fsync(handle.fileno())
        fault_point()
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    fault_point()
    if durable:
        sync_folder(folder)
    fault_point()


def _keep_owner_and_mode(descriptor: int, before: os.stat_result) -> None:
    if hasattr(os, "fchown") and (before.st_uid, before.st_gid) != (os.getuid(), os.getgid()):
        with contextlib.suppress(OSError):  # only root may give a file away
            os.fchown(descriptor, before.st_uid, before.st_gid)
    if hasattr(os, "fchmod"):
        os.fchmod(descriptor, stat.S_IMODE(before.st_mode))


def remove_stale_temps(folder: Path, prefix: str = ".") -> list[str]:
    """Remove the temp files of `write_atomic` in `folder` (named `<prefix>...`) whose writer
    is gone (a write killed before its rename); the names removed. A live writer's temp (its
    pid still runs) stays."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        parts = entry.name.rsplit(".", 3)
        if (not entry.name.startswith(prefix) or len(parts) != 4 or parts[3] != "tmp"
                or not parts[1].isdigit()):
            continue
        from finesse.support.processes import pid_alive  # only when there is one

        if int(parts[1]) != os.getpid() and pid_alive(int(parts[1])):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(entry.name)
    return removed
