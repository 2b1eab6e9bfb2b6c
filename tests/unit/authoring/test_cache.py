"""The exploration cache on real temporary git repositories: staleness, merge, files, CLI."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import git
import pytest

from finesse.authoring.cache.model import (
    Baseline,
    CacheEntry,
    ExplorationCache,
    FinesseConfig,
    PriceRates,
    check_freshness,
    merge,
)
from finesse.authoring.cache.store import CacheStore, GitHistory, load_config
from finesse.errors import StateError, UsageError
from finesse.loop.request import project_prices
from finesse.results import Price

WHEN = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
LATER = datetime(2025, 3, 2, 9, 30, tzinfo=UTC)
A = "a" * 40
B = "b" * 40


def commit(root: Path, files: dict[str, str | None], message: str = "change") -> str:
    """Write (or, for None, delete) files and commit them; the new HEAD."""
    repo = git.Repo(root)
    try:
        for name, text in files.items():
            path = root / name
            if text is None:
                repo.index.remove([name], working_tree=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                repo.index.add([name])
        return repo.index.commit(message).hexsha
    finally:
        repo.close()


def head(root: Path) -> str:
    with GitHistory(root) as history:
        return history.head()


def entry(scope: str = "src", keyword: str = "parser", files: tuple[str, ...] = ("src/p.py",),
          commit_hash: str = A, summary: str = "The parser is hand-written.",
          when: datetime = WHEN) -> CacheEntry:
    return CacheEntry(summary=summary, referenced_files=list(files), keywords=[keyword],
                      directory_scope=scope, last_confirmed=when, commit_hash=commit_hash)


def baseline(commit_hash: str = A, framework: str = "pytest") -> Baseline:
    return Baseline(commit_hash=commit_hash, last_confirmed=WHEN, test_framework=framework,
                    key_directories={"src": "the package"},
                    file_structure_patterns=["src/<module>.py"],
                    naming_conventions=["snake_case"], architecture_style="pure core")


@pytest.fixture
def project(git_repo: Path) -> Path:
    commit(git_repo, {"src/p.py": "parse\n", "src/q.py": "query\n", "docs/a.md": "doc\n"})
    return git_repo


# ---- config ----

def test_config_defaults_without_a_file(tmp_path: Path) -> None:
    assert load_config(tmp_path).model_dump() == {
        "version": 1, "cache_enabled": True, "staleness_threshold": 50,
        "context_window": 200_000, "prices": {}, "notify": [], "notify_cmd": [],
        "no_html": False,
    }


def test_the_loop_s_keys_in_the_config_load_for_the_finesse_tools_too(tmp_path: Path) -> None:
    (tmp_path / ".finesse").mkdir()
    (tmp_path / ".finesse" / "config.json").write_text(
        '{"notify": "desktop", "notify_cmd": ["logger ended"], "no_html": true}')
    assert load_config(tmp_path) == FinesseConfig(notify="desktop", notify_cmd=["logger ended"],
                                                  no_html=True)


def test_config_overrides(tmp_path: Path) -> None:
    (tmp_path / ".finesse").mkdir()
    (tmp_path / ".finesse" / "config.json").write_text(
        '{"cache_enabled": false, "staleness_threshold": 5}')
    assert load_config(tmp_path) == FinesseConfig(
        cache_enabled=False, staleness_threshold=5, context_window=200_000)


def test_the_loops_prices_in_the_config_do_not_break_the_finesse_tools(tmp_path: Path) -> None:
    # The file is shared: `prices` is the loop's (finesse.loop.request.project_prices).
    (tmp_path / ".finesse").mkdir()
    (tmp_path / ".finesse" / "config.json").write_text(
        '{"staleness_threshold": 5, "prices": {"claude-opus": {"input": 5, "output": 25, '
        '"cache_write": 6.25, "cache_read": 0.5}}}')
    assert load_config(tmp_path) == FinesseConfig(
        staleness_threshold=5,
        prices={"claude-opus": PriceRates(input=5, output=25, cache_write=6.25,
                                          cache_read=0.5)})
    assert project_prices(tmp_path)[0] == Price("claude-opus", 5.0, 25.0, 6.25, 0.5)


@pytest.mark.parametrize(("content", "detail"), [
    ('{"staleness_treshold": 5}', "staleness_treshold: Extra inputs are not permitted"),
    ('{"staleness_threshold": -1}', "staleness_threshold: Input should be greater than or "
                                    "equal to 0"),
    ('{"context_window": 0}', "context_window: Input should be greater than 0"),
    ('{"version": 2}', "version: Input should be 1"),
    ("{", "the file: Invalid JSON"),
])
def test_bad_config_is_reported_and_left_alone(tmp_path: Path, content: str,
                                               detail: str) -> None:
    path = tmp_path / ".finesse" / "config.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(StateError) as caught:
        load_config(tmp_path)
    assert str(caught.value).startswith(f"{path} is invalid ({detail}")
    assert str(caught.value).endswith("; fix it, or delete it to use the defaults")
    assert path.read_text() == content


# ---- the schema ----

def test_entries_are_keyed_scope_colon_keyword() -> None:
    good = entry()
    assert good.key == "src:parser"
    ExplorationCache(entries={"src:parser": good})
    ExplorationCache(entries={"src:lexer": good})  # the keyword is a tag (seed 000)
    for wrong in ("lib:parser", "src:", "src: ", "src", "sr:parser"):
        with pytest.raises(ValueError, match=f"entry {wrong!r} is not keyed"):
            ExplorationCache(entries={wrong: good})


@pytest.mark.parametrize("bad", ["--output=/tmp/x", "HEAD", "abc1234", A.upper(), A + "0"])
def test_commit_hashes_are_full_hex_only(bad: str) -> None:
    # the hash reaches `git diff` as an argument: nothing option-shaped or symbolic
    with pytest.raises(ValueError, match="commit_hash"):
        entry(commit_hash=bad)


def test_cache_file_round_trip() -> None:
    cache = ExplorationCache(baseline=baseline(), entries={"src:parser": entry()})
    assert ExplorationCache.model_validate_json(cache.model_dump_json()) == cache
    assert json.loads(cache.model_dump_json()) == {
        "version": 1,
        "baseline": {
            "commit_hash": A, "last_confirmed": "2025-03-01T12:00:00Z",
            "file_structure_patterns": ["src/<module>.py"], "test_framework": "pytest",
            "naming_conventions": ["snake_case"], "architecture_style": "pure core",
            "key_directories": {"src": "the package"},
        },
        "entries": {"src:parser": {
            "summary": "The parser is hand-written.", "referenced_files": ["src/p.py"],
            "keywords": ["parser"], "directory_scope": "src",
            "last_confirmed": "2025-03-01T12:00:00Z", "commit_hash": A,
        }},
    }


SEED_SCHEMA_CACHE = {
    # Written by hand to seed 000's Cache File Schema, as another tool would write it.
    "version": 1,
    "baseline": {
        "commit_hash": A,
        "last_confirmed": "2025-03-01T12:00:00Z",
        "file_structure_patterns": ["src/<module>.py", "tests/test_<module>.py"],
        "test_framework": "pytest, with fixtures in tests/conftest.py",
        "naming_conventions": ["snake_case modules"],
        "architecture_style": "pure core, thin shell",
        "key_directories": {"src/api": "HTTP handlers", "src/models": "database models"},
    },
    "entries": {
        "src/auth:jwt-validation": {
            "summary": "JWT validation lives in one middleware.",
            "referenced_files": ["src/auth/middleware.py"],
            "keywords": ["jwt-validation", "auth"],
            "directory_scope": "src/auth",
            "last_confirmed": "2025-03-01T12:00:00Z",
            "commit_hash": A,
        },
    },
}


def test_a_cache_written_by_hand_to_the_seeds_schema_loads_and_writes_back_the_same() -> None:
    cache = ExplorationCache.model_validate(SEED_SCHEMA_CACHE)
    assert cache.baseline is not None
    assert cache.baseline.key_directories == {"src/api": "HTTP handlers",
                                              "src/models": "database models"}
    assert json.loads(cache.model_dump_json()) == SEED_SCHEMA_CACHE


def test_the_earlier_list_form_of_key_directories_is_migrated_on_load(project: Path) -> None:
    at = head(project)
    old = {**SEED_SCHEMA_CACHE, "entries": {}, "baseline": {
        **SEED_SCHEMA_CACHE["baseline"], "commit_hash": at,
        "key_directories": ["src", "docs"]}}
    store = CacheStore(project)
    store.path.parent.mkdir()
    store.path.write_text(json.dumps(old))
    view = store.load()
    assert (view.moved_aside, view.notice) == (None, None)  # migrated, not moved aside
    assert view.cache.baseline is not None
    assert view.cache.baseline.key_directories == {"src": "not recorded",
                                                   "docs": "not recorded"}
    # The next write keeps the map form; reading it back gives the same cache.
    store.add([entry(commit_hash=at)])
    written = json.loads(store.path.read_text())
    assert written["baseline"]["key_directories"] == {"src": "not recorded",
                                                      "docs": "not recorded"}
    assert store.load().cache == ExplorationCache.model_validate(written)


# ---- merge ----

def test_merge_same_key_overwrites_new_key_appends() -> None:
    old = ExplorationCache(baseline=baseline(), entries={
        "src:parser": entry(), "docs:style": entry(scope="docs", keyword="style")})
    newer = entry(summary="The parser is generated now.", commit_hash=B, when=LATER)
    lexer = entry(keyword="lexer", files=("src/q.py",))
    merged = merge(old, [newer, lexer])
    assert merged == ExplorationCache(baseline=baseline(), entries={
        "src:parser": newer, "docs:style": entry(scope="docs", keyword="style"),
        "src:lexer": lexer,
    })
    assert list(merged.entries) == ["src:parser", "docs:style", "src:lexer"]
    assert old.entries["src:parser"] == entry()  # the input is not changed


def test_merge_replaces_the_baseline_whole_on_a_full_exploration() -> None:
    old = ExplorationCache(baseline=baseline(), entries={"src:parser": entry()})
    new_baseline = Baseline(commit_hash=B, last_confirmed=LATER, test_framework="unittest")
    merged = merge(old, [], new_baseline)
    assert merged.baseline == new_baseline
    assert merged.baseline.key_directories == {}  # not carried over from the old baseline
    assert merged.entries == old.entries
    assert merge(old, []).baseline == baseline()


# ---- staleness, pure ----

def changes(table: dict[str, frozenset[str] | None]) -> Callable[[str], frozenset[str] | None]:
    return table.__getitem__


def test_freshness_drops_only_entries_whose_files_changed() -> None:
    cache = ExplorationCache(baseline=baseline(), entries={
        "src:parser": entry(files=("src/p.py", "src/q.py", "src/r.py", "src/s.py")),
        "docs:style": entry(scope="docs", keyword="style", files=("docs/a.md",)),
        "src:gone": entry(keyword="gone", commit_hash=B),
    })
    fresh = check_freshness(cache, changes({
        A: frozenset({"src/p.py", "src/r.py", "src/s.py", "other.txt"}),
        B: None,
    }), staleness_threshold=50)
    assert fresh.cache == ExplorationCache(baseline=baseline(), entries={
        "docs:style": cache.entries["docs:style"]})
    assert fresh.dropped == {
        "src:parser": "src/p.py, src/r.py and 1 more changed since aaaaaaa",
        "src:gone": "its commit bbbbbbb is not in this repository",
    }
    assert fresh.discarded is None


@pytest.mark.parametrize(("changed", "discarded"), [
    (frozenset(f"f{n}" for n in range(3)), None),  # 3 changed, threshold 3: kept
    (frozenset(f"f{n}" for n in range(4)),
     "4 files changed since the baseline commit aaaaaaa, more than the staleness threshold 3"),
    (None, "the baseline commit aaaaaaa is not in this repository"),
])
def test_freshness_discards_everything_past_the_threshold(
        changed: frozenset[str] | None, discarded: str | None) -> None:
    cache = ExplorationCache(baseline=baseline(), entries={
        "src:parser": entry(files=("src/p.py",))})
    fresh = check_freshness(cache, changes({A: changed}), staleness_threshold=3)
    assert fresh.discarded == discarded
    if discarded:
        assert fresh.cache == ExplorationCache()
        assert fresh.dropped == {"src:parser": "the whole cache was discarded"}
    else:
        assert fresh.cache == cache


# ---- staleness through git ----

def test_entry_dropped_after_its_file_changes_in_a_commit(project: Path) -> None:
    store = CacheStore(project)
    at = head(project)
    store.add([entry(commit_hash=at), entry(scope="docs", keyword="style",
                                            files=("docs/a.md",), commit_hash=at)])
    commit(project, {"src/unrelated.py": "x\n"})
    assert list(store.load().cache.entries) == ["src:parser", "docs:style"]
    commit(project, {"src/p.py": "parse better\n"})
    view = store.load()
    assert list(view.cache.entries) == ["docs:style"]
    assert view.dropped == {"src:parser": f"src/p.py changed since {at[:7]}"}
    # loading never writes: the file still holds both entries until `prune`
    on_disk = ExplorationCache.model_validate_json(store.path.read_bytes())
    assert list(on_disk.entries) == ["src:parser", "docs:style"]


@pytest.mark.parametrize("change", ["rename", "delete"])
def test_renamed_or_deleted_file_makes_its_entry_stale(project: Path, change: str) -> None:
    store = CacheStore(project)
    store.add([entry(commit_hash=head(project))])
    if change == "rename":
        repo = git.Repo(project)
        repo.index.move(["src/p.py", "src/parser.py"])
        repo.index.commit("rename")
        repo.close()
    else:
        commit(project, {"src/p.py": None})
    assert store.load().dropped.keys() == {"src:parser"}


def test_uncommitted_edits_do_not_make_an_entry_stale(project: Path) -> None:
    # the rule is `git diff <commit>..HEAD`: only committed history counts
    store = CacheStore(project)
    store.add([entry(commit_hash=head(project))])
    (project / "src" / "p.py").write_text("work in progress\n")
    assert list(store.load().cache.entries) == ["src:parser"]


def test_entry_at_an_unknown_commit_is_stale(project: Path) -> None:
    store = CacheStore(project)
    store.add([entry(commit_hash=A), entry(keyword="lexer", commit_hash=head(project))])
    view = store.load()
    assert list(view.cache.entries) == ["src:lexer"]
    assert view.dropped == {"src:parser": "its commit aaaaaaa is not in this repository"}


def test_whole_cache_discarded_past_the_staleness_threshold(project: Path) -> None:
    store = CacheStore(project, FinesseConfig(staleness_threshold=3))
    at = head(project)
    store.add([entry(commit_hash=at)], baseline=baseline(commit_hash=at))
    commit(project, {"n1.txt": "1", "n2.txt": "2", "n3.txt": "3"})
    view = store.load()
    assert (view.discarded, list(view.cache.entries)) == (None, ["src:parser"])
    commit(project, {"n4.txt": "4"})
    view = store.load()
    assert view.discarded == (f"4 files changed since the baseline commit {at[:7]}, more "
                              "than the staleness threshold 3")
    assert view.cache == ExplorationCache()
    assert view.dropped == {"src:parser": "the whole cache was discarded"}


def test_threshold_comes_from_the_config_file(project: Path) -> None:
    (project / ".finesse").mkdir()
    (project / ".finesse" / "config.json").write_text('{"staleness_threshold": 0}')
    store = CacheStore(project)
    at = head(project)
    store.add([], baseline=baseline(commit_hash=at))
    commit(project, {"n1.txt": "1"})
    assert store.load().discarded is not None


def test_prune_writes_the_fresh_cache_back(project: Path) -> None:
    store = CacheStore(project)
    at = head(project)
    store.add([entry(commit_hash=at), entry(keyword="lexer", files=("src/q.py",),
                                            commit_hash=at)], baseline=baseline(commit_hash=at))
    commit(project, {"src/q.py": "query v2\n"})
    view = store.prune()
    assert view.dropped == {"src:lexer": f"src/q.py changed since {at[:7]}"}
    assert ExplorationCache.model_validate_json(store.path.read_bytes()) == ExplorationCache(
        baseline=baseline(commit_hash=at), entries={"src:parser": entry(commit_hash=at)})
    assert store.prune().dropped == {}


def test_add_drops_stale_entries_as_it_writes(project: Path) -> None:
    store = CacheStore(project)
    at = head(project)
    store.add([entry(commit_hash=at)])
    now = commit(project, {"src/p.py": "parse v2\n"})
    view = store.add([entry(keyword="lexer", files=("src/q.py",), commit_hash=now)])
    assert view.dropped == {"src:parser": f"src/p.py changed since {at[:7]}"}
    on_disk = ExplorationCache.model_validate_json(store.path.read_bytes())
    assert list(on_disk.entries) == ["src:lexer"]


def test_add_reports_the_keys_it_replaced(project: Path) -> None:
    store = CacheStore(project)
    at = head(project)
    assert store.add([entry(commit_hash=at)]).replaced == ()
    view = store.add([entry(commit_hash=at, summary="v2"), entry(keyword="x", commit_hash=at)])
    assert view.replaced == ("src:parser",)
    assert view.cache.entries["src:parser"].summary == "v2"


def test_disabled_cache_refuses_additions(project: Path) -> None:
    store = CacheStore(project, FinesseConfig(cache_enabled=False))
    with pytest.raises(UsageError, match="the exploration cache is off: set cache_enabled"):
        store.add([entry(commit_hash=head(project))])
    assert not store.path.exists()


def test_empty_cache_needs_no_repository(tmp_path: Path) -> None:
    view = CacheStore(tmp_path).load()
    assert (view.cache, view.dropped, view.discarded) == (ExplorationCache(), {}, None)
    assert not (tmp_path / ".finesse").exists()  # reading creates nothing


def test_outside_a_repository_is_a_state_error(tmp_path: Path) -> None:
    with pytest.raises(StateError, match="is not in a git repository"):
        GitHistory(tmp_path)


def test_repository_without_commits_is_a_state_error(tmp_path: Path) -> None:
    git.Repo.init(tmp_path).close()
    with GitHistory(tmp_path) as history, pytest.raises(StateError, match="no commit yet"):
        history.head()


# ---- files: atomic, locked, corrupt moved aside ----

def test_writes_leave_only_the_cache_and_its_lock(project: Path) -> None:
    store = CacheStore(project)
    store.add([entry(commit_hash=head(project))])
    assert sorted(p.name for p in (project / ".finesse").iterdir()) == [
        "exploration-cache.json", "exploration-cache.json.lock"]


@pytest.mark.parametrize(("content", "detail"), [
    (b"{not json", "the file: Invalid JSON: key must be a string at line 1 column 2"),
    (b"\xff\xfe", "the file: Invalid JSON: expected value at line 1 column 1"),
    (b'{"version": 1, "entries": {}, "extra": 1}', "extra: Extra inputs are not permitted"),
    (b'{"version": 1, "entries": {"src:parser": {"summary": "s"}}}',
     "entries.src:parser.referenced_files: Field required (and 4 more)"),
])
def test_unreadable_cache_is_moved_aside_never_replaced(project: Path, content: bytes,
                                                        detail: str) -> None:
    store = CacheStore(project)
    store.path.parent.mkdir()
    store.path.write_bytes(content)
    view = store.load()
    assert view.cache == ExplorationCache()
    assert view.moved_aside is not None
    assert view.moved_aside.parent == store.path.parent
    assert view.moved_aside.name.startswith("exploration-cache.json.corrupt-")
    assert view.moved_aside.read_bytes() == content
    assert view.notice == (f"the exploration cache was unreadable ({detail}); it was moved to "
                           f"{view.moved_aside} and the cache starts empty")
    assert not store.path.exists()
    # the next write starts a new file; the old one stays where it was moved
    store.add([entry(commit_hash=head(project))])
    assert view.moved_aside.read_bytes() == content


def test_a_newer_cache_version_is_left_alone(project: Path) -> None:
    store = CacheStore(project)
    store.path.parent.mkdir()
    store.path.write_text('{"version": 2, "entries": {}, "new_field": true}')
    with pytest.raises(StateError, match=r"written by a newer finesse \(version 2\)"):
        store.load()
    assert json.loads(store.path.read_text())["version"] == 2


def test_clear_removes_entries_and_baseline(project: Path) -> None:
    store = CacheStore(project)
    at = head(project)
    store.add([entry(commit_hash=at)], baseline=baseline(commit_hash=at))
    assert store.clear() is True
    assert store.load().cache == ExplorationCache()
    assert store.clear() is False


def add_entries(root: str, worker: int, count: int) -> None:
    """A worker process: `count` locked read-merge-writes of its own keys."""
    store = CacheStore(Path(root))
    at = head(Path(root))
    for n in range(count):
        store.add([entry(keyword=f"w{worker}-{n}", commit_hash=at)])


def test_concurrent_adds_lose_no_entry(project: Path) -> None:
    workers, count = 3, 4
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=add_entries, args=(str(project), worker, count))
                 for worker in range(workers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [process.exitcode for process in processes] == [0] * workers
    keys = set(CacheStore(project).load().cache.entries)
    assert keys == {f"src:w{w}-{n}" for w in range(workers) for n in range(count)}




def test_a_fifo_in_place_of_the_cache_is_reported_not_read(project: Path) -> None:
    store = CacheStore(project)
    store.path.parent.mkdir()
    os.mkfifo(store.path)
    with pytest.raises(StateError, match=r"not a regular file \(a FIFO, device or socket\)"):
        store.load()
    assert stat.S_ISFIFO(os.stat(store.path).st_mode)  # left where it was
