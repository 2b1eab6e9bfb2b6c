"""The real interpreters some tests run the launchers under: old ones (3.6, 3.8, 3.9, as a
stock macOS or an old Linux has as `python3`) and a new one that is not the tests' own
(3.12, as Homebrew puts beside it). Standard library only: tools/run_tests.py imports this
to check for them up front, before it builds anything.

Python X.Y is, in this order: the path in FINESSE_TEST_PYTHON_X_Y; the highest
`$PYENV_ROOT/versions/X.Y.*/bin/pythonX.Y` (PYENV_ROOT defaults to `~/.pyenv` of the real
home, never the tests' throw-away HOME); `pythonX.Y` on PATH when it is a program (a pyenv
shim there runs only the selected version, so it is passed over). A test needing one that is
missing fails with one line saying what to install: it never skips.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
from pathlib import Path

# The versions the tests need; tools/run_tests.py refuses to start without them.
NEEDED = ("3.6", "3.8", "3.9", "3.12")


def _real_home() -> Path:
    return Path(pwd.getpwuid(os.getuid()).pw_dir)


def _patch(path: Path) -> int:
    found = re.fullmatch(r"\d+\.\d+\.(\d+)", path.name)
    return int(found.group(1)) if found else -1


def find_python(version: str) -> Path | None:
    """Python `version` ("3.9"), found as the module docstring says, or None."""
    configured = os.environ.get(f"FINESSE_TEST_PYTHON_{version.replace('.', '_')}")
    if configured:
        return Path(configured) if Path(configured).is_file() else None
    root = Path(os.environ.get("PYENV_ROOT") or _real_home() / ".pyenv") / "versions"
    installed = sorted(root.glob(f"{version}.*/bin/python{version}"),
                       key=lambda path: _patch(path.parent.parent))
    if installed:
        return installed[-1]
    on_path = shutil.which(f"python{version}")
    if on_path is None:
        return None
    with open(on_path, "rb") as program:
        return None if program.read(2) == b"#!" else Path(on_path)


def how_to_install(version: str) -> str:
    variable = f"FINESSE_TEST_PYTHON_{version.replace('.', '_')}"
    return (f"Python {version} is needed by the tests of old and other interpreters: install "
            f"it (e.g. `pyenv install {version}`) or set {variable} to its path")


def missing() -> list[str]:
    """The needed versions that cannot be found."""
    return [version for version in NEEDED if find_python(version) is None]


def python(version: str) -> Path:
    """Python `version`, or the test fails in one line saying what to install."""
    found = find_python(version)
    if found is None:
        import pytest

        pytest.fail(how_to_install(version), pytrace=False)
    return found


def programs(folder: Path, **names: Path) -> Path:
    """`folder` holding each name (`python3`, `python3.12`...) as a link to its program, as a
    package manager puts interpreters on PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, target in names.items():
        (folder / name.replace("_", ".")).symlink_to(target)
    return folder


def wrapper(path: Path, target: Path | str) -> Path:
    """A script at `path` that runs `target` with its arguments, as a version manager's shim
    does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nexec "{target}" "$@"\n')
    path.chmod(0o755)
    return path


def tools_path(folder: Path) -> str:
    """A PATH entry with git alone (the hooks run it), so that no other Python comes along."""
    folder.mkdir(parents=True, exist_ok=True)
    git = shutil.which("git")
    assert git is not None, "the tests need git on PATH"
    (folder / "git").symlink_to(git)
    return str(folder)


def version(program: Path) -> str:
    """The full version `program` reports ("3.9.18")."""
    import subprocess

    done = subprocess.run([str(program), "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip()


def version_info(program: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in version(program).split("."))
