"""The plugin passes Claude Code's own strictest offline check."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.harness import REPO_ROOT, base_env

pytestmark = pytest.mark.e2e


def test_plugin_validate_strict_directory_profile(claude_bin: Path, tmp_path: Path) -> None:
    env = dict(base_env(), HOME=str(tmp_path))
    done = subprocess.run(
        [str(claude_bin), "plugin", "validate", "--strict", "--profile", "directory",
         str(REPO_ROOT)],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout
