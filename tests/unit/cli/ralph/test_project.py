"""The project every `ralph` subcommand works on: a --project or CLAUDE_PROJECT_DIR naming no
directory (a typo, a stale export, a deleted checkout) is refused in one line before anything
is written, never created with a `.claude/ralph/` inside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run
from tests.helpers.states import make_state, store_for

pytestmark = pytest.mark.usefixtures("ralph_clock")

COMMANDS = [
    ["start", "--session", "s1", "go"],
    ["run", "go", "--claude-bin", "/bin/true"],
    ["status"],
    ["watch", "--once"],
    ["report"],
    ["cancel"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: argv[0])
def test_a_project_option_naming_no_directory_is_refused(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]) -> None:
    missing = tmp_path / "gone" / "project"
    code, out, err = run(capsys, argv[0], "--project", str(missing), *argv[1:])
    assert (code, out, err) == (
        2, "", f"ralph {argv[0]}: --project {missing}: no such directory; give the "
               "project's folder\n")
    assert not (tmp_path / "gone").exists()


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: argv[0])
def test_a_claude_project_dir_naming_no_directory_is_refused(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        argv: list[str]) -> None:
    missing = tmp_path / "gone" / "project"
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(missing))
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert (code, out, err) == (
        2, "", f"ralph {argv[0]}: CLAUDE_PROJECT_DIR={missing}: no such directory; unset it "
               "or give --project DIRECTORY\n")
    assert not (tmp_path / "gone").exists()


def test_a_file_given_as_the_project_is_refused(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("mine\n")
    assert run(capsys, "status", "--project", str(plain)) == (
        2, "", f"ralph status: Invalid value for '--project': Directory '{plain}' is a file. "
               "(see 'ralph status --help')\n")
    assert plain.read_text() == "mine\n"


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: argv[0])
def test_a_working_directory_since_removed_is_refused(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        argv: list[str]) -> None:
    """A terminal left in a folder that was removed (a worktree cleaned up, a checkout
    deleted): one line saying what to do, not a traceback."""
    gone = tmp_path / "removed"
    gone.mkdir()
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert run(capsys, *argv) == (
        2, "", f"ralph {argv[0]}: the current directory no longer exists: cd to the project, "
               "or give --project DIRECTORY\n")


def test_an_absolute_project_is_used_from_a_removed_working_directory(
        capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    gone = tmp_path / "removed"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert run(capsys, "status", "--project", str(root)) == (
        0, f"No active Ralph loop in {root}.\n", "")


@pytest.mark.parametrize(("argv", "shown"), [
    (["status"], "Ralph loop 20261130T070000Z-"), (["watch", "--once"], "- 20261130T070000Z-"),
    (["cancel"], "Ralph loop cancelled by `ralph cancel` at iteration 1/8."),
], ids=lambda value: value[0] if isinstance(value, list) else "")
def test_a_terminal_in_a_monorepo_project_finds_its_loops(
        capsys: pytest.CaptureFixture[str], monorepo: Path, monkeypatch: pytest.MonkeyPatch,
        argv: list[str], shown: str) -> None:
    """Claude Code started in `pkg/` keeps its loops in `pkg/.claude/ralph/`; a terminal in
    `pkg/` (or below it) without CLAUDE_PROJECT_DIR finds them there, not at the repository's
    top, where `ralph status` said no loop ran and `ralph cancel` could not stop it."""
    project = monorepo.resolve()
    store_for(project).save(make_state(project))
    (project / "src").mkdir()
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.chdir(project / "src")
    code, out, _ = run(capsys, *argv)
    assert code == 0 and shown in out, out
    assert not (project.parent / ".claude").exists()


def test_a_terminal_at_a_monorepos_top_keeps_the_top(
        capsys: pytest.CaptureFixture[str], monorepo: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    project = monorepo.resolve()
    store_for(project).save(make_state(project))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.chdir(project.parent)
    assert run(capsys, "status") == (0, f"No active Ralph loop in {project.parent}.\n", "")
