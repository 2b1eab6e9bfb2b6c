"""What `ralph run` and `ralph resume` show while a headless loop runs, and how it ends.

On a terminal each iteration is one live line drawn by click's progress bar (iteration n/N,
elapsed time, tool calls, tokens, the last verification), left in place when the iteration
ends. Anywhere else (CI logs, a pipe) the output is plain lines: one when an iteration
starts, one when it ends. With --json the progress goes to stderr and stdout holds only the
final report as JSON.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING, TextIO

import click

from finesse.cli.ralph.common import loop_record
from finesse.headless.child import Cancel, Live
from finesse.headless.exits import exit_code
from finesse.headless.interrupts import cancel_on_signals
from finesse.headless.progress import Progress
from finesse.headless.runner import Ended, drive
from finesse.models import IterationRecord, LoopState
from finesse.spend import totals
from finesse.state.store import LoopStore

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 10_000 else str(count)


def _checks(entry: IterationRecord | None) -> str:
    if entry is None:
        return ""
    results = entry.verification or entry.gate
    if not results:
        return ""
    red = [result.command for result in results if not result.passed]
    which = "verification" if entry.verification else "gate"
    return f"{which} " + ("red: " + ", ".join(red) if red else "green")


def _minutes(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


class Lines:
    """Plain lines, one when an iteration starts and one when it ends; thread-safe (the
    loops of a graph share it, each line starting with its loop's `prefix`)."""

    def __init__(self, out: TextIO, prefix: str = "", lock: threading.Lock | None = None) -> None:
        self.out = out
        self.prefix = prefix
        self.lock = lock or threading.Lock()

    def echo(self, line: str) -> None:
        with self.lock:
            click.echo(f"{self.prefix}{line}", file=self.out)

    def iteration_started(self, state: LoopState, pid: int) -> None:
        self.echo(f"iteration {state.iteration}/{state.max_iterations} started "
                  f"(claude pid {pid})")

    def live(self, state: LoopState, live: Live) -> None:
        pass

    def iteration_ended(self, state: LoopState, entry: IterationRecord | None,
                        note: str) -> None:
        if entry is None:
            return
        self.echo(self.summary(state, entry))
        if note:
            self.echo(note)

    @staticmethod
    def summary(state: LoopState, entry: IterationRecord) -> str:
        seconds = (entry.ended_at - entry.started_at).total_seconds()
        spent = totals(state, [entry])
        parts = [f"iteration {entry.number}/{state.max_iterations}: {entry.result}",
                 _minutes(seconds), f"{entry.tool_calls or 0} tool call(s)",
                 f"{_tokens(spent.billed_tokens)} tokens"]
        checks = _checks(entry)
        return " · ".join([*parts, *([checks] if checks else [])])

    def say(self, line: str) -> None:
        self.echo(line)


class Bar(Lines):
    """A terminal: a live line per iteration (click's progress bar), kept when it ends."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        self.bar: ProgressBar[int] | None = None
        self.info = ""
        self.last_checks = ""

    def iteration_started(self, state: LoopState, pid: int) -> None:
        self._close()
        self.info = f"0:00 · 0 tool calls · 0 tokens{self._last()}"
        bar: ProgressBar[int] = click.progressbar(length=state.max_iterations, file=self.out,
                                label=f"iteration {state.iteration}/{state.max_iterations}",
                                show_eta=False, show_percent=False, width=20,
                                item_show_func=lambda _: self.info)
        bar.pos = state.iteration - 1
        bar.__enter__()
        self.bar = bar

    def _last(self) -> str:
        return f" · last: {self.last_checks}" if self.last_checks else ""

    def live(self, state: LoopState, live: Live) -> None:
        if self.bar is None:
            return
        self.info = (f"{_minutes(live.elapsed)} · {live.tool_calls} tool call(s) · "
                     f"{_tokens(live.tokens)} tokens{self._last()}")
        self.bar.render_progress()

    def iteration_ended(self, state: LoopState, entry: IterationRecord | None,
                        note: str) -> None:
        if entry is not None:
            self.last_checks = _checks(entry) or self.last_checks
            self.info = self.summary(state, entry).split(": ", 1)[1]
            if self.bar is not None:
                self.bar.update(1)
        self._close()
        if note:
            self.echo(note)

    def say(self, line: str) -> None:
        self._close()
        self.echo(line)

    def _close(self) -> None:
        if self.bar is not None:
            self.bar.render_progress()
            self.bar.__exit__(None, None, None)
            self.bar = None


def display(as_json: bool) -> Progress:
    stream = sys.stderr if as_json else sys.stdout
    return Bar(stream) if stream.isatty() else Lines(stream)


def finish_run(ended: Ended, cancel: Cancel, as_json: bool) -> int:
    """Print how the loop ended (its banner, or its record as JSON); the exit code."""
    state = ended.state
    signalled = cancel.signal if cancel.requested and state.ended_by == cancel.by else None
    code = exit_code(state, signalled)
    if as_json:
        click.echo(json.dumps({**loop_record(state), "exit_code": code}, indent=2,
                              ensure_ascii=True))
    else:
        click.echo(ended.banner)
    return code


def run_loop(store: LoopStore, run_id: str, *, as_json: bool) -> int:
    """Drive the headless loop `run_id` to its end in the foreground; the exit code."""
    cancel = Cancel()
    progress = display(as_json)
    with cancel_on_signals(cancel):
        try:
            ended = drive(store, run_id, cancel, progress)
        finally:
            if isinstance(progress, Bar):
                progress._close()
    return finish_run(ended, cancel, as_json)
