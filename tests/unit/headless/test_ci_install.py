"""Where a workflow's jobs install finesse from when `--finesse` is not given, and the Claude
Code CLI version they install: the one the end-to-end tests prove."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from finesse.errors import UsageError
from finesse.headless.ci import install
from finesse.headless.ci.install import Requirement, cloneable, default_requirement
from tests.helpers.repo import git, write

ROOT = Path(__file__).resolve().parents[3]


def test_the_cli_version_is_the_one_the_e2e_tests_install() -> None:
    spec = importlib.util.spec_from_file_location("install_claude",
                                                  ROOT / "tools" / "install_claude.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (install.CLAUDE_CODE_PACKAGE, install.CLAUDE_CODE_VERSION) == (
        module.PACKAGE, module.VERSION)


@pytest.mark.parametrize(("url", "expected"), [
    ("https://github.com/o/finesse.git", "https://github.com/o/finesse.git"),
    ("git@github.com:o/finesse.git", "https://github.com/o/finesse.git"),
    ("ssh://git@github.com/o/finesse", "https://github.com/o/finesse"),
    ("git@gitlab.example:o/finesse.git", None),
    ("/srv/git/finesse.git", None),
    ("file:///srv/git/finesse.git", None),
])
def test_only_what_a_runner_can_clone_is_used(url: str, expected: str | None) -> None:
    assert cloneable(url) == expected


def checkout(tmp_path: Path, origin: str, *, pushed: bool) -> tuple[Path, str]:
    """A finesse checkout with `origin`; its HEAD on a remote-tracking branch if `pushed`."""
    top = tmp_path / "finesse"
    top.mkdir()
    write(top, "pyproject.toml", "[project]\nname = 'finesse'\n")
    git(top, "init", "--quiet", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "--quiet", "-m", "finesse")
    git(top, "remote", "add", "origin", origin)
    if pushed:
        git(top, "update-ref", "refs/remotes/origin/main", "HEAD")
    return top, git(top, "rev-parse", "HEAD")


@pytest.fixture
def not_from_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install, "_from_pip", lambda: None)


@pytest.mark.usefixtures("not_from_pip")
def test_a_pushed_checkout_is_installed_at_its_commit(tmp_path: Path) -> None:
    top, commit = checkout(tmp_path, "git@github.com:o/finesse.git", pushed=True)
    assert default_requirement(top) == Requirement(
        f"git+https://github.com/o/finesse.git@{commit}")


@pytest.mark.usefixtures("not_from_pip")
def test_a_commit_origin_does_not_have_is_used_with_a_warning(tmp_path: Path) -> None:
    top, commit = checkout(tmp_path, "https://github.com/o/finesse", pushed=False)
    assert default_requirement(top) == Requirement(
        f"git+https://github.com/o/finesse@{commit}",
        f"finesse's commit {commit[:12]} is on no branch of its origin "
        "https://github.com/o/finesse that this checkout knows of: the jobs cannot install it "
        "until it is pushed (or give --finesse)")


@pytest.mark.usefixtures("not_from_pip")
def test_an_origin_no_runner_can_clone_asks_for_finesse(tmp_path: Path) -> None:
    top, _ = checkout(tmp_path, str(tmp_path / "local.git"), pushed=True)
    with pytest.raises(UsageError, match=r"^the jobs install finesse from its checkout's "
                                         r"origin, .*local\.git, which a runner cannot clone: "
                                         r"give --finesse 'git\+https://github.com/OWNER/"
                                         r"finesse@v0.1.0'$"):
        default_requirement(top)


@pytest.mark.usefixtures("not_from_pip")
def test_no_checkout_and_no_pip_record_asks_for_finesse(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^cannot tell where the jobs can install "
                                         r"this finesse from \(it is not on PyPI\): give "
                                         r"--finesse "):
        default_requirement(tmp_path)


class Installed:
    def __init__(self, record: dict[str, Any] | None) -> None:
        self.record = record

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return None if self.record is None else json.dumps(self.record)


def test_a_pip_install_from_git_is_installed_the_same_way(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    record = {"url": "https://github.com/o/finesse", "vcs_info": {
        "vcs": "git", "commit_id": "0123456789abcdef0123456789abcdef01234567"}}
    monkeypatch.setattr(install.metadata, "distribution", lambda name: Installed(record))
    assert default_requirement(tmp_path) == Requirement(
        "git+https://github.com/o/finesse@0123456789abcdef0123456789abcdef01234567")
    monkeypatch.setattr(install.metadata, "distribution",
                        lambda name: Installed({"url": "file:///x", "dir_info": {}}))
    with pytest.raises(UsageError, match="give --finesse"):
        default_requirement(tmp_path)
