"""The exploration cache's records (seed 000's Cache File Schema and Configuration File
Schema, field for field) and the pure rules over them: `merge` and `check_freshness`.

A cache written by hand to the seed's schema loads. The one older form finesse wrote,
`key_directories` as a list of directories, is read as a map whose responsibilities are
not recorded; the next write keeps the map.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from finesse.support.strict import StrictModel

# Full hex only: the hash reaches `git diff` as an argument, so nothing option-shaped.
CommitHash = Annotated[str, StringConstraints(pattern=r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]
NOT_RECORDED = "not recorded"


class PriceRates(StrictModel):
    """Dollars per million tokens of one model family (the loop's estimated cost)."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float = Field(ge=0)
    cache_read: float = Field(ge=0)


class FinesseConfig(StrictModel):
    """`.finesse/config.json`, the whole file: the Finesse tools' settings and the loop's
    `prices` (read for the loop by `finesse.loop.request.project_prices`), `notify`,
    `notify_cmd` and `no_html` (read by `finesse.loop.project_config`)."""

    version: Literal[1] = 1
    cache_enabled: bool = True
    staleness_threshold: int = Field(default=50, ge=0)
    context_window: int = Field(default=200_000, gt=0)
    prices: dict[str, PriceRates] = Field(default_factory=dict)
    notify: str | list[str] = Field(default_factory=list)  # desktop or http(s) URLs
    notify_cmd: str | list[str] = Field(default_factory=list)
    no_html: bool = False  # no HTML report beside the Markdown one


class Baseline(StrictModel):
    commit_hash: CommitHash
    last_confirmed: datetime
    file_structure_patterns: list[str] = Field(default_factory=list)
    test_framework: str | None = None
    naming_conventions: list[str] = Field(default_factory=list)
    architecture_style: str | None = None
    # Directory -> its responsibility (seed 000's schema).
    key_directories: dict[NonEmpty, str] = Field(default_factory=dict)

    @field_validator("key_directories", mode="before")
    @classmethod
    def _from_the_list_form(cls, value: object) -> object:
        """A cache written before responsibilities were kept lists the directories only:
        read it as a map whose responsibilities are not recorded (the next write keeps the
        map)."""
        if isinstance(value, list):
            return {directory: NOT_RECORDED for directory in value}
        return value


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
        """Seed 000: a key is `<directory_scope>:<keyword>`, the scope the entry's own
        `directory_scope`, the keyword a descriptive tag (`src/auth:jwt-validation`), which
        need not be one of the entry's `keywords`."""
        for key, entry in self.entries.items():
            tag = key.removeprefix(f"{entry.directory_scope}:")
            if tag == key or not tag.strip():
                raise ValueError(f"entry {key!r} is not keyed <directory_scope>:<keyword> "
                                 f"(its directory_scope is {entry.directory_scope!r})")
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


