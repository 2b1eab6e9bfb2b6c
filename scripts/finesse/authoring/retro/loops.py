"""Which ended loops belong to a plan, read through the loop store, and their reports."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from finesse.authoring.retro.model import LoopEntry, Match
from finesse.models import LoopState
from finesse.state.paths import StatePaths
from finesse.state.store import LoopStore
from finesse.support.files import FileProblem, read_bytes, shown_path

REPORT_MAX_CHARS = 20_000


def select_loops(history: Sequence[LoopState], *, prompt: str | None,
                 prompt_files: frozenset[str],
                 since: datetime) -> list[tuple[Match, LoopState]]:
    """The ended loops of this plan (matched by prompt) and the others that ended after
    `since` (matched by time), in the order they started. `prompt_files` are the names the
    prompt may go by in a loop's `prompt_file` (from the project root, and absolute)."""
    wanted = " ".join(prompt.split()) if prompt is not None else None
    chosen: list[tuple[Match, LoopState]] = []
    for loop in history:
        same_prompt = wanted is not None and " ".join(loop.prompt.split()) == wanted
        same_file = loop.prompt_file is not None and os.path.normpath(
            loop.prompt_file) in prompt_files
        if same_prompt or same_file:
            chosen.append(("prompt", loop))
        elif (loop.ended_at or loop.started_at) >= since:
            chosen.append(("time", loop))
    return sorted(chosen, key=lambda pair: pair[1].started_at)


def loop_entry(match: Match, loop: LoopState, report: str | None,
               report_text: str | None) -> LoopEntry:
    return LoopEntry(
        loop_id=loop.loop_id, match=match, outcome=loop.outcome,
        iterations=len(loop.iterations),
        started_at=loop.started_at.isoformat(),
        ended_at=loop.ended_at.isoformat() if loop.ended_at else None,
        end_message=loop.end_message, report=report, report_text=report_text)


def plan_loops(root: Path, prompt: str | None, prompt_files: frozenset[str], since: datetime,
               notes: list[str]) -> list[LoopEntry]:
    """The loops to show: those `select_loops` picks from the store's history, then the
    reports written after `since` that no history entry names. A history file the store
    cannot read is left out, and where it is, with a note."""
    paths = StatePaths(root)
    on_disk = sorted(paths.history.glob("*.json")) if paths.history.is_dir() else []
    history = LoopStore(paths).history()
    known = {loop.loop_id for loop in history}
    for path in on_disk:
        if path.stem not in known:
            notes.append(f"skipped {shown_path(path, root)}: not a readable loop record")
    loops = [loop_entry(match, loop, *_report(paths.reports / f"{loop.loop_id}.md", root))
             for match, loop in select_loops(history, prompt=prompt, prompt_files=prompt_files,
                                             since=since)]
    for report in sorted(paths.reports.glob("*.md")) if paths.reports.is_dir() else []:
        try:
            written = datetime.fromtimestamp(report.stat().st_mtime, UTC)
        except OSError:
            continue
        if report.stem not in known and written >= since:
            shown, text = _report(report, root)
            loops.append(LoopEntry(loop_id=report.stem, match="time", outcome=None,
                                   iterations=None, started_at=None, ended_at=None,
                                   end_message="", report=shown, report_text=text))
    return loops


def _report(path: Path, root: Path) -> tuple[str | None, str | None]:
    try:
        data = read_bytes(path, subject=str(path))
    except FileProblem:
        return None, None
    text = data.decode("utf-8", errors="replace")
    if len(text) > REPORT_MAX_CHARS:
        text = text[:REPORT_MAX_CHARS] + f"\n\n[... cut at {REPORT_MAX_CHARS} characters]\n"
    return shown_path(path, root), text
