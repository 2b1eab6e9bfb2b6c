"""Run the stdlib hook launchers as Claude Code does: `python3 -S hooks/X.py`, JSON on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
STOP = REPO_ROOT / "hooks" / "stop.py"
PROMPT_SUBMIT = REPO_ROOT / "hooks" / "user_prompt_submit.py"


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str

    def output(self) -> dict[str, Any] | None:
        """The one JSON object printed, or None when nothing was printed."""
        if self.stdout == "":
            return None
        assert self.stdout.endswith("\n") and self.stdout.count("\n") == 1, self.stdout
        parsed = json.loads(self.stdout)
        assert isinstance(parsed, dict), self.stdout
        return parsed


def hook_env(root: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTHON", "CLAUDE_", "FINESSE_"))}
    env.update(FINESSE_RUNTIME="inherit", CLAUDE_PROJECT_DIR=str(root), **extra)
    return env


def run_launcher(script: Path, stdin: bytes, env: dict[str, str], cwd: Path) -> Run:
    done = subprocess.run(
        [sys.executable, "-S", str(script)], input=stdin, capture_output=True, env=env,
        cwd=cwd, timeout=60,
    )
    return Run(done.returncode, done.stdout.decode(), done.stderr.decode())
