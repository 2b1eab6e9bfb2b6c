"""Fixtures for the e2e tests: the real CLI, a throw-away HOME, a git project.

Tests mark themselves with ``pytest.mark.e2e``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.harness import ClaudeNotInstalled, ClaudeRunner, find_claude, make_project


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned CLI. A missing CLI fails the tests: e2e tests must not skip."""
    try:
        return find_claude()
    except ClaudeNotInstalled as exc:
        pytest.fail(f"claude CLI unavailable: {exc}", pytrace=False)


@pytest.fixture
def claude_home(tmp_path: Path) -> Path:
    """The HOME every claude run of one test shares (sessions, plugin data, transcripts)."""
    home = tmp_path / "claude-home"
    home.mkdir()
    return home


@pytest.fixture
def run_claude(claude_bin: Path, claude_home: Path) -> ClaudeRunner:
    """Callable: ``run_claude(prompt, *, cwd, model, plugin_dir=REPO_ROOT, ...) -> ClaudeRun``."""
    return ClaudeRunner(claude_bin, claude_home)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh git repository with one commit, to run claude in."""
    return make_project(tmp_path / "proj")
