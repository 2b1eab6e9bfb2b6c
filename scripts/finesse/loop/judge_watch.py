"""What judge mode watches, with the standard library and git: the `--protect` paths, the
working tree between workers (a change made outside any worker's run is recorded), the
subagents' spend, and the marker that tells the hot hooks a judge loop runs here.

The pure decisions about all of it are `finesse.judging`'s; this module only measures.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from pathlib import Path

from finesse.errors import UsageError
from finesse.judging.records import JudgeState
from finesse.models import LoopState
from finesse.record import Record, replace
from finesse.results import ModelUsage
from finesse.state.paths import StatePaths
from finesse.support import git as gitstate
from finesse.support import snapshot
from finesse.support.files import READ_FLAGS, is_regular_file, shown_name
from finesse.support.layout import OWN_DIR
from finesse.support.usage import read_increment

WAIT_SECONDS = 3.0
NEEDLE_CHARS = 200
TAIL_BYTES = 4 * 1024 * 1024


def check_protect(root: Path, names: list[str]) -> list[str]:
    """The `--protect` paths as paths from the project root, each once; a UsageError, in one
    line, for a path outside the project, the project itself, the plugin's own folder, or a
    path that does not exist (a typo would protect nothing)."""
    checked: list[str] = []
    top = root.resolve()
    for name in names:
        path = Path(name).expanduser()
        full = (path if path.is_absolute() else root / path).resolve()
        try:
            relative = full.relative_to(top).as_posix()
        except ValueError:
            raise UsageError(f"--protect {shown_name(name)} is outside the project {top}: "
                             "protect paths inside it") from None
        if relative == ".":
            raise UsageError("--protect cannot name the whole project: the worker would have "
                             "nothing it may change; name the paths to keep as they are")
        if relative == OWN_DIR or relative.startswith(OWN_DIR + "/"):
            raise UsageError(f"--protect {shown_name(name)} is the plugin's own folder, "
                             "which the loop itself writes: protect project paths")
        if not full.exists():
            raise UsageError(f"--protect {shown_name(name)}: no such file or folder under "
                             f"{top}; a path that does not exist would protect nothing")
        if relative not in checked:
            checked.append(relative)
    return checked


def start(paths: StatePaths, state: LoopState, criteria: list[str],
          protect: list[str]) -> LoopState:
    """A new loop in judge mode: its judge state, and the marker the hot hooks look for."""
    if gitstate.tree_fingerprint(paths.root) is None:
        raise UsageError("judge mode watches the working tree with git: run it in a git "
                         "repository (`git init`)")
    judge = new_judge(paths.root, criteria, protect, state.baseline_commit)
    mark(paths, state.session_id)
    return replace(state, judge=judge)


def new_judge(root: Path, criteria: list[str], protect: list[str],
              baseline: str | None) -> JudgeState:
    """Judge mode's state when a loop starts: what the paths hold, and the tree."""
    return JudgeState(
        criteria=list(criteria), protect=list(protect),
        protect_snapshot=snapshot.snapshot(root, protect),
        snapshot=gitstate.dirty_snapshot(root, baseline),
    )


def protect_changes(root: Path, judge: JudgeState) -> list[str]:
    """Files under the protected paths created, changed or deleted since the loop started."""
    try:
        now = snapshot.snapshot(root, judge.protect)
    except UsageError:
        return [f"{name} (now over {snapshot.MAX_FILES:,} files)" for name in judge.protect]
    return snapshot.changed(judge.protect_snapshot, now)


class Tree(Record):
    """The working tree at a checkpoint: its fingerprint, and the changed files with their
    size and time (`git.dirty_snapshot`), to name what changed since the last one."""

    fingerprint: str | None
    changed: list[str]


def tree(root: Path, baseline: str | None) -> Tree:
    return Tree(gitstate.tree_fingerprint(root), gitstate.dirty_snapshot(root, baseline))


def _holds(path: Path, needle: bytes) -> bool:
    """Whether a whole line (ended by its newline) near the end of the regular file `path`
    holds `needle` (a FIFO or a device there is never read)."""
    try:
        descriptor = os.open(path, READ_FLAGS)
    except (OSError, ValueError):
        return False
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            return False
        handle.seek(max(0, info.st_size - TAIL_BYTES))
        tail = handle.read()
    found = tail.rfind(needle)
    return found >= 0 and tail.find(b"\n", found) >= 0


def agent_usage(transcript: str | None, final: str = "",
                wait: float = WAIT_SECONDS) -> list[ModelUsage]:
    """What a subagent's own transcript says it spent, per model (its lines are sidechain
    lines; each message counted once); [] when it cannot be read.

    At SubagentStop the transcript may not exist yet, or not yet hold the final message in
    a whole line (seen in the e2e tests, as for the main transcript at Stop): that line is
    awaited, at most `wait` seconds, by looking for the start of `final` as the transcript
    writes it (JSON-escaped)."""
    if not transcript:
        return []
    if final.strip():
        needle = json.dumps(final[:NEEDLE_CHARS], ensure_ascii=False)[1:-1].encode(
            "utf-8", errors="surrogatepass")
        deadline = time.monotonic() + wait
        while not _holds(Path(transcript), needle) and time.monotonic() < deadline:
            time.sleep(0.05)
    if not is_regular_file(Path(transcript)):
        return []
    increment = read_increment(Path(transcript), None, sidechains=True)
    if increment is None:
        return []
    return increment.model_usage()


def mark(paths: StatePaths, session_id: str) -> None:
    marker = paths.judge_marker(session_id)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()


def unmark(paths: StatePaths, session_id: str) -> None:
    with contextlib.suppress(OSError):
        paths.judge_marker(session_id).unlink()
