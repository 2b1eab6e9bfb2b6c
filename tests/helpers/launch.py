"""Run the hook launcher as Claude Code does (`python3 -S hooks/launch.py EVENT`, JSON on
stdin), and the `ralph` command line as a terminal does (`bin/ralph ...`), in subprocesses.
`run_configured` runs an event's command exactly as hooks.json gives it, its program found on
a PATH of the test's choosing (as Claude Code finds an exec-form hook's command)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers.hooks import prompt_input, stop_input

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
LAUNCHER = REPO_ROOT / "hooks" / "launch.py"
HOOKS_JSON = REPO_ROOT / "hooks" / "hooks.json"
RALPH = REPO_ROOT / "bin" / "ralph"
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


def run_launcher(event: str, stdin: bytes, env: dict[str, str], cwd: Path,
                 timeout: float = 60) -> Run:
    """The launcher run to its end; `timeout` guards against a hang (the test then fails)."""
    done = subprocess.run(
        [sys.executable, "-S", str(LAUNCHER), event], input=stdin, capture_output=True, env=env,
        cwd=cwd, timeout=timeout,
    )
    return Run(done.returncode, done.stdout.decode(), done.stderr.decode())


def configured_command(hook_event: str, path: str) -> list[str]:
    """The command hooks.json gives `hook_event` ("Stop"), as Claude Code starts it:
    `${CLAUDE_PLUGIN_ROOT}` replaced, the program found on `path`."""
    groups = json.loads(HOOKS_JSON.read_text())["hooks"][hook_event]
    [hook] = [hook for group in groups for hook in group["hooks"]]
    program = shutil.which(hook["command"], path=path)
    assert program is not None, f"{hook['command']} is not on PATH={path}"
    return [program, *(arg.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO_ROOT))
                       for arg in hook["args"])]


def run_configured(hook_event: str, stdin: bytes, env: dict[str, str], cwd: Path,
                   timeout: float = 60) -> Run:
    """`hook_event`'s command from hooks.json run to its end, under the PATH of `env`."""
    done = subprocess.run(configured_command(hook_event, env["PATH"]), input=stdin,
                          capture_output=True, env=env, cwd=cwd, timeout=timeout)
    return Run(done.returncode, done.stdout.decode(), done.stderr.decode())


class LaunchedSession:
    """One Claude Code session in a project whose hooks run through the launcher, each in its
    own process, exactly as hooks.json has Claude Code run them. With `env`, each event runs
    the command hooks.json gives it, found on that environment's PATH; without, the launcher
    runs under the tests' own interpreter."""

    def __init__(self, root: Path, session_id: str, env: dict[str, str] | None = None) -> None:
        self.root = root
        self.session_id = session_id
        self.configured = env is not None
        self.env = hook_env(root) if env is None else env

    def _run(self, event: str, hook_event: str, raw: bytes) -> Run:
        if self.configured:
            return run_configured(hook_event, raw, self.env, self.root)
        return run_launcher(event, raw, self.env, self.root)

    def submit(self, prompt: str) -> Run:
        """The UserPromptSubmit hook's run for a prompt typed in the session."""
        raw = prompt_input(prompt, self.session_id, str(self.root))
        return self._checked(self._run(PROMPT_SUBMIT, "UserPromptSubmit", raw))

    def stop(self, reply: str) -> Run:
        """The Stop hook's run after the agent's `reply`."""
        raw = stop_input(reply, self.session_id, str(self.root), stop_hook_active=True)
        return self._checked(self._run(STOP, "Stop", raw))

    @staticmethod
    def _checked(run: Run) -> Run:
        assert (run.code, run.stderr) == (0, ""), run
        return run

def start_launcher(event: str, stdin: bytes, env: dict[str, str],
                   cwd: Path) -> subprocess.Popen[bytes]:
    """The launcher started and fed its input, not waited for: to run two hooks at once."""
    process = subprocess.Popen(
        [sys.executable, "-S", str(LAUNCHER), event], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
    )
    assert process.stdin is not None
    process.stdin.write(stdin)
    process.stdin.close()
    return process


def finished(process: subprocess.Popen[bytes], timeout: float = 60) -> Run:
    """A started launcher's run, once it has ended (killed, and the test failed, after
    `timeout` seconds)."""
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    assert process.stdout is not None and process.stderr is not None
    out, err = process.stdout.read(), process.stderr.read()
    process.stdout.close()
    process.stderr.close()
    return Run(code, out.decode(), err.decode())


def run_ralph(root: Path, *argv: str, timeout: float = 60) -> Run:
    """`ralph ARGV` run from a terminal in the project (its output decoded with escapes, so
    any byte it printed shows)."""
    done = subprocess.run(
        [sys.executable, str(RALPH), *argv], capture_output=True, env=hook_env(root), cwd=root,
        timeout=timeout,
    )
    return Run(done.returncode, done.stdout.decode(errors="backslashreplace"),
               done.stderr.decode(errors="backslashreplace"))
