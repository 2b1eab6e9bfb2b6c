"""`finesse cache` through the `finesse` group, in a real temporary repository."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from finesse.authoring.cache.store import CacheStore
from finesse.cli.finesse import cli
from tests.unit.authoring.test_cache import WHEN, commit, head

# ---- the command, through the `finesse` group ----



def run(runner: CliRunner, args: list[str]) -> Result:
    return runner.invoke(cli, args, prog_name="finesse")


@pytest.fixture
def in_project(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import finesse.cli.finesse.cache

    project = git_repo
    commit(project, {"src/p.py": "parse\n", "src/q.py": "query\n", "docs/a.md": "doc\n"})
    monkeypatch.setattr(finesse.cli.finesse.cache, "utcnow", lambda: WHEN)
    monkeypatch.chdir(project)
    return project


def test_cli_add_show_json_whole_object(runner: CliRunner, in_project: Path) -> None:
    at = head(in_project)
    result = run(runner, ["cache", "add", "--scope", "src/", "--keyword", "parser",
                          "--keyword", "grammar", "--summary", "Hand-written parser.",
                          "--file", "src/p.py", "--file", "./src/q.py"])
    assert (result.exit_code, result.stdout) == (0, f"Added src:parser (2 files, at {at[:7]}).\n")
    result = run(runner, ["cache", "baseline", "--test-framework", "pytest",
                          "--architecture", "pure core, thin shell", "--key-dir",
                          "src=the parser and the queries",
                          "--pattern", "src/<module>.py", "--naming", "snake_case"])
    assert (result.exit_code, result.stdout) == (0, f"Baseline recorded at {at[:7]}.\n")
    result = run(runner, ["cache", "show", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "path": str(in_project / ".finesse" / "exploration-cache.json"),
        "enabled": True,
        "cache": {
            "version": 1,
            "baseline": {
                "commit_hash": at, "last_confirmed": "2025-03-01T12:00:00Z",
                "file_structure_patterns": ["src/<module>.py"], "test_framework": "pytest",
                "naming_conventions": ["snake_case"],
                "architecture_style": "pure core, thin shell",
                "key_directories": {"src": "the parser and the queries"},
            },
            "entries": {"src:parser": {
                "summary": "Hand-written parser.", "referenced_files": ["src/p.py", "src/q.py"],
                "keywords": ["parser", "grammar"], "directory_scope": "src",
                "last_confirmed": "2025-03-01T12:00:00Z", "commit_hash": at,
            }},
        },
        "stale": {},
        "discarded": None,
    }


def test_cli_paths_from_a_subdirectory_are_stored_repo_relative(
        runner: CliRunner, in_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(in_project / "src")
    result = run(runner, ["cache", "add", "--scope", ".", "--keyword", "query",
                          "--summary", "Queries.", "--file", "q.py", "--file", "../docs/a.md"])
    assert result.exit_code == 0, result.output
    stored = CacheStore(in_project).load().cache.entries
    assert list(stored) == ["src:query"]
    assert stored["src:query"].referenced_files == ["src/q.py", "docs/a.md"]


def test_cli_show_text_with_a_stale_entry_then_prune(runner: CliRunner,
                                                     in_project: Path) -> None:
    at = head(in_project)
    for keyword, name in (("parser", "src/p.py"), ("query", "src/q.py")):
        run(runner, ["cache", "add", "--scope", "src", "--keyword", keyword,
                     "--summary", f"About {keyword}.", "--file", name])
    result = run(runner, ["cache", "add", "--scope", "src", "--keyword", "parser",
                          "--summary", "About the parser, again.", "--file", "src/p.py"])
    assert result.stdout == f"Replaced src:parser (1 file, at {at[:7]}).\n"
    commit(in_project, {"src/q.py": "query v2\n"})
    result = run(runner, ["cache", "show"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"Exploration cache: {in_project / '.finesse' / 'exploration-cache.json'}",
        f"src:parser (at {at[:7]}; keywords: parser)",
        "  About the parser, again.",
        "  files: src/p.py",
        "1 stale entry left out; `finesse cache prune` drops it:",
        f"  src:query: src/q.py changed since {at[:7]}",
    ]
    result = run(runner, ["cache", "prune"])
    assert result.stdout.splitlines() == [
        "Dropped 1 stale entry:", f"  src:query: src/q.py changed since {at[:7]}"]
    assert run(runner, ["cache", "prune"]).stdout == "Nothing stale; 1 entry kept.\n"
    assert run(runner, ["cache", "clear"]).stdout == (
        f"Cleared the exploration cache ({in_project / '.finesse' / 'exploration-cache.json'}).\n")
    assert run(runner, ["cache", "show"]).stdout.splitlines()[1:] == ["Empty."]


def test_cli_prune_reports_a_discarded_cache(runner: CliRunner, in_project: Path) -> None:
    (in_project / ".finesse").mkdir()
    (in_project / ".finesse" / "config.json").write_text('{"staleness_threshold": 1}')
    at = head(in_project)
    run(runner, ["cache", "baseline", "--test-framework", "pytest"])
    run(runner, ["cache", "add", "--scope", "src", "--keyword", "parser", "--summary", "P.",
                 "--file", "src/p.py"])
    commit(in_project, {"n1.txt": "1", "n2.txt": "2"})
    result = run(runner, ["cache", "prune"])
    assert (result.exit_code, result.stdout) == (0, (
        "Discarded the whole cache (1 entry and the baseline): 2 files changed since the "
        f"baseline commit {at[:7]}, more than the staleness threshold 1.\n"))


def test_cli_show_warns_about_a_corrupt_cache(runner: CliRunner, in_project: Path) -> None:
    path = in_project / ".finesse" / "exploration-cache.json"
    path.parent.mkdir()
    path.write_text("[]")
    result = run(runner, ["cache", "show"])
    assert result.exit_code == 0
    [moved] = path.parent.glob("exploration-cache.json.corrupt-*")
    assert result.stderr == (
        "warning: the exploration cache was unreadable (the file: Input should be an object); "
        f"it was moved to {moved} and the cache starts empty\n")


def test_cli_disabled_cache(runner: CliRunner, in_project: Path) -> None:
    (in_project / ".finesse").mkdir()
    (in_project / ".finesse" / "config.json").write_text('{"cache_enabled": false}')
    result = run(runner, ["cache", "show"])
    assert result.stdout == ("The exploration cache is off (cache_enabled is false in "
                             ".finesse/config.json).\n")
    result = run(runner, ["cache", "add", "--scope", "src", "--keyword", "k", "--summary", "s",
                          "--file", "src/p.py"])
    assert result.exit_code == 2
    assert result.stderr == (
        "finesse cache: the exploration cache is off: set cache_enabled to true in "
        f"{in_project / '.finesse' / 'config.json'} to use it\n")


@pytest.mark.parametrize(("args", "message"), [
    (["--scope", "src", "--keyword", "k", "--summary", "s", "--file", "src/nope.py"],
     "finesse cache: --file 'src/nope.py' is not a file; name files that exist, relative to "
     "the current directory"),
    (["--scope", "nope", "--keyword", "k", "--summary", "s", "--file", "src/p.py"],
     "finesse cache: --scope 'nope' is not a directory; give the directory the entry is "
     "about, relative to the current directory"),
    (["--scope", "src", "--keyword", "k", "--summary", "  ", "--file", "src/p.py"],
     "finesse cache: --summary is empty; give it some text"),
])
def test_cli_add_bad_input_is_one_line_and_exit_2(runner: CliRunner, in_project: Path,
                                                  args: list[str], message: str) -> None:
    result = run(runner, ["cache", "add", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message + "\n")


def test_cli_add_outside_git_is_exit_1(runner: CliRunner, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "f.py").write_text("x\n")
    monkeypatch.chdir(tmp_path / "plain")
    result = run(runner, ["cache", "add", "--scope", ".", "--keyword", "k", "--summary", "s",
                          "--file", "f.py"])
    assert (result.exit_code, result.stderr) == (1, (
        f"finesse cache: {tmp_path / 'plain'} is not in a git repository; the exploration "
        "cache ties what it knows to commits: run `git init` and commit\n"))


def test_cli_cache_alone_prints_its_help(runner: CliRunner) -> None:
    result = run(runner, ["cache"])
    assert result.exit_code == 0
    assert result.stdout.startswith("Usage: finesse cache [OPTIONS] [COMMAND] [ARGS]...\n")
    listed = result.stdout.split("Commands:\n")[1].splitlines()
    assert [line.split()[0] for line in listed] == ["add", "baseline", "clear", "prune", "show"]


def test_cli_baseline_key_dirs_need_a_responsibility_and_show_it(
        runner: CliRunner, in_project: Path) -> None:
    result = run(runner, ["cache", "baseline", "--key-dir", "src"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "finesse cache: --key-dir takes DIR=RESPONSIBILITY, e.g. --key-dir 'src/api=HTTP "
               "handlers'; not 'src'\n")
    assert run(runner, ["cache", "baseline", "--key-dir", "src=the code",
                        "--key-dir", "docs = the handbook"]).exit_code == 0
    shown = run(runner, ["cache", "show"]).stdout.splitlines()
    assert "  key directories: src (the code), docs (the handbook)" in shown
