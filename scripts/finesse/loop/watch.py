"""What `ralph watch` shows, read from the project's loop files and nothing else: per
active loop its mode, iteration n/N, elapsed time, the last verification or gate result,
tokens and estimated cost, the last learning, judge mode's attempt and role; the loops that
ended most recently, with their outcome.

It only reads. The store's own loaders move a corrupt file aside (a write); this reader
never does: a file it cannot read is shown as such and left where it is. It never runs git.
`signature` is what the view polls: a few `stat` calls, so it re-reads the files only when
one of them changed.
"""

from __future__ import annotations

import contextlib
import os
from datetime import datetime
from pathlib import Path

from finesse.loop.final_report import title
from finesse.models import LoopState, judge_of
from finesse.record import Record, field
from finesse.recording import excerpt
from finesse.results import CommandResult
from finesse.schema import SchemaError
from finesse.spend import totals
from finesse.state.paths import StatePaths
from finesse.support.files import FileProblem, read_bytes, shown_name

MAX_STATE_BYTES = 32 * 1024 * 1024
RECENT = 5


class LoopView(Record):
    """One loop as the view shows it."""

    loop_id: str
    mode: str  # session, headless, with gate or judge
    iteration: int
    max_iterations: int
    elapsed: int  # seconds since it started (to its end, for an ended loop)
    task: str
    checks: str  # the last verification or gate result, in words
    tokens: int
    cost: float
    learning: str
    judge: str = ""  # judge mode: the attempt and the role at work
    outcome: str = ""  # "" while it runs
    ended_at: datetime | None = None


class Watch(Record):
    root: Path
    active: list[LoopView] = field(default_factory=list)
    ended: list[LoopView] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # files shown, never moved


def _checks_words(label: str, results: list[CommandResult]) -> str:
    red = [result.command for result in results if not result.passed]
    return f"{label} " + ("red: " + ", ".join(red) if red else "green")


def last_checks(state: LoopState) -> str:
    for entry in reversed(state.iterations):
        if entry.verification:
            return _checks_words("verification", entry.verification)
        if entry.gate:
            return _checks_words("gate", entry.gate) + (
                f" ({entry.gate_action})" if entry.gate_action else "")
    return "no check yet"


def _judge_words(state: LoopState) -> str:
    if state.judge is None:
        return ""
    try:
        judge = judge_of(state)
    except SchemaError:
        return "judge mode (its record is unreadable)"
    current = judge.current
    if current is None:
        return f"attempt {len(judge.attempts)} ended, the orchestrator's turn"
    role = ("worker" if current.worker_running else "judge" if current.judge_running
            else "orchestrator")
    return f"attempt {current.number}, {role} at work"


def _mode(state: LoopState) -> str:
    words = ["headless" if state.headless is not None else "session"]
    if state.gate:
        words.append("gate")
    if state.judge is not None:
        words.append("judge")
    return " ".join(words)


def printable(text: str) -> str:
    """Text fit for a terminal: a control character (an escape sequence in a prompt, say)
    or a lone surrogate is shown as U+FFFD, never sent to the terminal."""
    return "".join(char if char.isprintable() and not "\ud800" <= char <= "\udfff"
                   else "\ufffd" for char in text)


def view_of(state: LoopState, now: datetime) -> LoopView:
    end = state.ended_at if state.outcome else now
    spent = totals(state)
    learning = state.learnings[-1] if state.learnings else ""
    return LoopView(
        loop_id=state.loop_id, mode=_mode(state),
        iteration=len(state.iterations) if state.outcome else state.iteration,
        max_iterations=state.max_iterations,
        elapsed=max(0, int(((end or now) - state.started_at).total_seconds())),
        task=printable(excerpt(state.prompt, 100)), checks=printable(last_checks(state)),
        tokens=spent.billed_tokens, cost=spent.cost,
        learning=printable(excerpt(learning, 120)),
        judge=_judge_words(state), outcome=title(state) if state.outcome else "",
        ended_at=state.ended_at,
    )


