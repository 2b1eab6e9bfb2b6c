"""finesse.support.interpreters: the candidates in their order, each only where it is; scripts
asked their version, programs taken at their name's word; the environment's interpreter read
from pyvenv.cfg (the newest built one, never a FIFO); Windows' names; the one-line refusal;
and the modules launchers import under an old python3 compile under Python 3.6."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from finesse.support import interpreters
from finesse.support.interpreters import Candidate, candidates, choose
from tests.helpers.interpreters import python

REPO = Path(__file__).resolve().parents[3]
BUILT = "the interpreter finesse's environment was built with"


def program(path: Path) -> Path:
    """An executable that is a program (not a script): never run by the finder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF not really")
    path.chmod(0o755)
    return path


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def built_env(data: Path, name: str, executable: Path, version: str = "3.12.1",
              mtime: float | None = None) -> Path:
    venv = data / name
    venv.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(
        f"home = {executable.parent}\ninclude-system-site-packages = false\n"
        f"version = {version}\nexecutable = {executable}\ncommand = x -m venv {venv}\n")
    mark = venv / interpreters.COMPLETE_MARK
    mark.write_text("")
    if mtime is not None:
        os.utime(mark, (mtime, mtime))
    return venv


def test_every_candidate_in_order(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    chosen = script(tmp_path / "chosen" / "python", "printf 3.13.1")  # asked: it runs
    built = program(tmp_path / "base" / "python3.12")
    built_env(tmp_path / "data", "venv-aaaa", built)
    for name in ("python3.13", "python3.12", "python3.11", "python3.10", "python3"):
        program(bin_dir / name)
    env = {"PATH": f"{tmp_path / 'empty'}:{bin_dir}", "FINESSE_PYTHON": str(chosen),
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    assert list(candidates(env, windows=False)) == [
        Candidate([str(chosen)], f"FINESSE_PYTHON={chosen}"),
        Candidate([str(built)], BUILT),
        Candidate([str(bin_dir / "python3.13")], "python3.13 on PATH"),
        Candidate([str(bin_dir / "python3.12")], "python3.12 on PATH"),
        Candidate([str(bin_dir / "python3.11")], "python3.11 on PATH"),
    ]
    assert choose(env, windows=False) == Candidate([str(chosen)], f"FINESSE_PYTHON={chosen}")


def test_only_what_is_there(tmp_path: Path) -> None:
    program(tmp_path / "bin" / "python3.12")
    (tmp_path / "bin" / "python3.13").mkdir()  # a directory is no interpreter
    not_runnable = tmp_path / "bin" / "python3.11"
    not_runnable.write_bytes(b"\x7fELF")  # no right to run it
    env = {"PATH": str(tmp_path / "bin"), "FINESSE_PYTHON": str(tmp_path / "missing"),
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "no-data")}
    assert list(candidates(env, windows=False)) == [
        Candidate([str(tmp_path / "bin" / "python3.12")], "python3.12 on PATH")]
    assert choose({"PATH": str(tmp_path / "empty")}, windows=False) is None


def test_finesse_python_may_be_a_name_on_path(tmp_path: Path) -> None:
    found = script(tmp_path / "bin" / "pypy3", "printf 3.11.13")
    env = {"PATH": str(tmp_path / "bin"), "FINESSE_PYTHON": "pypy3",
           "CLAUDE_PLUGIN_DATA": str(tmp_path)}
    assert choose(env, windows=False) == Candidate([str(found)], "FINESSE_PYTHON=pypy3")


@pytest.mark.parametrize("body", ["printf 3.8.18", "echo 'ls: invalid option -- S' >&2; exit 2"])
def test_a_finesse_python_that_is_too_old_or_no_python_is_passed_over(tmp_path: Path,
                                                                      body: str) -> None:
    # Handed over to, a program that exits 2 before running the launcher would block a Stop.
    chosen = script(tmp_path / "chosen", body)
    beside = program(tmp_path / "bin" / "python3.12")
    env = {"PATH": str(tmp_path / "bin"), "FINESSE_PYTHON": str(chosen),
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "no-data")}
    assert list(candidates(env, windows=False)) == [
        Candidate([str(beside)], "python3.12 on PATH")]


