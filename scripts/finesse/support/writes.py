"""The one atomic writer, and what it leaves behind. Standard library only: the Stop hook
uses it.

- `write_atomic`: a temp file (beside the target, or in the plugin's own folder), synced,
  then `os.replace`, so a crash leaves the old file or the new one, never half of one;
  links, mode and owner kept.
- `fault_point`: its kill points, for the crash-safety tests (`FAULT_ENV`).
- `remove_stale_temps`: the temps a killed writer left.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from pathlib import Path

_OTHER_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


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
    A temp file a killed write of this file left beside it is removed first.
    """
    target = real_target(path) if follow_links else path
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    # A temp a killed write of this very file left beside it (in the user's tree, for a
    # file there) never outlives the next write.
    remove_stale_temps(folder, of=target.name)
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


def remove_stale_temps(folder: Path, prefix: str = ".", of: str | None = None) -> list[str]:
    """Remove the temp files of `write_atomic` in `folder` (named `<prefix>...`, or with `of`
    those of that one file) whose writer is gone (a write killed before its rename); the
    names removed. A live writer's temp (its pid still runs) stays; with `of`, this
    process's too (another of its threads may be writing that file)."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        parts = entry.name.rsplit(".", 3)
        if (not entry.name.startswith(prefix) or len(parts) != 4 or parts[3] != "tmp"
                or not parts[1].isdigit() or (of is not None and parts[0] != f".{of}")):
            continue
        from finesse.support.processes import pid_alive  # only when there is one

        if int(parts[1]) == os.getpid():
            if of is not None:
                continue
        elif pid_alive(int(parts[1])):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(entry.name)
    return removed
