"""Run the hook launcher as Claude Code does: `python3 -S hooks/launch.py EVENT`, JSON on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
LAUNCHER = REPO_ROOT / "hooks" / "launch.py"
STOP = "stop"
PROMPT_SUBMIT = "prompt"


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


def run_launcher(event: str, stdin: bytes, env: dict[str, str], cwd: Path) -> Run:
    done = subprocess.run(
        [sys.executable, "-S", str(LAUNCHER), event], input=stdin, capture_output=True, env=env,
        cwd=cwd, timeout=60,
    )
    return Run(done.returncode, done.stdout.decode(), done.stderr.decode())
