"""Running one child the way Claude Code runs a hook, and measuring it: wall time and peak RSS.

The children are started by a small helper process, never by the benchmark itself (see
HELPER), one at a time, with an environment of their own (`child_env`): HOME and every cache
inside the benchmark's temporary directory, no Python, Claude or finesse settings inherited.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from stop_hook.settings import SESSION_ID

# The children are started by a small helper process (`python -E -S`, a few modules), not by
# this one: on Linux a child started with vfork (what subprocess uses) inherits this process's
# RSS high-water mark into its own ru_maxrss at exec, and a plain fork its current RSS. From the
# helper, the floor is the helper's few MiB, under any Python child's own peak. The helper also
# takes the wall time, from just before fork to the reap, so the pipe to it costs nothing.
HELPER = r"""
import json, os, signal, sys, time

def run(req):
    argv, env, data = req["argv"], req["env"], req["stdin"].encode("latin-1")
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_fd = os.open(req["stderr_path"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            os.chdir(req["cwd"])
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            os.dup2(err_fd, 2)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    os.close(in_r)
    os.close(out_w)
    os.close(err_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(in_w, view):]
    except BrokenPipeError:
        pass
    os.close(in_w)
    chunks = []
    while True:
        chunk = os.read(out_r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(out_r)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "max_rss_kib": usage.ru_maxrss,
            "returncode": os.waitstatus_to_exitcode(status),
            "stdout": b"".join(chunks).decode("latin-1")}

for line in sys.stdin.buffer:
    sys.stdout.write(json.dumps(run(json.loads(line))) + "\n")
    sys.stdout.flush()
"""


@dataclass
class Sample:
    seconds: float
    max_rss_kib: int
    returncode: int
    stdout: bytes
    stderr: bytes


class Runner:
    """Runs children through the helper; one child at a time."""

    def __init__(self, python: str, tmp: Path) -> None:
        self.stderr_path = tmp / "child-stderr"
        self.helper = subprocess.Popen(
            [python, "-E", "-S", "-c", HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            cwd=tmp,
        )

    def run(self, argv: Sequence[str], env: dict[str, str], cwd: Path, stdin: bytes) -> Sample:
        assert self.helper.stdin is not None and self.helper.stdout is not None
        request = {"argv": list(argv), "env": env, "cwd": str(cwd),
                   "stdin": stdin.decode("latin-1"), "stderr_path": str(self.stderr_path)}
        self.helper.stdin.write(json.dumps(request).encode() + b"\n")
        self.helper.stdin.flush()
        line = self.helper.stdout.readline()
        if not line:
            raise RuntimeError(f"the measuring helper died (exit {self.helper.wait()})")
        reply = json.loads(line)
        return Sample(
            reply["seconds"], int(reply["max_rss_kib"]), reply["returncode"],
            reply["stdout"].encode("latin-1"), self.stderr_path.read_bytes(),
        )

    def close(self) -> None:
        if self.helper.stdin is not None:
            self.helper.stdin.close()
        if self.helper.stdout is not None:
            self.helper.stdout.close()
        self.helper.wait()


def child_env(tmp: Path, project: Path, plugin_root: Path) -> dict[str, str]:
    """The parent's environment without Python/Claude/finesse settings, HOME in the temp dir."""
    env = {
        key: value for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "CLAUDE", "FINESSE", "VIRTUAL_ENV"))
    }
    home = tmp / "home"
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        CLAUDE_PROJECT_DIR=str(project),
        CLAUDE_PLUGIN_ROOT=str(plugin_root),
        CLAUDE_PLUGIN_DATA=str(home / ".claude" / "plugins" / "data" / "finesse-bench"),
        CLAUDE_CODE_SESSION_ID=SESSION_ID,
        FINESSE_RUNTIME="inherit",
        GIT_CONFIG_NOSYSTEM="1",
        # Bytecode caches go to the temp dir, not into the repo; the warm-up run fills them,
        # as the first stop of a real session fills the plugin's __pycache__.
        PYTHONPYCACHEPREFIX=str(tmp / "pycache"),
    )
    return env
