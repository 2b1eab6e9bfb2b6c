"""The plugin's own Python environment, kept in CLAUDE_PLUGIN_DATA. Standard library only.

The hooks run under whatever `python3` Claude Code finds. Their dependencies live in a
virtualenv the plugin builds itself, named by a hash of the requirements and the interpreter,
so a changed requirement or a new Python gets a fresh one. Only starting a loop may build it
(under a lock, so two sessions never build at once); the Stop path never downloads anything.
The hooks import from the virtualenv's site-packages in their own process: no second
interpreter start on the hot path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from finesse.support import interpreters
from finesse.support.locks import exclusive

SCRIPTS_DIR = Path(__file__).resolve().parents[2]
REQUIREMENTS = SCRIPTS_DIR / "requirements.txt"
COMPLETE_MARK = interpreters.COMPLETE_MARK
BUILD_TIMEOUT_SECONDS = 540
INHERIT = "inherit"


class RuntimeMissing(Exception):
    """The environment is not there (and may not be built here); str is one line for a user."""


def data_dir(env: Mapping[str, str]) -> Path:
    """FINESSE_DATA_DIR, else the plugin data folder Claude Code gives hooks, else a cache."""
    return Path(interpreters.data_dir(env))


def environment_key(requirements: bytes) -> str:
    digest = hashlib.sha256(requirements)
    digest.update(sys.version.encode())
    digest.update(os.path.realpath(sys.executable).encode())
    return digest.hexdigest()[:16]


def venv_dir(env: Mapping[str, str]) -> Path:
    """Where this interpreter's environment lives, or would be built.

    Outside Claude Code (the `ralph` CLI in a terminal) no data folder is given: an
    environment a hook already built in a Claude Code plugin data folder is used then.
    """
    name = f"venv-{environment_key(REQUIREMENTS.read_bytes())}"
    for folder in interpreters.environment_folders(env):
        if is_built(Path(folder) / name):
            return Path(folder) / name
    return data_dir(env) / name


def site_packages(venv: Path, windows: bool | None = None) -> Path:
    """Where a virtualenv of this interpreter keeps its packages (Windows: `Lib/`)."""
    if interpreters.is_windows() if windows is None else windows:
        return venv / "Lib" / "site-packages"
    return venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def venv_python(venv: Path, windows: bool | None = None) -> Path:
    """A virtualenv's interpreter (Windows: `Scripts/python.exe`)."""
    if interpreters.is_windows() if windows is None else windows:
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def is_built(venv: Path) -> bool:
    return (venv / COMPLETE_MARK).exists()


def build(venv: Path) -> None:
    """Create the virtualenv and install the requirements; raises RuntimeMissing."""
    with exclusive(venv.parent / "venv.lock"):
        if is_built(venv):
            return  # another session built it while this one waited
        if venv.exists():
            shutil.rmtree(venv)  # a build that died half-way; it holds no user data
        steps = (
            [sys.executable, "-m", "venv", str(venv)],
            [str(venv_python(venv)), "-m", "pip", "install", "--quiet",
             "--disable-pip-version-check", "--no-input", "-r", str(REQUIREMENTS)],
        )
        for step in steps:
            try:
                done = subprocess.run(
                    step, capture_output=True, text=True, timeout=BUILD_TIMEOUT_SECONDS,
                    stdin=subprocess.DEVNULL,
                )
            except (OSError, subprocess.TimeoutExpired) as err:
                raise RuntimeMissing(_failure(step, str(err))) from None
            if done.returncode != 0:
                raise RuntimeMissing(_failure(step, (done.stderr or done.stdout).strip()))
        (venv / COMPLETE_MARK).write_text(REQUIREMENTS.read_text())


def _failure(step: list[str], detail: str) -> str:
    last = detail.splitlines()[-1] if detail else "no output"
    what = "create its virtualenv" if "venv" in step else "install its dependencies"
    return f"finesse could not {what} ({last[:200]}); run `ralph doctor` for details"


def activate(env: Mapping[str, str], *, may_build: bool) -> None:
    """Make the dependencies importable in this process; raises RuntimeMissing."""
    if env.get("FINESSE_RUNTIME") == INHERIT:
        # Tests run the hooks under an interpreter that already has everything.
        if sys.flags.no_site:
            import site

            site.main()
        return
    venv = venv_dir(env)
    if not is_built(venv):
        if not may_build:
            raise RuntimeMissing(
                "finesse's Python environment is not built; start a loop with /ralph-loop "
                "to build it, or run `ralph doctor`"
            )
        build(venv)
    sys.path.insert(0, str(site_packages(venv)))
