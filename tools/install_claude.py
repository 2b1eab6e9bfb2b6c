#!/usr/bin/env python3
"""Install the pinned Claude Code CLI used by the e2e tests and print its path.

The e2e tests must run against one known CLI version, because the facts the
plugin relies on (hook inputs, block cap, ...) were checked against it. The
install lives in a gitignored cache inside the repo so that CI, which gets a
fresh clone on a machine that may already hold the cache, reuses it.

Usage: python3 tools/install_claude.py [--prefix DIR] [--force]
Prints the absolute path of node_modules/.bin/claude on stdout; progress and
npm's chatter go to stderr so callers can capture the path alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE = "@anthropic-ai/claude-code"
VERSION = "2.1.328"
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PREFIX = REPO_ROOT / ".cache" / f"claude-code-{VERSION}"


def binary_path(prefix: Path) -> Path:
    return prefix / "node_modules" / ".bin" / "claude"


def installed_version(binary: Path) -> str | None:
    """The version the binary reports, or None when it is absent or broken."""
    if not binary.exists():
        return None
    try:
        proc = subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            env=_quiet_env(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    # Output looks like "2.1.328 (Claude Code)".
    words = proc.stdout.split()
    return words[0] if words else None


def _quiet_env() -> dict[str, str]:
    env = dict(os.environ)
    env["DISABLE_AUTOUPDATER"] = "1"
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    return env


def _run_postinstall(prefix: Path) -> None:
    """Run the package's own postinstall by hand.

    The npm package ships a placeholder bin/claude.exe that its postinstall
    replaces with the native binary. Newer npm versions may refuse to run
    install scripts that are not allow-listed, which would leave the
    placeholder in place; running the script ourselves makes the install
    independent of that policy.
    """
    pkg_dir = prefix / "node_modules" / PACKAGE
    script = pkg_dir / "install.cjs"
    node = shutil.which("node")
    if node is None or not script.exists():
        return
    subprocess.run([node, str(script)], cwd=pkg_dir, check=False, stdout=sys.stderr)


def install(prefix: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH; install Node.js and npm first")
    prefix.mkdir(parents=True, exist_ok=True)
    cmd = [
        npm,
        "install",
        "--no-audit",
        "--no-fund",
        "--prefix",
        str(prefix),
        f"{PACKAGE}@{VERSION}",
    ]
    print("+ " + " ".join(cmd), file=sys.stderr)
    # npm's stdout is progress text; keep our stdout for the binary path only.
    proc = subprocess.run(cmd, stdout=sys.stderr, stdin=subprocess.DEVNULL, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"npm install failed with exit code {proc.returncode}")
    binary = binary_path(prefix)
    if installed_version(binary) != VERSION:
        _run_postinstall(prefix)
    return binary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--prefix",
        type=Path,
        default=DEFAULT_PREFIX,
        help=f"npm prefix to install into (default: {DEFAULT_PREFIX})",
    )
    parser.add_argument(
        "--force", action="store_true", help="reinstall even if the right version is there"
    )
    args = parser.parse_args(argv)
    prefix: Path = args.prefix.resolve()
    binary = binary_path(prefix)

    if args.force or installed_version(binary) != VERSION:
        try:
            binary = install(prefix)
        except RuntimeError as exc:
            print(f"install_claude: {exc}", file=sys.stderr)
            return 1
        found = installed_version(binary)
        if found != VERSION:
            print(
                f"install_claude: {binary} reports version {found!r}, expected {VERSION}",
                file=sys.stderr,
            )
            return 1

    print(binary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
