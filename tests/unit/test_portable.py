"""The package loads where POSIX-only modules do not exist (Windows has no fcntl, termios,
pwd, grp or resource): every module of it is imported in a fresh interpreter whose import
system refuses those; only the doors (finesse.support.locks, .processes, .pipes) ever touch a
platform's own API, and only when used."""

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
