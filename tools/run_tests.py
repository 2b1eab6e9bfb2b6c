"""Run the whole test suite from a fresh clone: the command the README names and CI runs.

Checks first for the tools the end-to-end tests need (git, node, npm, tmux; and ps, which
the process identity tests read) and for the other Pythons the launcher tests run under
(tests/helpers/interpreters.py says where it looks), then creates `.venv` with the package
and its test tools, installs the pinned Claude Code CLI for the end-to-end tests (and
Debian's chromium for the HTML report's browser tests, when it is missing and this may
install packages), and runs pytest. Standard library only. pytest's "no tests ran" (exit 5)
is a failure here, never a pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.helpers import interpreters  # noqa: E402 (standard library only, needs ROOT)

VENV = ROOT / ".venv"
PYTEST_NO_TESTS = 5


def _python() -> Path:
    return VENV / "bin" / "python"


def _step(title: str, command: Sequence[str | os.PathLike[str]], **kwargs: object) -> None:
    print(f"==> {title}", flush=True)
    subprocess.run([str(part) for part in command], check=True, cwd=ROOT, **kwargs)  # type: ignore[call-overload]


CHROMIUM = Path("/usr/bin/chromium")


def _ensure_chromium() -> bool:
    """Debian's `chromium`, which renders the HTML report in the browser tests: installed
    with apt-get when it is missing and this is root (or sudo works without a password)."""
    if CHROMIUM.exists():
        return True
    apt = shutil.which("apt-get")
    prefix = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
    if apt is None or prefix is None:
        print("run_tests: the browser tests need Debian's chromium at /usr/bin/chromium: "
              "install it (apt-get install chromium), then run this again", file=sys.stderr)
        return False
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for step in (["update", "-qq"], ["install", "-y", "-qq", "chromium"]):
        _step(f"apt-get {step[0]} (chromium)", [*prefix, apt, *step], env=env)
    return CHROMIUM.exists()


def main(argv: Sequence[str] | None = None) -> int:
    # The whole suite: the slow stress runs too, which a plain `pytest` leaves out.
    pytest_args = ["-m", "slow or not slow", *(sys.argv[1:] if argv is None else argv)]
    missing = [tool for tool in ("git", "node", "npm", "tmux", "ps") if shutil.which(tool) is None]
    if missing:
        print(f"run_tests: the end-to-end tests need {', '.join(missing)} on PATH: install "
              "it, then run this again", file=sys.stderr)
        return 1
    old_pythons = interpreters.missing()
    if old_pythons:
        print(f"run_tests: {interpreters.how_to_install(old_pythons[0])}, then run this again",
              file=sys.stderr)
        return 1
    if not _ensure_chromium():
        return 1
    if not _python().exists():
        print(f"==> creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    _step("installing finesse and its test tools",
          [_python(), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "-e", ".[test]"])
    claude = subprocess.run(
        [str(_python()), str(ROOT / "tools" / "install_claude.py")],
        check=True, cwd=ROOT, capture_output=True, text=True,
    ).stdout.strip().splitlines()[-1]
    print(f"==> Claude Code CLI: {claude}", flush=True)
    env = dict(os.environ, FINESSE_CLAUDE_BIN=claude)
    print("==> pytest " + " ".join(pytest_args), flush=True)
    pytest = [str(_python()), "-m", "pytest", *pytest_args]
    code = subprocess.run(pytest, cwd=ROOT, env=env).returncode
    if code == PYTEST_NO_TESTS:
        print("run_tests: pytest collected no tests; that is a failure", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())
