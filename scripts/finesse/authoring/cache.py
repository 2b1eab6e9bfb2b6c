"""Exploration cache: what a planning session learned about the project, kept while true.

`.finesse/exploration-cache.json` holds a baseline (the project's shape, from a full
exploration) and entries keyed `<directory_scope>:<keyword>`, each tied to the commit it was
confirmed at. An entry is stale once one of its files changed since that commit; the whole
cache is stale once more than `staleness_threshold` files changed since the baseline's
commit. `.finesse/config.json` holds the settings (and the budget's context window).

`merge` and `check_freshness` are pure; `GitHistory` asks git; `CacheStore` does the file
work: a lock around every read-modify-write, temp file plus `os.replace` for every write,
and an unreadable cache moved aside with a notice, never silently replaced.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, ValidationError, model_validator

from finesse.errors import StateError, UsageError
from finesse.state.store import utcnow
from finesse.support.files import FileProblem, read_bytes, write_atomic
from finesse.support.git import GitError, Repository, open_repository
from finesse.support.locks import LockTimeout, exclusive
from finesse.support.strict import StrictModel, problems

FINESSE_DIR = ".finesse"
CACHE_FILE_NAME = "exploration-cache.json"
CONFIG_FILE_NAME = "config.json"
LOCK_TIMEOUT_SECONDS = 15.0
# Full hex only: the hash reaches `git diff` as an argument, so nothing option-shaped.
CommitHash = Annotated[str, StringConstraints(pattern=r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]


class FinesseConfig(StrictModel):
    version: Literal[1] = 1
    cache_enabled: bool = True
    staleness_threshold: int = Field(default=50, ge=0)
    context_window: int = Field(default=200_000, gt=0)


class Baseline(StrictModel):
    commit_hash: CommitHash
    last_confirmed: datetime
    file_structure_patterns: list[str] = Field(default_factory=list)
    test_framework: str | None = None
    naming_conventions: list[str] = Field(default_factory=list)
    architecture_style: str | None = None
    key_directories: list[str] = Field(default_factory=list)


class CacheEntry(StrictModel):
    summary: NonEmpty
    referenced_files: list[NonEmpty] = Field(min_length=1)
    keywords: list[NonEmpty] = Field(min_length=1)
    directory_scope: NonEmpty
    last_confirmed: datetime
    commit_hash: CommitHash

    @property
    def key(self) -> str:
        return entry_key(self.directory_scope, self.keywords[0])


class ExplorationCache(StrictModel):
    version: Literal[1] = 1
    baseline: Baseline | None = None
    entries: dict[str, CacheEntry] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _keys_match_entries(self) -> ExplorationCache:
        for key, entry in self.entries.items():
            if key not in {entry_key(entry.directory_scope, word) for word in entry.keywords}:
                raise ValueError(f"entry {key!r} is not keyed <directory_scope>:<keyword>")
        return self


def entry_key(directory_scope: str, keyword: str) -> str:
    return f"{directory_scope}:{keyword}"


def merge(
    cache: ExplorationCache, entries: Iterable[CacheEntry], baseline: Baseline | None = None,
) -> ExplorationCache:
    """Same key overwrites, a new key appends; a baseline (full exploration) replaces the
    old one whole."""
    merged = dict(cache.entries)
    for entry in entries:
        merged[entry.key] = entry
    return ExplorationCache(baseline=baseline or cache.baseline, entries=merged)


ChangedSince = Callable[[str], "frozenset[str] | None"]  # None: the commit is unknown


@dataclass(frozen=True)
class Freshness:
    cache: ExplorationCache  # what is still true
    dropped: dict[str, str] = field(default_factory=dict)  # entry key -> why it went
    discarded: str | None = None  # why the whole cache went, when it did


def check_freshness(cache: ExplorationCache, changed_since: ChangedSince,
                    staleness_threshold: int) -> Freshness:
    if cache.baseline is not None:
        short = cache.baseline.commit_hash[:7]
        changed = changed_since(cache.baseline.commit_hash)
        reason = None
        if changed is None:
            reason = f"the baseline commit {short} is not in this repository"
        elif len(changed) > staleness_threshold:
            reason = (f"{len(changed)} files changed since the baseline commit {short}, "
                      f"more than the staleness threshold {staleness_threshold}")
        if reason is not None:
            dropped = {key: "the whole cache was discarded" for key in cache.entries}
            return Freshness(ExplorationCache(), dropped, reason)
    fresh: dict[str, CacheEntry] = {}
    dropped = {}
    for key, entry in cache.entries.items():
        changed = changed_since(entry.commit_hash)
        if changed is None:
            dropped[key] = f"its commit {entry.commit_hash[:7]} is not in this repository"
            continue
        touched = [path for path in entry.referenced_files if path in changed]
        if touched:
            more = f" and {len(touched) - 2} more" if len(touched) > 2 else ""
            dropped[key] = (f"{', '.join(touched[:2])}{more} changed since "
                            f"{entry.commit_hash[:7]}")
            continue
        fresh[key] = entry
    return Freshness(ExplorationCache(baseline=cache.baseline, entries=fresh), dropped)


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
        data: Any = json.loads(raw)
    except ValueError:
        return
    version = data.get("version") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > 1:
        raise StateError(f"{path} was written by a newer finesse (version {version}); "
                         "upgrade finesse, or run `finesse cache clear` to start over")
