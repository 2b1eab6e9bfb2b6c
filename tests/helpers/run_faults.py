"""A fault-injecting `git` for kill sweeps of `ralph run` (tests/helpers/faults.py is the
hooks'): put `FaultyGit(folder).bin` first on PATH and every git call of the process under
test goes through it. It runs the real git, counts the call, and
right after call number FAULT_KILL_AT (an environment variable) SIGKILLs its caller, the
process that ran git, before that process sees git's answer: the caller dies between two of
its steps, as after the OOM killer or a closed terminal. It kills only a caller whose command
line holds FAULT_KILL_WHO (the `ralph` under test), never anything else; without
FAULT_KILL_AT it only counts, which is how a sweep learns how many calls a run makes."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

FAULTY_GIT = r'''#!PYTHON
import fcntl, os, signal, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
done = subprocess.run([REAL_GIT, *sys.argv[1:]])
with open(os.path.join(here, "count"), "a+") as counter:
    fcntl.flock(counter, fcntl.LOCK_EX)
    counter.seek(0)
    number = int(counter.read() or 0) + 1
    counter.seek(0)
    counter.truncate()
    counter.write(str(number))
    counter.flush()
kill_at = os.environ.get("FAULT_KILL_AT")
caller = os.getppid()
if kill_at and number == int(kill_at):
    try:
        command = open(f"/proc/{caller}/cmdline", "rb").read().replace(b"\0", b" ")
    except OSError:
        command = b""
    if os.environ.get("FAULT_KILL_WHO", "\0").encode() in command:
        with open(os.path.join(here, "killed"), "a") as log:
            log.write(f"{number} {' '.join(sys.argv[1:])}\n")
        os.kill(caller, signal.SIGKILL)
sys.exit(done.returncode)
'''


class FaultyGit:
    """The fault-injecting git in `folder` (its `bin`), and how many calls it has seen."""

    def __init__(self, folder: Path) -> None:
        real = shutil.which("git")
        assert real is not None, "the sweeps need git"
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.bin = folder / "git"
        self.bin.write_text(FAULTY_GIT.replace("PYTHON", sys.executable)
                            .replace("REAL_GIT", repr(real)))
        os.chmod(self.bin, 0o755)

    @property
    def calls(self) -> int:
        counter = self.folder / "count"
        return int(counter.read_text() or 0) if counter.exists() else 0

    @property
    def killed(self) -> list[str]:
        """`N ARGS` for each call after which the caller was killed."""
        log = self.folder / "killed"
        return log.read_text().splitlines() if log.exists() else []

    def reset(self) -> None:
        for name in ("count", "killed"):
            (self.folder / name).unlink(missing_ok=True)

    def env(self, base: dict[str, str], kill_at: int | None, who: str) -> dict[str, str]:
        env = {**base, "PATH": f"{self.folder}{os.pathsep}{base.get('PATH', '')}",
               "FAULT_KILL_WHO": who}
        if kill_at is not None:
            env["FAULT_KILL_AT"] = str(kill_at)
        else:
            env.pop("FAULT_KILL_AT", None)
        return env
