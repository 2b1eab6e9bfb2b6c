"""What the jobs install: the Claude Code CLI at the version finesse is tested against, and
finesse itself, which is not on PyPI, from a pip requirement.

Without `--finesse`, the requirement is where the finesse that writes the workflow came from,
at the commit it is at, so the jobs run the code that translated the plan: a pip install from
a git URL (`git+https://...@COMMIT`, as pip records it), or the git checkout holding this
package (a plugin install, a `pip install -e .`) through its `origin` remote. A checkout whose
origin a runner cannot clone (a local path, an unknown host over SSH) needs `--finesse`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import finesse
from finesse.errors import UsageError
from finesse.support import json_text
from finesse.support.git import Git

# tools/install_claude.py's VERSION: the CLI the end-to-end tests prove (a test keeps the two
# equal).
CLAUDE_CODE_VERSION = "2.1.328"
CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
NODE_VERSION = "22"
PYTHON_VERSION = "3.12"
EXAMPLE = "--finesse 'git+https://github.com/OWNER/finesse@v0.1.0'"

_SCP_LIKE = re.compile(r"(?:ssh://)?git@github\.com[:/](?P<path>[^\s]+)")


@dataclass(frozen=True)
class Requirement:
    text: str  # what `pip install` is given
    note: str = ""  # a warning for the person, or ""


def cloneable(url: str) -> str | None:
    """`url` as a runner can clone it without keys: https as it is, GitHub's SSH forms as
    https; None for anything else."""
    if url.startswith("https://"):
        return url
    found = _SCP_LIKE.fullmatch(url)
    return f"https://github.com/{found.group('path')}" if found else None


def _from_pip() -> Requirement | None:
    try:
        recorded = metadata.distribution("finesse").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        data = json_text.loads(recorded or "{}")
    except ValueError:
        return None
    vcs = data.get("vcs_info") if isinstance(data, dict) else None
    if not isinstance(vcs, dict) or vcs.get("vcs") != "git" or not vcs.get("commit_id"):
        return None
    url = str(data.get("url", ""))
    if cloneable(url) is None:
        return None
    return Requirement(f"git+{url}@{vcs['commit_id']}")


def _from_checkout(top: Path) -> Requirement | None:
    if not (top / "pyproject.toml").is_file() or not (top / ".git").exists():
        return None
    git = Git(top)
    origin = git.text("remote", "get-url", "origin")
    commit = git.text("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if not origin or not commit:
        return None
    url = cloneable(origin)
    if url is None:
        raise UsageError(f"the jobs install finesse from its checkout's origin, {origin}, "
                         f"which a runner cannot clone: give {EXAMPLE}")
    listed = git.text("branch", "-r", "--contains", commit) or ""
    published = any(line.strip().startswith("origin/") for line in listed.splitlines())
    note = "" if published else (
        f"finesse's commit {commit[:12]} is on no branch of its origin {url} that this "
        "checkout knows of: the jobs cannot install it until it is pushed (or give --finesse)")
    return Requirement(f"git+{url}@{commit}", note)


def package_checkout() -> Path:
    """The folder holding `scripts/finesse/`: a checkout when finesse runs from one."""
    return Path(finesse.__file__).resolve().parents[2]


def default_requirement(checkout: Path | None = None) -> Requirement:
    """Where the jobs install this finesse from; a UsageError asking for `--finesse` when
    that cannot be known."""
    found = _from_pip() or _from_checkout(checkout or package_checkout())
    if found is None:
        raise UsageError("cannot tell where the jobs can install this finesse from "
                         f"(it is not on PyPI): give {EXAMPLE}")
    return found
