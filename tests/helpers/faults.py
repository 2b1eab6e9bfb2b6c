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

The fake is lean on purpose (a shell script, builtins only unless it kills): a sweep makes
thousands of git calls, and each one starts it.

The writer's kill points are `finesse.support.writes.FAULT_ENV`: "die after step N" of the
process's atomic writes (each write is four steps: temp created, data written and synced,
renamed, folder synced).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.launch import LAUNCHER, hook_env

WRITER_FAULT_ENV = "FINESSE_FAULT_DIE_AFTER_WRITE_STEP"

# A POSIX shell script, builtins only on the way of a call that is not killed (a Python
# fake costs a sweep five times as much CPU). Call N is recorded as the file `call.N`, its
# arguments joined by spaces: created exclusively (`set -C`), so two calls at once (a graph
# run may call git from two threads) never take the same number. A call holding the
# `kill_on` word also leaves `word.N`; counting those is exact for one caller at a time (the
# hooks, which are the ones that use it).
_FAKE_GIT = """\
#!/bin/sh
REAL_GIT "$@"
status=$?
here=HERE
set -C
number=1
while [ -e "$here/call.$number" ] || ! { printf '%s\\n' "$*" > "$here/call.$number"; } 2>/dev/null
do
    number=$((number + 1))
done
hit=false
[ "$number" = "${FAULT_GIT_KILL_AT:-0}" ] && hit=true
if [ -n "$FAULT_GIT_KILL_ON" ]; then
    hit=false
    for arg do
        if [ "$arg" = "$FAULT_GIT_KILL_ON" ]; then
            true > "$here/word.$number"
            seen=0 earlier=1
            while [ "$earlier" -le "$number" ]; do
                [ -e "$here/word.$earlier" ] && seen=$((seen + 1))
                earlier=$((earlier + 1))
            done
            [ "$seen" = "${FAULT_GIT_NTH:-1}" ] && hit=true
            break
        fi
    done
fi
if $hit && [ -n "$FAULT_GIT_KILL_WHO" ]; then
    case "$(tr '\\000' ' ' < "/proc/$PPID/cmdline" 2>/dev/null)" in
        *"$FAULT_GIT_KILL_WHO"*) ;;
        *) hit=false ;;
    esac
fi
if $hit; then
    printf '%s %s\\n' "$number" "$*" >> "$here/killed"
    kill -9 "$PPID"
fi
exit $status
"""


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
        self.bin.write_text(_FAKE_GIT.replace("REAL_GIT", shlex.quote(real))
                            .replace("HERE", shlex.quote(str(folder))))
        self.bin.chmod(0o755)

    @property
    def calls(self) -> list[str]:
        """Each call seen since the last `reset`, its arguments joined by spaces."""
        calls = []
        while (record := self.folder / f"call.{len(calls) + 1}").exists():
            calls.append(record.read_text().removesuffix("\n"))
        return calls

    @property
    def killed(self) -> list[str]:
        """`N ARGS` for each call after which the caller was killed."""
        log = self.folder / "killed"
        return log.read_text().splitlines() if log.exists() else []

    def reset(self) -> None:
        for record in self.folder.glob("call.*"):
            record.unlink()
        for record in self.folder.glob("word.*"):
            record.unlink()
        (self.folder / "killed").unlink(missing_ok=True)

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
