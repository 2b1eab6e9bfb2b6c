"""What the plugin needs, checked one line at a time (`ralph doctor`). Standard library
only, so it still speaks when the dependencies are what is missing."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping

from finesse.record import Record
from finesse.support import interpreters, runtime

PLUGIN_ROOT = runtime.SCRIPTS_DIR.parent
DEPENDENCIES = ("pydantic", "click", "git", "yaml", "rich")


class Check(Record):
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


def _store_alias(path: str) -> bool:
    """Whether `path` is Windows' `python3` App Execution Alias that only opens the Store: an
    empty reparse point in `...\\Microsoft\\WindowsApps\\`."""
    try:
        empty = os.lstat(path).st_size == 0
    except OSError:
        return False
    return empty and "\\microsoft\\windowsapps\\" in path.lower().replace("/", "\\")


def hooks_python(env: Mapping[str, str], windows: bool | None = None) -> Check:
    """Which interpreter the hooks run under, and why: Claude Code starts them as `python3`
    from PATH; one older than 3.11 hands them over (finesse.support.interpreters)."""
    windows = interpreters.is_windows() if windows is None else windows
    python3 = interpreters.which("python3", env, windows)
    install = "install Python 3.11 or newer"
    if python3 is None:
        return Check("hooks' python", False, "no python3 on PATH, and Claude Code runs the "
                     f"hooks as `python3`: {install}")
    if windows and _store_alias(python3):
        return Check("hooks' python", False, f"python3 is {python3}, the Microsoft Store's "
                     "stand-in, which runs no Python: install Python with the Python Install "
                     "Manager (python.org) or from the Store, or turn that App Execution Alias "
                     "off and put a real python3 on PATH")
    version = interpreters.version_of([python3], env)
    if version is None:
        return Check("hooks' python", False, f"python3 ({python3}) does not run: {install}")
    shown = interpreters.version_text(version)
    if version >= interpreters.MIN_PYTHON:
        unused = ("; FINESSE_PYTHON is not used, it is only looked at when python3 is older "
                  "than 3.11") if env.get(interpreters.VARIABLE) else ""
        return Check("hooks' python", True, f"python3 ({python3}) is {shown}: the hooks run "
                     f"under it{unused}")
    candidate = interpreters.choose(env, windows)
    older = f"python3 ({python3}) is {shown}, older than 3.11"
    if candidate is None:
        return Check("hooks' python", False, f"{older}, and none was found (looked for "
                     f"{interpreters.looked_for(windows)}): {install} or set FINESSE_PYTHON "
                     "to one")
    command = " ".join(candidate.argv)
    chosen = interpreters.version_of(candidate.argv, env)
    if chosen is None or chosen < interpreters.MIN_PYTHON:
        what = "does not run" if chosen is None else f"is {interpreters.version_text(chosen)}"
        return Check("hooks' python", False, f"{older}; the hooks would re-run under {command} "
                     f"({candidate.reason}), which {what}: {install} or set FINESSE_PYTHON")
    return Check("hooks' python", True, f"{older}: the hooks re-run under {command} "
                 f"({interpreters.version_text(chosen)}, {candidate.reason})")


def checks(env: Mapping[str, str]) -> list[Check]:
    found: list[Check] = []
    version = sys.version_info
    found.append(Check(
        "python", version >= (3, 11),
        f"{sys.version.split()[0]} at {sys.executable}" + ("" if version >= (3, 11) else
                                                          "; finesse needs Python 3.11 or newer"),
    ))
    found.append(hooks_python(env))
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
