"""Fault injection for the crash-safety tests (docs/design.md, "Crash safety"): a `git` on
PATH that SIGKILLs the process calling it, and the one atomic writer's kill points.

`FaultyGit(folder)` writes the fake `git` into `folder` (its `bin`); put the folder first on
PATH (`env`) and every git call of the process under test goes through it. The fake runs the
real git (stdin, stdout and stderr passed through), records the call, and once the chosen
call has finished kills its caller (its parent, the hook or the `ralph` under test) with
SIGKILL before the caller can read git's answer: the caller dies right after git did its
work, which is the instant a crash hurts most. The call chosen is the k-th (`kill_at=k`), or
the n-th whose arguments hold a word (`kill_on="restore"`, `nth=1`). With `who`, only a
caller whose command line holds that text is killed (the `ralph` under test, never a
process it started); Linux only, as it reads the caller's command line from /proc. With no
call chosen it only records: a clean run says how many crash points a scenario has.

The fake is lean on purpose (no `site`, no `subprocess`): a sweep makes thousands of git
calls, and each one starts it.

The writer's kill points are `finesse.support.writes.FAULT_ENV`: "die after step N" of the
process's atomic writes (each write is four steps: temp created, data written and synced,
renamed, folder synced).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.launch import LAUNCHER, hook_env

WRITER_FAULT_ENV = "FINESSE_FAULT_DIE_AFTER_WRITE_STEP"

# The calls are recorded one a line, each its argument list as a Python literal (one line
# whatever the arguments hold), under a lock: a graph run may call git from two threads.
_FAKE_GIT = '''\
import fcntl, os, signal, sys
here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
child = os.posix_spawn(REAL_GIT, [REAL_GIT, *args], os.environ)
status = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
with open(os.path.join(here, "calls"), "a+") as log:
    fcntl.flock(log, fcntl.LOCK_EX)
    log.seek(0)
    before = log.readlines()
    log.write(repr(args) + "\\n")
    log.flush()
    number = len(before) + 1
    kill_at = int(os.environ.get("FAULT_GIT_KILL_AT") or 0)
    kill_on = os.environ.get("FAULT_GIT_KILL_ON") or ""
    nth = int(os.environ.get("FAULT_GIT_NTH") or 1)
    hit = number == kill_at
    if kill_on:
        calls = [eval(line) for line in before] + [args]
        hit = kill_on in args and sum(kill_on in call for call in calls) == nth
    caller = os.getppid()
    who = os.environ.get("FAULT_GIT_KILL_WHO") or ""
    if hit and who:
        try:
            with open(f"/proc/{caller}/cmdline", "rb") as command:
                hit = who.encode() in command.read().replace(b"\\0", b" ")
        except OSError:
            hit = False
    if hit:
        with open(os.path.join(here, "killed"), "a") as killed:
            killed.write(f"{number} {' '.join(args)}\\n")
        os.kill(caller, signal.SIGKILL)
sys.exit(status if status >= 0 else 128 - status)
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
    """The fake git in `folder` (its `bin`): the calls it has seen, the kills it made."""

    def __init__(self, folder: Path) -> None:
        real = shutil.which("git")
        assert real is not None, "git is not on PATH"
        self.real = real
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.bin = folder / "git"
        self.bin.write_text(f"#!{sys.executable} -IS\n"
                            + _FAKE_GIT.replace("REAL_GIT", repr(real)))
        self.bin.chmod(0o755)

    @property
    def calls(self) -> list[str]:
        """Each call seen since the last `reset`, its arguments joined by spaces."""
        log = self.folder / "calls"
        if not log.exists():
            return []
        return [" ".join(ast.literal_eval(line)) for line in log.read_text().splitlines()]

    @property
    def killed(self) -> list[str]:
        """`N ARGS` for each call after which the caller was killed."""
        log = self.folder / "killed"
        return log.read_text().splitlines() if log.exists() else []

    def reset(self) -> None:
        for name in ("calls", "killed"):
            (self.folder / name).unlink(missing_ok=True)

    def env(self, base: dict[str, str], *, kill_at: int = 0, kill_on: str = "", nth: int = 1,
            who: str = "", die_after_write: int = 0) -> dict[str, str]:
        """`base` with the fake first on PATH and these faults chosen."""
        env = {**base, "PATH": f"{self.folder}{os.pathsep}{base.get('PATH', '')}",
               "FAULT_GIT_KILL_AT": str(kill_at), "FAULT_GIT_KILL_ON": kill_on,
               "FAULT_GIT_NTH": str(nth), "FAULT_GIT_KILL_WHO": who}
        env.pop(WRITER_FAULT_ENV, None)
        if die_after_write:
            env[WRITER_FAULT_ENV] = str(die_after_write)
        return env

    def run(self, event: str, raw: bytes, root: Path, **faults: int | str) -> HookRun:
        """The hook launcher for `event` (as Claude Code runs it) with these faults."""
        self.reset()
        done = subprocess.run([sys.executable, "-S", str(LAUNCHER), event], input=raw,
                              capture_output=True, cwd=root, timeout=120,
                              env=self.env(hook_env(root), **faults))  # type: ignore[arg-type]
        return HookRun(done.returncode, done.stdout.decode(), self.calls)


def run_python(code: str, root: Path, **extra: str) -> int:
    """A Python snippet run in a process of its own (to be killed), in the project."""
    env = hook_env(root, **extra)
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, timeout=120,
                          capture_output=True)
    return done.returncode
