"""What the plugin needs, checked one line at a time (`ralph doctor`). Standard library
only, so it still speaks when the dependencies are what is missing."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from finesse.support import runtime

PLUGIN_ROOT = runtime.SCRIPTS_DIR.parent
DEPENDENCIES = ("pydantic", "click", "git", "yaml", "rich")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def _run(command: list[str], timeout: float = 60) -> tuple[int, str]:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return 1, str(err)
    return done.returncode, (done.stdout + done.stderr).strip()


def checks(env: Mapping[str, str]) -> list[Check]:
    found: list[Check] = []
    version = sys.version_info
    found.append(Check(
        "python", version >= (3, 11),
        f"{sys.version.split()[0]} at {sys.executable}" + ("" if version >= (3, 11) else
                                                          "; finesse needs Python 3.11 or newer"),
    ))
    if env.get("FINESSE_RUNTIME") == runtime.INHERIT:
        found.append(Check("environment", True, "FINESSE_RUNTIME=inherit: this interpreter's"))
    else:
        venv = runtime.venv_dir(env)
        built = runtime.is_built(venv)
        found.append(Check(
            "environment", built,
            f"{venv}" + ("" if built else " is not built: type /ralph-loop in Claude Code to "
                         "build it, or check that `python3 -m venv` and pip work here"),
        ))
        if built and str(runtime.site_packages(venv)) not in sys.path:
            sys.path.insert(0, str(runtime.site_packages(venv)))
    for module in DEPENDENCIES:
        spec = importlib.util.find_spec(module)
        found.append(Check(f"import {module}", spec is not None,
                           "ok" if spec else "missing: rebuild the environment"))
    claude = shutil.which("claude", path=env.get("PATH"))
    if claude is None:
        found.append(Check("claude", False, "not on PATH: install @anthropic-ai/claude-code"))
    else:
        code, out = _run([claude, "--version"])
        found.append(Check("claude", code == 0, out.splitlines()[0] if out else "no output"))
        code, out = _run(
            [claude, "plugin", "validate", "--strict", "--profile", "directory", str(PLUGIN_ROOT)]
        )
        found.append(Check("plugin validate", code == 0,
                           "ok" if code == 0 else (out.splitlines() or ["failed"])[-1]))
    return found


def report(env: Mapping[str, str] | None = None) -> tuple[bool, str]:
    found = checks(os.environ if env is None else env)
    lines = [f"{'ok ' if c.ok else 'BAD'} {c.name}: {c.detail}" for c in found]
    return all(c.ok for c in found), "\n".join(lines)
