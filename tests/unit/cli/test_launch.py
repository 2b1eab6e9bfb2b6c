"""finesse.cli.launch: the status line's fast path is taken only as Claude Code runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from finesse.cli.launch import fast_statusline

PLUGIN = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(("argv", "fast"), [
    (["ralph", "statusline"], True),
    (["ralph", "statusline", "--chain", "echo hi"], True),
    (["ralph", "statusline", "--help"], False),
    (["ralph", "statusline", "--install"], False),
    (["ralph", "statusline", "--chain", "x", "--project", "p"], False),
    (["ralph", "status"], False),
])
def test_the_fast_path_is_the_plain_call(argv: list[str], fast: bool) -> None:
    assert fast_statusline(argv) is fast


def test_statusline_help_is_the_clis_help_not_a_status_line() -> None:
    done = subprocess.run([sys.executable, str(PLUGIN / "bin" / "ralph"), "statusline",
                           "--help"], input=b"", capture_output=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode().startswith("Usage: ralph statusline [OPTIONS]")
