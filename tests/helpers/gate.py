"""Gate mode's test projects: the files they hold, and a gate loop started as typed."""

from __future__ import annotations

from pathlib import Path

from finesse.loop.lifecycle import start_loop
from finesse.loop.request import start_request
from finesse.models import LoopState
from finesse.state.store import utcnow
from tests.helpers.repo import write
from tests.helpers.states import SESSION, store_for

GATE = "test ! -e broken.txt"  # red while the iteration has left broken.txt behind
DONE_FILE = f".ralph-loop-done-{SESSION}"
OWN_ONLY = "?? .claude/\n"  # what `git status` shows when only the loop's own files exist


def own_file(root: Path) -> Path:
    """A file of the loop's own, under .claude/ralph/."""
    return write(root, ".claude/ralph/loop.json", '{"iteration": 3}\n')


def make_ignored(root: Path) -> None:
    write(root, "debug.log", "ignored\n")
    write(root, "build/out/app.bin", "ignored\n")


def modify_tracked(root: Path) -> None:
    write(root, "src/app.py", "print('v2')\n")


def start(root: Path, args: str) -> LoopState:
    """Start this session's loop with `/ralph-loop` arguments, as the prompt hook does."""
    store = store_for(root)
    with store.locked(SESSION):
        return start_loop(store, SESSION, start_request(args, root), utcnow())


def gate_section(report: str) -> list[str]:
    """The lines of the report's `## Gate` section."""
    return report.split("\n## Gate\n\n", 1)[1].split("\n\n## ", 1)[0].splitlines()
