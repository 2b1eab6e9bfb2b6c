"""What a set of paths holds, file by file: each file's name, size and modification time,
so two snapshots tell which files were created, changed or deleted in between. Standard
library only. Used for judge mode's `--protect` paths: ignored files count too (git is not
asked), and a symbolic link is recorded as a link, never followed out of the project.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from finesse.errors import UsageError
from finesse.support.files import shown_name

MAX_FILES = 20_000


class TooManyFiles(UsageError):
    """A path holds more files than a snapshot records."""


def _key(root: Path, path: Path, info: os.stat_result) -> str:
    name = path.relative_to(root).as_posix()
    kind = "link" if stat.S_ISLNK(info.st_mode) else "file"
    return f"{name}\t{kind}\t{info.st_size}\t{info.st_mtime_ns}"


def snapshot(root: Path, paths: Sequence[str], limit: int = MAX_FILES) -> list[str]:
    """One key per file (or link) under each of `paths` (relative to `root`), sorted; a path
    that does not exist contributes nothing. TooManyFiles past `limit` files."""
    keys: list[str] = []
    for name in paths:
        start = root / name
        try:
            info = os.lstat(start)
        except (OSError, ValueError):
            continue
        if not stat.S_ISDIR(info.st_mode):
            keys.append(_key(root, start, info))
            continue
        for folder, folders, files in os.walk(start):  # never follows links to folders
            folders.sort()
            for entry in sorted(files) + [f for f in folders
                                          if os.path.islink(os.path.join(folder, f))]:
                path = Path(folder) / entry
                try:
                    keys.append(_key(root, path, os.lstat(path)))
                except (OSError, ValueError):
                    continue
                if len(keys) > limit:
                    raise TooManyFiles(
                        f"{shown_name(name)} holds over {limit:,} files: protect narrower "
                        "paths")
    return sorted(set(keys))


def changed(before: Sequence[str], after: Sequence[str]) -> list[str]:
    """The names of the files created, changed or deleted between two snapshots."""
    difference = set(before) ^ set(after)
    return sorted({key.split("\t", 1)[0] for key in difference})
