"""The real CLI in interactive mode, in a tmux session of the test's own, for what `claude -p`
never does (the status line runs only in interactive sessions).

Onboarding and the trust dialog are pre-accepted in the throw-away HOME's `.claude.json`, so
the prompt box appears at once. The session has a unique name and is killed by name; nothing
else is touched. tmux is part of the e2e requirements (README): a missing tmux fails the
test, it never skips.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

from tests.e2e.harness import MODEL_NAME, REPO_ROOT, claude_env


def _b64(data: Mapping[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


# Claude Code reads the plan's usage windows (the `anthropic-ratelimit-unified-*` headers)
# only where plan limits apply: a claude.ai login, or a gateway token, a JWT whose audience
# is "claude-gateway", sent to a base URL that is not Anthropic's. Its signature is not
# checked. This is the offline way to have `rate_limits` in the status line's input.
GATEWAY_TOKEN = (_b64({"alg": "none", "typ": "JWT"}) + "."
                 + _b64({"aud": "claude-gateway", "sub": "finesse-e2e"}) + ".unsigned")


def window_headers(five_hour: float, five_hour_reset: int, seven_day: float,
                   seven_day_reset: int) -> dict[str, str]:
    """Response headers that report the plan's usage windows (fractions 0 to 1)."""
    return {
        "anthropic-ratelimit-unified-status": "allowed",
        "anthropic-ratelimit-unified-5h-utilization": str(five_hour),
        "anthropic-ratelimit-unified-5h-reset": str(five_hour_reset),
        "anthropic-ratelimit-unified-5h-status": "allowed",
        "anthropic-ratelimit-unified-7d-utilization": str(seven_day),
        "anthropic-ratelimit-unified-7d-reset": str(seven_day_reset),
        "anthropic-ratelimit-unified-7d-status": "allowed",
        "anthropic-ratelimit-unified-reset": str(five_hour_reset),
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
    }


def trust(home: Path, project: Path) -> None:
    """Pre-accept onboarding and the project's trust dialog."""
    path = home / ".claude.json"
    config = json.loads(path.read_text()) if path.exists() else {}
    config.update({
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": "2.1.328",
        "theme": "dark",
        "projects": {str(project): {"hasTrustDialogAccepted": True,
                                    "hasCompletedProjectOnboarding": True,
                                    "allowedTools": []}},
    })
    path.write_text(json.dumps(config))


class Interactive:
    """`claude` in a detached tmux session; use it as a context manager."""

    def __init__(self, claude_bin: Path, home: Path, project: Path, base_url: str, *,
                 env: Mapping[str, str] | None = None, api_key: bool = True) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            raise AssertionError("tmux is required by the interactive e2e tests: install it")
        self.tmux = tmux
        self.name = f"finesse-e2e-{uuid.uuid4().hex[:10]}"
        full = claude_env(home=home, base_url=base_url, extra=env)
        if not api_key:
            full.pop("ANTHROPIC_API_KEY", None)
        full["TERM"] = "xterm-256color"
        trust(home, project)
        command = [str(claude_bin), "--model", MODEL_NAME, "--plugin-dir", str(REPO_ROOT),
                   "--allowedTools", "Bash"]
        self.argv = [self.tmux, "new-session", "-d", "-s", self.name, "-x", "160", "-y", "50",
                     "-c", str(project), "--", "env", "-i",
                     *(f"{key}={value}" for key, value in full.items()), *command]

    def __enter__(self) -> Interactive:
        subprocess.run(self.argv, check=True, timeout=30)
        return self

    def __exit__(self, *_: object) -> None:
        subprocess.run([self.tmux, "kill-session", "-t", self.name], capture_output=True,
                       timeout=30)

    def screen(self) -> str:
        done = subprocess.run([self.tmux, "capture-pane", "-p", "-t", self.name],
                              capture_output=True, text=True, timeout=30)
        return done.stdout

    def type(self, line: str) -> None:
        subprocess.run([self.tmux, "send-keys", "-t", self.name, "-l", line], check=True,
                       timeout=30)
        time.sleep(0.5)
        subprocess.run([self.tmux, "send-keys", "-t", self.name, "Enter"], check=True,
                       timeout=30)

    def wait_for(self, needle: str, timeout: float = 60) -> str:
        """The screen once it shows `needle`; an AssertionError with the screen after
        `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if needle in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} never appeared; the screen:\n{screen}")
            time.sleep(0.3)

    def wait_until(self, done: Callable[[], bool], timeout: float = 60) -> None:
        """Wait until `done()` is true; an AssertionError with the screen otherwise."""
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; the screen:\n{self.screen()}")
            time.sleep(0.3)
