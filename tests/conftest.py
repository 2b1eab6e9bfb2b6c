"""Fixtures shared by every test: nothing may touch the real home or the real state.

This is the one conftest of the unit tests; plain builders and helpers live in tests/helpers.
The fixtures import the package (and the helpers that do) when they run: the package is put
on sys.path below.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

if TYPE_CHECKING:
    from finesse.state.store import LoopStore
    from tests.helpers.hooks import Session
    from tests.helpers.judging import JudgeSession

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = REPO_ROOT / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point HOME, the plugin data dir and git identity at throw-away values."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Committer")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "committer@example.invalid")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_DATA", "CLAUDE_PLUGIN_ROOT",
                "CLAUDE_CODE_SESSION_ID", "FINESSE_RUNTIME", "FINESSE_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A real git repository with one commit, as a project root."""
    import git

    root = tmp_path / "project"
    root.mkdir()
    repo = git.Repo.init(root, initial_branch="main")
    (root / "README.md").write_text("project\n")
    repo.index.add(["README.md"])
    repo.index.commit("initial")
    repo.close()
    return root


@pytest.fixture
def runner() -> CliRunner:
    """click's runner, for the `finesse` and `ralph` command groups in memory."""
    return CliRunner()


@pytest.fixture
def root(git_repo: Path) -> Path:
    """The project root as the command-line tools see it: `git_repo`, resolved."""
    return git_repo.resolve()


@pytest.fixture
def store(git_repo: Path) -> LoopStore:
    """The loop store of `git_repo`."""
    from tests.helpers.states import store_for

    return store_for(git_repo)


@pytest.fixture(params=["main", "worktree"])
def gate_project(request: pytest.FixtureRequest, git_repo: Path, tmp_path: Path) -> Path:
    """A project with ignore rules (`*.log`, `build/`) and a few files, committed; in the
    repository's main worktree, or in a linked worktree on branch `feature`."""
    from tests.helpers.repo import git, write

    write(git_repo, ".gitignore", "*.log\nbuild/\n")
    write(git_repo, "src/app.py", "print('v1')\n")
    write(git_repo, "src/util.py", "def helper():\n    return 1\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "base")
    if request.param == "main":
        return git_repo
    worktree = tmp_path / "linked"
    git(git_repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    return worktree


@pytest.fixture
def monorepo(git_repo: Path) -> Path:
    """A project that is a subdirectory of a larger repository: `pkg/` of `git_repo`, beside
    `other/` and the top's README.md, all committed. Returns the project, `pkg/`."""
    from tests.helpers.repo import git, write

    write(git_repo, "other/lib.py", "LIB = 1\n")
    write(git_repo, "pkg/app.py", "print('v1')\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "two packages")
    return git_repo / "pkg"


@pytest.fixture
def protocol_plan(git_repo: Path) -> Path:
    """`git_repo`'s tasks/todo.md: tests/helpers/plans.PLAN, committed."""
    from tests.helpers.plans import PLAN, commit_plan

    return commit_plan(git_repo, PLAN)


@pytest.fixture
def session(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    """A Claude Code session in `git_repo` driving the prompt and Stop hooks in process.

    Each hook call reads the time once: a minute passes between calls, from T0.
    """
    from datetime import timedelta

    import finesse.hooks.prompt_submit
    import finesse.loop.observe
    from tests.helpers.hooks import Session
    from tests.helpers.states import T0

    ticks = iter(range(10_000))

    def now() -> datetime:
        return T0 + timedelta(minutes=next(ticks))

    monkeypatch.setattr(finesse.hooks.prompt_submit, "utcnow", now)
    monkeypatch.setattr(finesse.loop.observe, "utcnow", now)
    return Session(git_repo, tmp_path / "transcript.jsonl")


@pytest.fixture
def judge_session(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> JudgeSession:
    """A session in `git_repo` driving the judge-mode hooks in process (prompt, subagents,
    stops, tool calls); each hook call reads the time once, a minute apart from T0."""
    from datetime import timedelta

    import finesse.hooks.prompt_submit
    import finesse.hooks.subagent
    import finesse.loop.observe
    from tests.helpers.judging import JudgeSession
    from tests.helpers.states import T0

    ticks = iter(range(10_000))

    def now() -> datetime:
        return T0 + timedelta(minutes=next(ticks))

    for module in (finesse.hooks.prompt_submit, finesse.hooks.subagent, finesse.loop.observe):
        monkeypatch.setattr(module, "utcnow", now)
    return JudgeSession(git_repo)


@pytest.fixture
def session_hooks_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """SessionStart and SessionEnd read the time as T1."""
    import finesse.hooks.session
    from tests.helpers.states import T1

    monkeypatch.setattr(finesse.hooks.session, "utcnow", lambda: T1)


@pytest.fixture
def ralph_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The `ralph` subcommands read the time as T1."""
    import importlib

    from tests.helpers.states import T1

    for name in ("cancel", "resume", "start", "status"):
        module = importlib.import_module(f"finesse.cli.ralph.{name}")
        monkeypatch.setattr(module, "utcnow", lambda: T1)


@pytest.fixture(params=["posix", "nt"])
def both_ways_of_reading_pipes(request: pytest.FixtureRequest,
                               monkeypatch: pytest.MonkeyPatch) -> str:
    """The test runs once with the selector POSIX waits on pipes with, once with the reader
    threads Windows needs (finesse.support.pipes), whatever this platform is."""
    from finesse.support import pipes

    kind = type(pipes.open_pipes(request.param))
    monkeypatch.setattr(pipes, "open_pipes", lambda os_name=None: kind())
    return str(request.param)
