"""The README's offline demo command works: a loop whose early claim is rejected by the
verification command, then ends verified; and the session the README shows is this loop."""

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
    ended = ("loop ended: success - Ralph loop done: <promise>DONE</promise> at iteration 3/5 "
             "and verified: `python3 test_calc.py` exit 0.")
    assert ended in lines
    assert [line.split("'")[0].split() for line in lines if line.startswith("  iteration ")] == [
        ["iteration", "1:", "rejected"], ["iteration", "2:", "continue"],
        ["iteration", "3:", "success"],
    ]
    assert "  Files modified: 2" in lines
    assert "python3 test_calc.py -> exit 0 ok" in lines
    # The README's session: the command the demo typed, and the banner its end showed.
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    [typed] = [line.removeprefix("typed in Claude Code: ") for line in lines
               if line.startswith("typed in Claude Code: ")]
    assert f"\n{typed}\n" in readme
    assert f"Stop says: {ended.removeprefix('loop ended: success - ')}\n" in readme
    assert "  Total changes: +5, -0 (since the loop started)" in lines
    assert "     Files modified: 2 (+5, -0)\n" in readme
