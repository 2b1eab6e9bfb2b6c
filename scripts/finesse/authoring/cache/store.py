"""The exploration cache on disk: `.finesse/exploration-cache.json` and
`.finesse/config.json`.

An entry is stale once one of its files changed since its commit; the whole cache is stale
once more than `staleness_threshold` files changed since the baseline's commit. `GitHistory`
asks git (through `support.git.Repository`); `CacheStore` does the file work: the package's
lock around every read-modify-write, temp file plus `os.replace` for every write, and an
unreadable cache moved aside with a notice, never silently replaced.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from finesse.authoring.cache.model import (
    Baseline,
    CacheEntry,
    ExplorationCache,
    FinesseConfig,
    check_freshness,
    merge,
)
from finesse.errors import StateError, UsageError
from finesse.state.store import utcnow
from finesse.support import json_text
from finesse.support.files import FileProblem, read_bytes
from finesse.support.git import GitError, Repository, open_repository
from finesse.support.locks import LockTimeout, exclusive
from finesse.support.strict import problems
from finesse.support.writes import write_atomic

FINESSE_DIR = ".finesse"
CACHE_FILE_NAME = "exploration-cache.json"
CONFIG_FILE_NAME = "config.json"
LOCK_TIMEOUT_SECONDS = 15.0


class GitHistory:
    """The project's repository as the cache asks it: HEAD, the files changed since a commit
    (each commit asked once), paths relative to the top. Through `support.git.Repository`."""

    def __init__(self, root: Path) -> None:
        self._stack = contextlib.ExitStack()
        repository = self._stack.enter_context(open_repository(root))
        if repository is None:
            self._stack.close()
            raise StateError(f"{root} is not in a git repository; the exploration cache ties "
                             "what it knows to commits: run `git init` and commit")
        self._repository: Repository = repository
        self.top = repository.top
        self._changed: dict[str, frozenset[str] | None] = {}

    def __enter__(self) -> GitHistory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()

    def head(self) -> str:
        sha = self._repository.head()
        if sha is None:
            raise StateError(f"the repository at {self.top} has no commit yet; "
                             "commit once, then add to the cache")
        return sha

    def changed_since(self, commit: str) -> frozenset[str] | None:
        if commit not in self._changed:
            self.head()
            self._changed[commit] = self._repository.changed_since(commit)
        return self._changed[commit]

    def relative(self, path: Path) -> str:
        try:
            return self._repository.relative(path)
        except GitError as err:
            raise UsageError(str(err)) from None


def load_config(root: Path) -> FinesseConfig:
    """`.finesse/config.json`, defaults when absent. A bad config is the user's own file:
    it is reported, never moved."""
    path = root / FINESSE_DIR / CONFIG_FILE_NAME
    try:
        raw = read_bytes(path, subject=str(path))
    except FileProblem as err:
        if err.kind == "missing":
            return FinesseConfig()
        raise StateError(str(err)) from None
    try:
        return FinesseConfig.model_validate_json(raw)
    except ValidationError as err:
        raise StateError(f"{path} is invalid ({problems(err, top='the file')}); fix it, or "
                         "delete it to use the defaults") from None


@dataclass(frozen=True)
class CacheView:
    cache: ExplorationCache
    dropped: dict[str, str] = field(default_factory=dict)
    discarded: str | None = None
    moved_aside: Path | None = None
    notice: str | None = None  # why the cache was moved aside
    replaced: tuple[str, ...] = ()  # keys `add` overwrote


class CacheStore:
    def __init__(self, root: Path, config: FinesseConfig | None = None) -> None:
        self.root = root
        self.config = config if config is not None else load_config(root)
        self.path = root / FINESSE_DIR / CACHE_FILE_NAME
        self.lock_path = self.path.with_name(self.path.name + ".lock")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with exclusive(self.lock_path, LOCK_TIMEOUT_SECONDS):
                yield
        except LockTimeout:
            raise StateError(f"another process holds {self.lock_path} for over "
                             f"{LOCK_TIMEOUT_SECONDS:.0f} s; try again") from None

    def load(self, history: GitHistory | None = None) -> CacheView:
        """The cache without its stale parts; nothing is written (see `prune`)."""
        if not self.path.exists():
            return CacheView(ExplorationCache())
        with self._locked():
            return self._load(history)

    def add(self, entries: Iterable[CacheEntry], baseline: Baseline | None = None,
            history: GitHistory | None = None) -> CacheView:
        if not self.config.cache_enabled:
            raise UsageError(f"the exploration cache is off: set cache_enabled to true in "
                             f"{self.root / FINESSE_DIR / CONFIG_FILE_NAME} to use it")
        with self._locked():
            view = self._load(history)
            entries = list(entries)
            merged = merge(view.cache, entries, baseline)
            write_atomic(self.path, merged.model_dump_json(indent=2) + "\n")
            replaced = tuple(e.key for e in entries if e.key in view.cache.entries)
            return CacheView(merged, view.dropped, view.discarded, view.moved_aside,
                             view.notice, replaced)

    def prune(self, history: GitHistory | None = None) -> CacheView:
        """Drop the stale entries (or the whole stale cache) from the file."""
        if not self.path.exists():
            return CacheView(ExplorationCache())
        with self._locked():
            view = self._load(history)
            if view.dropped or view.discarded:
                write_atomic(self.path, view.cache.model_dump_json(indent=2) + "\n")
            return view

    def clear(self) -> bool:
        """Delete the cache file; False when there was none."""
        with self._locked():
            try:
                self.path.unlink()
            except FileNotFoundError:
                return False
            return True

    def _load(self, history: GitHistory | None) -> CacheView:
        cache, moved_to, notice = self._read()
        if not cache.entries and cache.baseline is None:
            return CacheView(cache, moved_aside=moved_to, notice=notice)
        with contextlib.ExitStack() as stack:
            if history is None:
                history = stack.enter_context(GitHistory(self.root))
            fresh = check_freshness(cache, history.changed_since,
                                    self.config.staleness_threshold)
        return CacheView(fresh.cache, fresh.dropped, fresh.discarded, moved_to, notice)

    def _read(self) -> tuple[ExplorationCache, Path | None, str | None]:
        try:
            raw = read_bytes(self.path, subject=str(self.path))
        except FileProblem as err:
            if err.kind == "missing":
                return ExplorationCache(), None, None
            raise StateError(str(err)) from None
        _refuse_newer_version(raw, self.path)
        try:
            return ExplorationCache.model_validate_json(raw), None, None
        except ValidationError as err:
            problem = problems(err, top="the file")
        stamp = utcnow().strftime("%Y%m%dT%H%M%S%fZ")
        moved_to = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        os.replace(self.path, moved_to)
        return ExplorationCache(), moved_to, (
            f"the exploration cache was unreadable ({problem}); it was moved to "
            f"{moved_to} and the cache starts empty"
        )


def _refuse_newer_version(raw: bytes, path: Path) -> None:
    """A file from a newer finesse is not corrupt: leave it alone and say so."""
    try:
        data: Any = json_text.loads(raw)
    except ValueError:
        return
    version = data.get("version") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > 1:
        raise StateError(f"{path} was written by a newer finesse (version {version}); "
                         "upgrade finesse, or run `finesse cache clear` to start over")
