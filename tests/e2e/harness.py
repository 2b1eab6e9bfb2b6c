"""Run the real ``claude`` CLI against the scripted fake Messages API.

The fixtures in conftest.py wrap this module; tests use them like::

    @pytest.mark.e2e
    def test_x(run_claude: ClaudeRunner, project: Path) -> None:
        with FakeModel([[text("done")]]) as model:
            run = run_claude("do it", cwd=project, model=model)
        assert run.returncode == 0 and run.result is not None

Every run gets a throw-away HOME (shared by the runs of one test, so that
``--resume`` finds the session), the fake server as ANTHROPIC_BASE_URL, no
real ANTHROPIC_*/CLAUDE_* variable of the parent, and the test interpreter
first on PATH so that the plugin's ``python3`` hooks run with it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.fakeapi import FakeModel

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = REPO_ROOT / "scripts"
INSTALL_SCRIPT = REPO_ROOT / "tools" / "install_claude.py"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SMOKE_PLUGIN = FIXTURES / "smoke-plugin"
MODEL_NAME = "claude-sonnet-4-5"

# Variables of the parent that could point the CLI at a real account, a real
# API or another session, or change its behaviour behind the test's back.
_STRIPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "CLAUDECODE", "FINESSE_", "OTEL_")
_STRIPPED_NAMES = frozenset({"IS_SANDBOX", "DISABLE_AUTOUPDATER", "MAX_THINKING_TOKENS"})

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class ClaudeNotInstalled(RuntimeError):
    pass


class ClaudeTimeout(AssertionError):
    """The CLI did not finish in time; carries what it printed so far."""

    def __init__(self, args: Sequence[str], timeout: float, stdout: str, stderr: str) -> None:
        super().__init__(
            f"claude did not finish within {timeout}s: {list(args)!r}\n"
            f"--- stdout ---\n{stdout[-4000:]}\n--- stderr ---\n{stderr[-4000:]}"
        )
        self.stdout = stdout
        self.stderr = stderr


def find_claude() -> Path:
    """The CLI to test: $FINESSE_CLAUDE_BIN, else the pinned install (made if missing)."""
    override = os.environ.get("FINESSE_CLAUDE_BIN")
    if override:
        path = Path(override)
        if not path.exists():
            raise ClaudeNotInstalled(f"FINESSE_CLAUDE_BIN={override} does not exist")
        return path
    proc = subprocess.run(
        [sys.executable, str(INSTALL_SCRIPT)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        raise ClaudeNotInstalled(
            f"{INSTALL_SCRIPT.name} failed ({proc.returncode}):\n{proc.stderr[-4000:]}"
        )
    lines = proc.stdout.strip().splitlines()
    if not lines or not Path(lines[-1]).exists():
        raise ClaudeNotInstalled(f"{INSTALL_SCRIPT.name} printed no binary path: {proc.stdout!r}")
    return Path(lines[-1])


def base_env(parent: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent environment less everything that could leak a real setup."""
    source = os.environ if parent is None else parent
    return {
        key: value
        for key, value in source.items()
        if not key.startswith(_STRIPPED_PREFIXES) and key not in _STRIPPED_NAMES
    }


def claude_env(
    *,
    home: Path,
    base_url: str,
    permission_mode: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    env = base_env()
    path = env.get("PATH", os.defpath)
    pythonpath = env.get("PYTHONPATH")
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "test-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            # Hooks are launched as `python3`: make that the interpreter
            # running the tests, which has the project's dependencies.
            "PATH": str(Path(sys.executable).parent) + os.pathsep + path,
            "FINESSE_RUNTIME": "inherit",
            "PYTHONPATH": str(SCRIPTS) + (os.pathsep + pythonpath if pythonpath else ""),
            "PYTHONDONTWRITEBYTECODE": "1",
            **GIT_IDENTITY,
        }
    )
    if permission_mode == "bypassPermissions":
        # As root the CLI refuses bypassPermissions unless told it is sandboxed.
        env["IS_SANDBOX"] = "1"
    if extra:
        env.update(extra)
    return env


