"""`ralph statusline --install`: Claude Code's settings point at the status line after the
exact change is shown; an existing status line is never overwritten without --force, and
with it ours chains to it."""

from __future__ import annotations

import json
import os
import shlex
import stat
from pathlib import Path

import pytest

from finesse.cli.ralph.statusline import our_command
from finesse.support.claude_settings import statusline_configured
from tests.helpers.cli import run

OURS = our_command(None)


def settings(path: Path) -> dict[str, object]:
    return json.loads(path.read_text())


def test_install_in_the_projects_settings(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    path = root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]}, "model": "opus"}))
    assert not statusline_configured(root, Path.home())
    assert run(capsys, "statusline", "--install", "--project", str(root)) == (
        0,
        f"In {path}:\n  statusLine.command: (none)\n  becomes:            {OURS}\n"
        "Done: Claude Code shows it from its next update.\n",
        "",
    )
    assert settings(path) == {"permissions": {"allow": ["Bash(ls)"]}, "model": "opus",
                              "statusLine": {"type": "command", "command": OURS}}
    assert statusline_configured(root, Path.home())
    assert run(capsys, "statusline", "--install", "--project", str(root)) == (
        0, f"{path} already runs `ralph statusline` as the status line.\n", "")


def test_install_for_the_user(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    code, out, err = run(capsys, "statusline", "--install", "--user", "--project", str(root))
    assert (code, err) == (0, "")
    assert out.startswith(f"In {Path.home() / '.claude' / 'settings.json'}:\n")
    assert settings(Path.home() / ".claude" / "settings.json") == {
        "statusLine": {"type": "command", "command": OURS}}
    assert not (root / ".claude").exists()
    assert statusline_configured(root, Path.home())


def test_an_existing_status_line_needs_force_and_is_chained(
        capsys: pytest.CaptureFixture[str], root: Path) -> None:
    path = root / ".claude" / "settings.json"
    path.parent.mkdir()
    theirs = "~/bin/my-line --color 'a b'"
    path.write_text(json.dumps({"statusLine": {"type": "command", "command": theirs,
                                               "padding": 1}}))
    before = path.read_bytes()
    assert run(capsys, "statusline", "--install", "--project", str(root)) == (
        2, "",
        f"ralph statusline: {path} already has a status line (`{theirs}`): pass --force to "
        "chain to it (the line then shows both), or remove it (see 'ralph statusline --help')\n",
    )
    assert path.read_bytes() == before
    code, out, err = run(capsys, "statusline", "--install", "--force", "--project", str(root))
    chained = f"{OURS} --chain {shlex.quote(theirs)}"
    assert (code, err) == (0, "")
    assert out == (f"In {path}:\n  statusLine.command: {theirs}\n  becomes:            {chained}\n"
                   "Done: Claude Code shows it from its next update.\n")
    assert settings(path) == {"statusLine": {"type": "command", "command": chained,
                                             "padding": 1}}
    assert shlex.split(chained)[-2:] == ["--chain", theirs]


@pytest.mark.parametrize(("text", "problem"), [("{not json", "is not valid JSON"),
                                               ("[1, 2]", "does not hold a JSON object")])
def test_a_broken_settings_file_is_never_overwritten(
        capsys: pytest.CaptureFixture[str], root: Path, text: str, problem: str) -> None:
    path = root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    code, out, err = run(capsys, "statusline", "--install", "--project", str(root))
    assert (code, out) == (2, "")
    assert err.startswith(f"ralph statusline: {path} {problem}: fix it by hand first")
    assert err.count("\n") == 1
    assert path.read_text() == text


def test_a_fifo_or_non_utf8_settings_file_is_refused_and_left_alone(
        capsys: pytest.CaptureFixture[str], root: Path) -> None:
    path = root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b'{"model": "\xff"}')
    code, out, err = run(capsys, "statusline", "--install", "--project", str(root))
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert path.read_bytes() == b'{"model": "\xff"}'
    path.unlink()
    os.mkfifo(path)  # never opened for reading in a way that blocks
    code, out, err = run(capsys, "statusline", "--install", "--project", str(root))
    assert (code, out) == (2, "")
    assert err == (f"ralph statusline: {path}: not a regular file (a FIFO, device or socket); "
                   "give a plain file\n")
    assert stat.S_ISFIFO(os.lstat(path).st_mode)


def test_install_in_a_monorepo_project_writes_the_projects_settings(
        capsys: pytest.CaptureFixture[str], monorepo: Path) -> None:
    path = monorepo / ".claude" / "settings.json"
    code, _, err = run(capsys, "statusline", "--install", "--project", str(monorepo))
    assert (code, err) == (0, "")
    assert settings(path) == {"statusLine": {"type": "command", "command": OURS}}
    assert not (monorepo.parent / ".claude" / "settings.json").exists()


@pytest.mark.parametrize("home", ["", "relative/home"])
def test_install_for_the_user_without_a_usable_home_is_refused(
        capsys: pytest.CaptureFixture[str], root: Path, monkeypatch: pytest.MonkeyPatch,
        home: str) -> None:
    """HOME empty made the user's settings /.claude/settings.json, at the top of the file
    system; HOME relative made them a folder in the working directory (the project). Claude
    Code reads neither: one line says to set HOME, and nothing is written."""
    monkeypatch.setenv("HOME", home)
    monkeypatch.chdir(root)
    before = sorted(path.name for path in Path("/").iterdir())
    assert run(capsys, "statusline", "--install", "--user", "--project", str(root)) == (
        2, "", f"ralph statusline: HOME={home!r} is not an absolute path: set HOME to your "
               "home folder, or install for the project (without --user)\n")
    assert sorted(path.name for path in Path("/").iterdir()) == before
    assert sorted(path.name for path in root.iterdir()) == [".git", "README.md"]