def _read(path: Path) -> LoopState:
    return LoopState.from_json(read_bytes(path, subject=str(path), limit=MAX_STATE_BYTES))


def _entries(folder: Path) -> list[tuple[str, int, int]]:
    """(name, mtime, size) of each `*.json` in a folder; nothing when it is not one. A link
    that leads nowhere (a loop of links) is listed with its own times, so it is read, and
    shown unreadable, as `ralph status` shows it."""
    found = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(".json") and not entry.name.startswith("."):
                with contextlib.suppress(OSError):
                    try:
                        info = entry.stat()
                    except OSError:
                        info = entry.stat(follow_symlinks=False)
                    found.append((entry.name, info.st_mtime_ns, info.st_size))
    return sorted(found)


def signature(paths: StatePaths) -> tuple[object, ...]:
    """Changes whenever a loop file is written, added or removed (the files are replaced
    whole, so their folders' entries change too)."""
    return (tuple(_entries(paths.loops)), tuple(_entries(paths.history)))


def read_watch(paths: StatePaths, now: datetime, recent: int = RECENT) -> Watch:
    """The project's loops now: active ones oldest first, the `recent` last ended."""
    active: list[LoopState] = []
    unreadable: list[str] = []
    for name, mtime, _ in _entries(paths.loops):
        try:
            state = _read(paths.loops / name)
        except (FileProblem, SchemaError):
            unreadable.append(shown_name(name))
            continue
        archived = paths.history / f"{state.loop_id}.json"
        with contextlib.suppress(OSError):
            if archived.stat().st_mtime_ns >= mtime:
                continue  # it ended; its file could not be removed (a read-only folder)
        active.append(state)
    newest = sorted(_entries(paths.history), key=lambda entry: entry[1], reverse=True)
    ended: list[LoopState] = []
    for name, _, _ in newest[:recent]:
        with contextlib.suppress(FileProblem, SchemaError):
            ended.append(_read(paths.history / name))
    ended.sort(key=lambda state: state.ended_at or state.updated_at, reverse=True)
    return Watch(
        root=paths.root,
        active=[view_of(state, now) for state in sorted(active, key=lambda s: s.started_at)],
        ended=[view_of(state, now) for state in ended if state.outcome],
        unreadable=unreadable,
    )


def clock(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def spend_words(view: LoopView) -> str:
    return f"{view.tokens:,} tokens ~${view.cost:,.2f} est"


def plain_lines(watch: Watch, now: datetime) -> list[str]:
    """The view as plain lines: what `ralph watch --once` (or a pipe) prints."""
    lines = [f"ralph watch: {shown_name(str(watch.root))} at {now:%Y-%m-%d %H:%M:%S} UTC"]
    if not watch.active:
        lines.append("No active Ralph loop.")
    for view in watch.active:
        lines.append(f"- {view.loop_id} · {view.mode} · iteration {view.iteration}/"
                     f"{view.max_iterations} · {clock(view.elapsed)} · {view.checks} · "
                     f"{spend_words(view)}")
        lines.append(f"  task: {view.task}")
        if view.judge:
            lines.append(f"  judge: {view.judge}")
        if view.learning:
            lines.append(f"  last learning: {view.learning}")
    lines += [f"Unreadable loop file (left as it is): {name}" for name in watch.unreadable]
    if watch.ended:
        lines.append("Recently ended:")
    for view in watch.ended:
        when = f"{view.ended_at:%Y-%m-%d %H:%M:%S} UTC" if view.ended_at else "?"
        lines.append(f"- {view.loop_id} · {view.outcome} · {view.iteration}/"
                     f"{view.max_iterations} iterations · {clock(view.elapsed)} · "
                     f"{spend_words(view)} · ended {when}")
        lines.append(f"  task: {view.task}")
    return lines
