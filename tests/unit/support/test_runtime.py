"""The plugin's own environment: where it lives, that it is built once, and how it fails."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from finesse.support import runtime


def test_environment_key_follows_requirements_and_interpreter() -> None:
    assert runtime.environment_key(b"pydantic\n") == runtime.environment_key(b"pydantic\n")
    assert runtime.environment_key(b"pydantic\n") != runtime.environment_key(b"pydantic<2\n")


def test_venv_dir_prefers_explicit_data_dirs(tmp_path: Path) -> None:
    key = runtime.environment_key(runtime.REQUIREMENTS.read_bytes())
    assert runtime.venv_dir({"CLAUDE_PLUGIN_DATA": str(tmp_path / "d")}) == (
        tmp_path / "d" / f"venv-{key}")
    assert runtime.venv_dir({"FINESSE_DATA_DIR": str(tmp_path / "f"),
                             "CLAUDE_PLUGIN_DATA": str(tmp_path / "d")}) == (
        tmp_path / "f" / f"venv-{key}")


def test_outside_claude_code_a_hook_built_environment_is_found(_isolated_home: Path) -> None:
    key = runtime.environment_key(runtime.REQUIREMENTS.read_bytes())
    fallback = _isolated_home / ".cache" / "finesse" / f"venv-{key}"
    assert runtime.venv_dir({}) == fallback
    built = _isolated_home / ".claude" / "plugins" / "data" / "finesse-market" / f"venv-{key}"
    built.mkdir(parents=True)
    assert runtime.venv_dir({}) == fallback  # not complete yet: not used
    (built / runtime.COMPLETE_MARK).write_text("")
    assert runtime.venv_dir({}) == built


def test_activate_without_a_built_environment_never_builds_on_the_stop_path(
    tmp_path: Path,
) -> None:
    with pytest.raises(runtime.RuntimeMissing) as missing:
        runtime.activate({"FINESSE_DATA_DIR": str(tmp_path)}, may_build=False)
    assert "\n" not in str(missing.value)
    assert "ralph doctor" in str(missing.value)
    assert list(tmp_path.iterdir()) == []


def test_two_sessions_building_at_once_build_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps: list[list[str]] = []

    def fake_run(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        steps.append(command)
        time.sleep(0.2)  # long enough for the second builder to reach the lock
        if command[1:3] == ["-m", "venv"]:
            Path(command[-1]).mkdir(parents=True)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(runtime.subprocess, "run", fake_run)
    venv = tmp_path / "venv-x"
    builders = [threading.Thread(target=runtime.build, args=(venv,)) for _ in range(2)]
    for builder in builders:
        builder.start()
    for builder in builders:
        builder.join()
    assert [step[1:3] for step in steps] == [["-m", "venv"], ["-m", "pip"]]
    assert runtime.is_built(venv)


def test_a_failed_install_is_one_line_naming_ralph_doctor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "requirements.txt"
    broken.write_text("finesse-no-such-package-for-tests==0.0.1\n")
    monkeypatch.setattr(runtime, "REQUIREMENTS", broken)
    with pytest.raises(runtime.RuntimeMissing) as failed:
        runtime.activate({"FINESSE_DATA_DIR": str(tmp_path / "data")}, may_build=True)
    message = str(failed.value)
    assert message.startswith("finesse could not install its dependencies (")
    assert message.endswith("); run `ralph doctor` for details")
    assert "\n" not in message
    assert not any((tmp_path / "data").glob(f"venv-*/{runtime.COMPLETE_MARK}"))


def test_a_windows_virtualenv_keeps_its_interpreter_and_packages_elsewhere(
        tmp_path: Path) -> None:
    import sys

    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    venv = tmp_path / "venv-x"
    assert (runtime.venv_python(venv, windows=True), runtime.site_packages(venv, windows=True)) == (
        venv / "Scripts" / "python.exe", venv / "Lib" / "site-packages")
    assert (runtime.venv_python(venv, windows=False),
            runtime.site_packages(venv, windows=False)) == (
        venv / "bin" / "python", venv / "lib" / version / "site-packages")


def test_a_real_virtualenv_has_them_where_this_platform_says(tmp_path: Path) -> None:
    import venv

    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    assert runtime.venv_python(tmp_path / "venv").is_file()
    assert runtime.site_packages(tmp_path / "venv").is_dir()