def test_a_script_is_asked_its_version_and_kept_only_when_new_enough(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    asked = tmp_path / "asked"
    # Each shim notes its arguments; only python3.11 answers with a version new enough.
    script(bin_dir / "python3.13", f'echo "$@" >> {asked}; exit 127')
    script(bin_dir / "python3.12", f'echo "$@" >> {asked}; printf 3.9.18')
    script(bin_dir / "python3.11", f'echo "$@" >> {asked}; printf 3.11.7')
    env = {"PATH": str(bin_dir), "CLAUDE_PLUGIN_DATA": str(tmp_path / "no-data")}
    assert list(candidates(env, windows=False)) == [
        Candidate([str(bin_dir / "python3.11")], "python3.11 on PATH")]
    probe = "-S -c import sys; sys.stdout.write('%d.%d.%d' % tuple(sys.version_info[:3]))"
    assert asked.read_text() == f"{probe}\n" * 3


def test_the_version_of_a_real_interpreter() -> None:
    assert interpreters.version_of([str(python("3.9"))], os.environ)[:2] == (3, 9)
    assert interpreters.version_of(["/nonexistent/python"], os.environ) is None


def test_the_newest_built_environment_whose_interpreter_is_there(tmp_path: Path) -> None:
    data = tmp_path / "data"
    older = program(tmp_path / "a" / "python3.11")
    newer = program(tmp_path / "b" / "python3.12")
    built_env(data, "venv-1111", older, "3.11.7", mtime=1_000)
    built_env(data, "venv-2222", newer, "3.12.1", mtime=2_000)
    built_env(data, "venv-3333", tmp_path / "gone" / "python3.13", "3.13.0", mtime=3_000)
    built_env(data, "venv-4444", program(tmp_path / "c" / "python3.9"), "3.9.18", mtime=4_000)
    unfinished = built_env(data, "venv-5555", program(tmp_path / "d" / "python3.13"),
                           "3.13.0", mtime=5_000)
    (unfinished / interpreters.COMPLETE_MARK).unlink()
    (data / "venv.lock").write_text("")
    assert interpreters.built_interpreter({"CLAUDE_PLUGIN_DATA": str(data)}) == str(newer)


def test_a_fifo_for_pyvenv_cfg_is_never_read(tmp_path: Path) -> None:
    venv = tmp_path / "data" / "venv-0000"
    venv.mkdir(parents=True)
    os.mkfifo(venv / "pyvenv.cfg")  # opened for reading, it would block the hook
    (venv / interpreters.COMPLETE_MARK).write_text("")
    assert interpreters.built_interpreter({"CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}) is None
    assert interpreters.pyvenv_settings(str(venv)) == {}


def test_outside_claude_code_the_plugin_data_folders_are_looked_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    base = program(tmp_path / "base" / "python3.12")
    built_env(tmp_path / ".claude" / "plugins" / "data" / "finesse-marketplace", "venv-9", base)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert interpreters.environment_folders(env) == [
        str(tmp_path / ".claude" / "plugins" / "data" / "finesse-marketplace"),
        str(tmp_path / "cache" / "finesse")]
    assert interpreters.built_interpreter(env) == str(base)


def test_windows_names_and_the_launcher_last(tmp_path: Path) -> None:
    bin_dir, other = tmp_path / "bin", tmp_path / "other"
    program(bin_dir / "python3.12.exe")
    program(other / "py.exe")
    program(bin_dir / "python3.11")  # no .exe: not what Windows would start
    env = {"PATH": f"{bin_dir};{other}", "CLAUDE_PLUGIN_DATA": str(tmp_path / "no-data")}
    assert list(candidates(env, windows=True)) == [
        Candidate([str(bin_dir / "python3.12.exe")], "python3.12 on PATH"),
        Candidate([str(other / "py.exe"), "-3"], "the Python launcher py -3"),
    ]


def test_the_refusal_names_what_was_looked_for() -> None:
    assert interpreters.refusal((3, 9, 18), windows=False) == (
        "finesse: needs Python 3.11 or newer; python3 is 3.9.18, and none was found (looked "
        "for FINESSE_PYTHON, the interpreter of finesse's environment, python3.13, python3.12 "
        "and python3.11 on PATH): install Python 3.11 or newer (from python.org, or e.g. `brew "
        "install python@3.12`) or set FINESSE_PYTHON to one; see `ralph doctor`")
    assert interpreters.looked_for(windows=True) == (
        "FINESSE_PYTHON, the interpreter of finesse's environment, python3.13, python3.12 and "
        "python3.11 on PATH, and py -3")
    assert interpreters.refusal((3, 8, 1), "python3.12 on PATH", who="ralph") == (
        "ralph: needs Python 3.11 or newer, and python3.12 on PATH is 3.8.1: install Python "
        "3.11 or newer (from python.org, or e.g. `brew install python@3.12`) or set "
        "FINESSE_PYTHON to one; see `ralph doctor`")


def test_the_launchers_minimum_is_the_finders() -> None:
    # launch.py and bin/ compare with a literal, so as to import nothing first.
    for path in (REPO / "hooks" / "launch.py", REPO / "bin" / "ralph", REPO / "bin" / "finesse"):
        assert f"sys.version_info < {interpreters.MIN_PYTHON}" in path.read_text(), path


# What an old python3 imports before it hands over: all of it must compile under 3.6.
OLD_PYTHON_FILES = (
    "hooks/launch.py", "bin/ralph", "bin/finesse", "scripts/finesse/__init__.py",
    "scripts/finesse/support/__init__.py", "scripts/finesse/support/interpreters.py",
    "scripts/finesse/support/slash.py", "scripts/finesse/hooks/__init__.py",
    "scripts/finesse/hooks/relaunch.py", "scripts/finesse/cli/__init__.py",
    "scripts/finesse/cli/relaunch.py",
)


@pytest.mark.parametrize("path", OLD_PYTHON_FILES)
def test_what_an_old_python3_imports_compiles_under_python_3_6(path: str) -> None:
    source = (REPO / path).read_text()
    done = subprocess.run(
        [str(python("3.6")), "-S", "-c",
         "import sys; compile(sys.stdin.read(), sys.argv[1], 'exec')", path],
        input=source, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")


def test_the_old_python_files_are_all_that_launch_py_imports_before_handing_over(
        tmp_path: Path) -> None:
    # Under 3.6, with nothing to hand over to: what got imported is the list above.
    driver = (
        "import runpy, sys; "
        f"sys.argv = [{str(REPO / 'hooks' / 'launch.py')!r}, 'stop']; "
        f"runpy.run_path({str(REPO / 'hooks' / 'launch.py')!r}, run_name='launch')['main'](); "
        "print(sorted(m for m in sys.modules if m.startswith('finesse')))"
    )
    done = subprocess.run([str(python("3.6")), "-S", "-c", driver], input=b"{}",
                          capture_output=True, timeout=60,
                          env={"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == str(sorted([
        "finesse", "finesse.hooks", "finesse.hooks.relaunch", "finesse.support",
        "finesse.support.interpreters", "finesse.support.slash"]))