@dataclass
class ClaudeRun:
    """What one ``claude -p`` run did."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    result: dict[str, Any] | None
    home: Path
    duration: float
    session_id: str | None = field(init=False)

    def __post_init__(self) -> None:
        sid = self.result.get("session_id") if self.result else None
        self.session_id = sid if isinstance(sid, str) else None

    @property
    def text(self) -> str | None:
        """The ``result`` field of the json output: the final reply text."""
        value = self.result.get("result") if self.result else None
        return value if isinstance(value, str) else None

    @property
    def transcript_path(self) -> Path | None:
        if self.session_id is None:
            return None
        found = sorted((self.home / ".claude" / "projects").glob(f"*/{self.session_id}.jsonl"))
        return found[0] if found else None

    def describe(self) -> str:
        """Everything useful for an assertion message."""
        return (
            f"args={self.args!r}\nreturncode={self.returncode} ({self.duration:.1f}s)\n"
            f"--- stdout ---\n{self.stdout[-4000:]}\n--- stderr ---\n{self.stderr[-4000:]}"
        )


def parse_result(stdout: str) -> dict[str, Any] | None:
    """The result object of ``--output-format json`` (or the last one of stream-json)."""
    text = stdout.strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
        for line in reversed(text.splitlines()):
            try:
                candidate = json.loads(line)
            except ValueError:
                continue
            if isinstance(candidate, dict) and candidate.get("type") == "result":
                value = candidate
                break
    return value if isinstance(value, dict) else None


class ClaudeRunner:
    """Runs ``claude -p`` with one binary and one throw-away HOME."""

    def __init__(self, claude_bin: Path, home: Path) -> None:
        self.claude_bin = claude_bin
        self.home = home
        self.runs: list[ClaudeRun] = []

    def build_args(
        self,
        prompt: str,
        *,
        plugin_dir: Path | None,
        extra_args: Sequence[str],
        permission_mode: str | None,
        resume: str | None,
        model_name: str | None = MODEL_NAME,
    ) -> list[str]:
        args = [str(self.claude_bin), "-p", "--output-format", "json"]
        if model_name is not None:  # None: the model the CLI (or an --agent) chooses
            args += ["--model", model_name]
        if plugin_dir is not None:
            args += ["--plugin-dir", str(plugin_dir)]
        if permission_mode is not None:
            args += ["--permission-mode", permission_mode]
        if resume is not None:
            args += ["--resume", resume]
        args += ["--allowedTools", "Bash", *extra_args]
        # The prompt goes last, after "--": options such as --allowedTools
        # take several values and would swallow it, and a prompt starting
        # with "-" would read as an option. Anything placed after "--" is
        # ignored as an option, so nothing may follow it.
        return [*args, "--", prompt]

    def __call__(
        self,
        prompt: str,
        *,
        cwd: Path,
        model: FakeModel,
        plugin_dir: Path | None = REPO_ROOT,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        permission_mode: str | None = None,
        resume: str | None = None,
        timeout: float = 180,
        model_name: str | None = MODEL_NAME,
    ) -> ClaudeRun:
        self.home.mkdir(parents=True, exist_ok=True)
        args = self.build_args(
            prompt,
            plugin_dir=plugin_dir,
            extra_args=extra_args,
            permission_mode=permission_mode,
            resume=resume,
            model_name=model_name,
        )
        full_env = claude_env(
            home=self.home, base_url=model.base_url, permission_mode=permission_mode, extra=env
        )
        started = time.monotonic()
        # Own process group, so a timeout also ends the shells and hooks the
        # CLI started, and nothing else.
        proc = subprocess.Popen(
            args,
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            raise ClaudeTimeout(args, timeout, stdout, stderr) from None
        run = ClaudeRun(
            args=args,
            returncode=proc.returncode,
            stdout=stdout,
            stderr=stderr,
            result=parse_result(stdout),
            home=self.home,
            duration=time.monotonic() - started,
        )
        self.runs.append(run)
        return run


def make_project(root: Path) -> Path:
    """A git repository with one commit, identity pinned, at ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    env = {**base_env(), **GIT_IDENTITY}

    def git(*argv: str) -> None:
        subprocess.run(
            ["git", *argv], cwd=root, env=env, check=True, capture_output=True, text=True
        )

    git("init", "-q", "-b", "main")
    (root / "README.md").write_text("test project\n", encoding="utf-8")
    git("add", "README.md")
    git("commit", "-q", "-m", "initial")
    return root
