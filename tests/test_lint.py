"""The code stays linted and strictly typed: CI fails when either slips."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = Path(sys.executable).parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MYPYPATH=str(ROOT / "scripts"))
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=env)


def test_ruff_finds_nothing() -> None:
    done = _run(str(TOOLS / "ruff"), "check", ".", "bin/ralph", "bin/finesse")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_on_the_package() -> None:
    done = _run(str(TOOLS / "mypy"), "--strict", "scripts/finesse")
    assert done.returncode == 0, done.stdout + done.stderr
