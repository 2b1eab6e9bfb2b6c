"""The package loads where POSIX-only modules do not exist (Windows has no fcntl, termios,
pwd, grp or resource): every module of it is imported in a fresh interpreter whose import
system refuses those. And only the doors (finesse.support.locks, .processes, .pipes) touch a
platform's own API, read from the source: its modules, POSIX-only calls and signals, and
Popen's POSIX-only options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
POSIX_ONLY = ("fcntl", "termios", "pwd", "grp", "resource")

IMPORT_ALL = """
import importlib, importlib.abc, json, pkgutil, sys

BLOCKED = set(sys.argv[1].split(","))


class WindowsHasNone(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


for name in BLOCKED:
    sys.modules.pop(name, None)
sys.meta_path.insert(0, WindowsHasNone())
sys.path.insert(0, sys.argv[2])
import finesse

failed, loaded = [], []
for found in pkgutil.walk_packages(finesse.__path__, "finesse."):
    try:
        importlib.import_module(found.name)
        loaded.append(found.name)
    except Exception as error:
        failed.append(f"{found.name}: {type(error).__name__}: {error}")
print(json.dumps({"failed": failed, "loaded": len(loaded),
                  "blocked_loaded": sorted(BLOCKED & set(sys.modules))}))
"""


def test_every_module_imports_without_posix_only_modules() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, ",".join(POSIX_ONLY), str(SCRIPTS)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    modules = sorted(SCRIPTS.joinpath("finesse").rglob("*.py"))
    assert result == {"failed": [], "loaded": len(modules) - 1,  # finesse/__init__ itself
                      "blocked_loaded": []}


def test_the_blocker_does_block() -> None:
    # The check above would pass vacuously if the blocker let fcntl through.
    probe = IMPORT_ALL.split("import finesse")[0] + (
        "try:\n    import fcntl\nexcept ModuleNotFoundError as error:\n    print(error)\n")
    done = subprocess.run([sys.executable, "-c", probe, "fcntl", str(SCRIPTS)],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "No module named 'fcntl'\n")


# What exists only on POSIX (or only on Windows), and the door each may be used in.
DOORS = {"finesse.support.locks", "finesse.support.processes", "finesse.support.pipes",
         "finesse.support.terminal"}
PLATFORM_MODULES = {"fcntl", "msvcrt", "termios", "pwd", "grp", "resource", "selectors"}
POSIX_ONLY_CALLS = {("os", name) for name in (
    "killpg", "setsid", "setpgrp", "getpgid", "waitid", "fork", "O_NONBLOCK", "O_NOCTTY")} | {
    ("signal", name) for name in ("SIGKILL", "SIGHUP", "SIGQUIT", "SIGCHLD", "SIGALRM",
                                  "SIGUSR1", "SIGUSR2")}
POSIX_ONLY_OPTIONS = {"start_new_session", "preexec_fn"}


def _platform_uses(path: Path) -> list[str]:
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name in PLATFORM_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module in PLATFORM_MODULES:
            found.append(node.module)
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and (node.value.id, node.attr) in POSIX_ONLY_CALLS):
            found.append(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.keyword) and node.arg in POSIX_ONLY_OPTIONS:
            found.append(f"{node.arg}=")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant)
              and node.args[0].value in PLATFORM_MODULES):
            found.append(str(node.args[0].value))
    return found


def test_nothing_platform_specific_is_used_outside_its_door() -> None:
    package = SCRIPTS / "finesse"
    outside = {}
    for path in sorted(package.rglob("*.py")):
        name = ".".join(path.relative_to(SCRIPTS).with_suffix("").parts)
        uses = _platform_uses(path)
        if uses and name not in DOORS:
            outside[name] = uses
    assert outside == {}


def test_the_doors_are_where_those_uses_are() -> None:
    # The scan above must see what it looks for: each door holds some.
    found = {door: _platform_uses(SCRIPTS / (door.replace(".", "/") + ".py")) for door in DOORS}
    assert {door: bool(uses) for door, uses in found.items()} == dict.fromkeys(DOORS, True)
