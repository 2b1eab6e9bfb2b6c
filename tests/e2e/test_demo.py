"""The README's offline demo command works and shows a loop ending on its promise."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.e2e.harness import REPO_ROOT

pytestmark = pytest.mark.e2e


def test_demo_runs_a_three_iteration_loop_to_success() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "demo.py")],
        capture_output=True, text=True, timeout=900, cwd=REPO_ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    ended = "loop ended: success - Ralph loop done: <promise>DONE</promise> seen at iteration 3/5."
    assert ended in lines
    assert [line.split(":")[0].strip() for line in lines if line.startswith("  iteration ")] == [
        "iteration 1", "iteration 2", "iteration 3"
    ]
    assert "python3 test_calc.py -> exit 0 ok" in lines
