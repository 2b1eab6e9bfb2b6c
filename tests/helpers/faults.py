"""Fault injection: a `git` on PATH that SIGKILLs the hook calling it, and the one atomic
writer's kill points, for the crash-safety tests (docs/design.md, "Crash safety").

The fake `git` is a small Python script that runs the real git (stdin, stdout and stderr
passed through), counts its calls in a file, and once the chosen call has finished, kills
its parent (the hook) with SIGKILL before the parent reads the answer: the hook dies right
after git did its work, which is the instant a crash hurts most. The call chosen is the k-th
(`kill_at=k`), or the n-th whose arguments hold a word (`kill_on="restore"`, `nth=1`).
With neither, it only counts: a clean run says how many crash points a scenario has.

The writer's kill points are `finesse.support.writes.FAULT_ENV`: "die after step N" of the
process's atomic writes (each write is four steps: temp created, data written and synced,
renamed, folder synced).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.launch import LAUNCHER, hook_env

WRITER_FAULT_ENV = "FINESSE_FAULT_DIE_AFTER_WRITE_STEP"

_FAKE_GIT = '''\
import json, os, signal, subprocess, sys
count_file = os.environ["FAULT_GIT_COUNT"]
try:
    with open(count_file) as handle:
        calls = [json.loads(line) for line in handle]
except FileNotFoundError:
    calls = []
calls.append(sys.argv[1:])
with open(count_file, "w") as handle:
    handle.write("".join(json.dumps(call) + "\\n" for call in calls))
done = subprocess.run([os.environ["FAULT_GIT_REAL"], *sys.argv[1:]])
kill_at = int(os.environ.get("FAULT_GIT_KILL_AT") or 0)
kill_on = os.environ.get("FAULT_GIT_KILL_ON") or ""
nth = int(os.environ.get("FAULT_GIT_NTH") or 1)
hit = len(calls) == kill_at
if kill_on:
    hit = (kill_on in sys.argv[1:]
           and sum(kill_on in call for call in calls) == nth)
if hit:
    os.kill(os.getppid(), signal.SIGKILL)
sys.exit(done.returncode)
'''


@dataclass(frozen=True)
class HookRun:
    code: int
    stdout: str
    calls: list[str]

    @property
    def killed(self) -> bool:
        return self.code == -9


class FaultyGit:
    """The fake git in `folder`, counting in `folder/calls`."""

    def __init__(self, folder: Path) -> None:
        real = shutil.which("git")
        assert real is not None, "git is not on PATH"
        self.real = real
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        script = folder / "git"
        script.write_text(f"#!{sys.executable} -IS\n{_FAKE_GIT}")
        script.chmod(0o755)
        self.count_file = folder / "calls"

    def env(self, root: Path, *, kill_at: int = 0, kill_on: str = "", nth: int = 1,
            die_after_write: int = 0) -> dict[str, str]:
        env = hook_env(root)
        env.update(PATH=f"{self.folder}{os.pathsep}{env.get('PATH', '')}",
                   FAULT_GIT_REAL=self.real, FAULT_GIT_COUNT=str(self.count_file),
                   FAULT_GIT_KILL_AT=str(kill_at), FAULT_GIT_KILL_ON=kill_on,
                   FAULT_GIT_NTH=str(nth))
        if die_after_write:
            env[WRITER_FAULT_ENV] = str(die_after_write)
        return env

    def run(self, event: str, raw: bytes, root: Path, **faults: int | str) -> HookRun:
        """The hook launcher for `event` (as Claude Code runs it) with these faults."""
        self.count_file.unlink(missing_ok=True)
        done = subprocess.run([sys.executable, "-S", str(LAUNCHER), event], input=raw,
                              capture_output=True, cwd=root, timeout=120,
                              env=self.env(root, **faults))  # type: ignore[arg-type]
        calls = ([" ".join(json.loads(line)) for line in self.count_file.read_text().splitlines()]
                 if self.count_file.exists() else [])
        return HookRun(done.returncode, done.stdout.decode(), calls)


def run_python(code: str, root: Path, **extra: str) -> int:
    """A Python snippet run in a process of its own (to be killed), in the project."""
    env = hook_env(root, **extra)
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, timeout=120,
                          capture_output=True)
    return done.returncode
