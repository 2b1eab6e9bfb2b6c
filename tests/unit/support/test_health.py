"""finesse.support.health.hooks_python: `ralph doctor` says which interpreter the hooks run
under and why, from the PATH Claude Code would start `python3` from (real interpreters)."""

from __future__ import annotations

from pathlib import Path

from finesse.support import interpreters
from finesse.support.health import Check, hooks_python
from tests.helpers.interpreters import programs, python, version


def env_for(path: Path, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"PATH": str(path), "CLAUDE_PLUGIN_DATA": str(tmp_path / "no-data"), **extra}


def test_a_new_enough_python3_runs_the_hooks(tmp_path: Path) -> None:
    bin_dir = programs(tmp_path / "bin", python3=python("3.12"))
    assert hooks_python(env_for(bin_dir, tmp_path), windows=False) == Check(
        "hooks' python", True,
        f"python3 ({bin_dir / 'python3'}) is {version(python('3.12'))}: the hooks run under it")
    chosen = hooks_python(env_for(bin_dir, tmp_path, FINESSE_PYTHON="/opt/python3.13"),
                          windows=False)
    assert chosen == Check(
        "hooks' python", True,
        f"python3 ({bin_dir / 'python3'}) is {version(python('3.12'))}: the hooks run under it; "
        "FINESSE_PYTHON is not used, it is only looked at when python3 is older than 3.11")


def test_an_old_python3_hands_over_to_the_one_beside_it(tmp_path: Path) -> None:
    bin_dir = programs(tmp_path / "bin", python3=python("3.9"), python3_12=python("3.12"))
    assert hooks_python(env_for(bin_dir, tmp_path), windows=False) == Check(
        "hooks' python", True,
        f"python3 ({bin_dir / 'python3'}) is {version(python('3.9'))}, older than 3.11: the "
        f"hooks re-run under {bin_dir / 'python3.12'} ({version(python('3.12'))}, python3.12 on "
        "PATH)")


def test_an_old_python3_with_nothing_to_hand_over_to(tmp_path: Path) -> None:
    bin_dir = programs(tmp_path / "bin", python3=python("3.8"))
    assert hooks_python(env_for(bin_dir, tmp_path), windows=False) == Check(
        "hooks' python", False,
        f"python3 ({bin_dir / 'python3'}) is {version(python('3.8'))}, older than 3.11, and none "
        f"was found (looked for {interpreters.looked_for(False)}): install Python 3.11 or newer "
        "or set FINESSE_PYTHON to one")


def test_a_candidate_that_is_itself_too_old(tmp_path: Path) -> None:
    # A program named python3.12 is taken at its name's word by the hooks; the doctor asks.
    bin_dir = programs(tmp_path / "bin", python3=python("3.9"), python3_12=python("3.8"))
    assert hooks_python(env_for(bin_dir, tmp_path), windows=False) == Check(
        "hooks' python", False,
        f"python3 ({bin_dir / 'python3'}) is {version(python('3.9'))}, older than 3.11; the hooks "
        f"would re-run under {bin_dir / 'python3.12'} (python3.12 on PATH), which is "
        f"{version(python('3.8'))}: install Python 3.11 or newer or set FINESSE_PYTHON")


def test_no_python3_at_all(tmp_path: Path) -> None:
    assert hooks_python(env_for(tmp_path, tmp_path), windows=False) == Check(
        "hooks' python", False,
        "no python3 on PATH, and Claude Code runs the hooks as `python3`: install Python 3.11 "
        "or newer")


def test_the_microsoft_store_stand_in_is_named(tmp_path: Path) -> None:
    # Windows puts an empty python3.exe in ...\Microsoft\WindowsApps that opens the Store.
    apps = tmp_path / "Microsoft" / "WindowsApps"
    apps.mkdir(parents=True)
    (apps / "python3.exe").write_bytes(b"")
    assert hooks_python(env_for(apps, tmp_path), windows=True) == Check(
        "hooks' python", False,
        f"python3 is {apps / 'python3.exe'}, the Microsoft Store's stand-in, which runs no "
        "Python: install Python with the Python Install Manager (python.org) or from the Store, "
        "or turn that App Execution Alias off and put a real python3 on PATH")
