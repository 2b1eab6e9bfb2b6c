"""One iteration's agent: a fresh `claude -p` process, its stream read as it comes.

The child runs in a process group of its own (`finesse.support.processes`, the one door to
starting and ending it), so that ending it never signals `ralph run` itself, and is ended as
a whole: gently first (SIGTERM; Claude Code then ends the commands its Bash tool started,
which run in sessions of their own), forcibly after a grace period. On Linux it also gets
a parent-death signal, so a `ralph run` killed outright takes it along. It is ended when the
iteration runs over its time, when a cancel is asked for, or, after it exited, to take down
anything it left running. The prompt goes in on stdin: an argument is limited to 128 KiB on
Linux, a loop's prompt to 1 MiB.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from finesse.headless.stream import StreamReader, StreamSummary
from finesse.support import pipes, processes

KILL_GRACE_SECONDS = 5.0
EXIT_WAIT_SECONDS = 10.0  # for the process to exit once its output has closed
EXIT_GRACE_SECONDS = 2.0  # for its output to close once the process has exited
POLL_SECONDS = 0.2
PROGRESS_SECONDS = 1.0
MAX_LINE_BYTES = 64 * 1024 * 1024  # one event; a longer line is skipped, not kept
STDERR_TAIL = 4000


class Cancel:
    """A cancel asked for by a signal or a person, shared by every loop of a run."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.by = ""
        self.signal: int | None = None

    def request(self, by: str, signum: int | None = None) -> None:
        if not self._event.is_set():
            self.by, self.signal = by, signum
        self._event.set()

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True as soon as a cancel is asked for."""
        return self._event.wait(max(0.0, seconds))


@dataclass(frozen=True)
class Live:
    """What the running iteration has done so far, for a progress display."""

    elapsed: float
    tool_calls: int
    tokens: int
    pid: int


@dataclass(frozen=True)
class ChildResult:
    stream: StreamSummary
    exit_code: int | None  # None: it could not start
    duration: float
    killed: str = ""  # "timeout", "cancel" or "stopped" (the loop ended from outside)
    stderr_tail: str = ""
    pid: int | None = None


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """The child's group asked to end, then killed if any of it is left after the grace."""
    processes.end_group(process, KILL_GRACE_SECONDS)


def _feed_stdin(process: subprocess.Popen[bytes], data: bytes) -> None:
    stdin = process.stdin
    if stdin is None:
        return
    with contextlib.suppress(OSError):
        stdin.write(data)
    with contextlib.suppress(OSError):
        stdin.close()


class _Lines:
    """Splits the child's stdout into lines for the reader, a line at most MAX_LINE_BYTES."""

    def __init__(self, reader: StreamReader) -> None:
        self.reader = reader
        self.pending = bytearray()
        self.overlong = False

    def add(self, chunk: bytes) -> None:
        self.pending += chunk
        while True:
            end = self.pending.find(b"\n")
            if end < 0:
                break
            line = bytes(self.pending[:end])
            del self.pending[: end + 1]
            if self.overlong or len(line) > MAX_LINE_BYTES:
                self.overlong = False
                self.reader.skipped_lines += 1
                continue
            self.reader.feed(line)
        if len(self.pending) > MAX_LINE_BYTES:
            self.pending.clear()
            self.overlong = True

    def close(self) -> None:
        if self.pending and not self.overlong:
            self.reader.feed(bytes(self.pending))  # a last line without its newline
        self.pending.clear()


def run_child(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], prompt: str,
              timeout: float | None, cancel: Cancel,
              stopped: Callable[[], bool] = lambda: False,
              progress: Callable[[Live], None] | None = None,
              started: Callable[[int], None] | None = None) -> ChildResult:
    """Run one iteration's `claude -p` to its end, or until it runs over `timeout` seconds,
    a cancel is asked for, or `stopped()` says its loop ended from outside."""
    began = time.monotonic()
    reader = StreamReader()
    try:
        process = processes.start(
            list(argv), cwd=cwd, env=dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, die_with_parent=True,
        )
    except OSError as err:
        return ChildResult(reader.summary(), None, 0.0, stderr_tail=f"{argv[0]}: {err.strerror}")
    if started is not None:
        started(process.pid)
    writer = threading.Thread(target=_feed_stdin,
                              args=(process, prompt.encode("utf-8", "surrogatepass")),
                              daemon=True)
    writer.start()
    killed, stderr = _pump(process, reader, began, timeout, cancel, stopped, progress)
    if killed:
        _end_group(process)
    else:
        try:
            process.wait(timeout=EXIT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            killed = "stopped"
        _end_group(process)  # whatever it left running ends with the iteration
    writer.join(timeout=1.0)
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()
    return ChildResult(reader.summary(), process.poll(), time.monotonic() - began,
                       killed=killed, stderr_tail=stderr, pid=process.pid)


def _pump(process: subprocess.Popen[bytes], reader: StreamReader, began: float,
          timeout: float | None, cancel: Cancel, stopped: Callable[[], bool],
          progress: Callable[[Live], None] | None) -> tuple[str, str]:
    """Read stdout and stderr until both close, or until the child must be ended. Returns
    why it must be ended ("timeout", "cancel", "stopped"; "" when its output simply ended)
    and the tail of its stderr."""
    lines = _Lines(reader)
    stderr = bytearray()
    output = pipes.open_pipes()
    assert process.stdout is not None and process.stderr is not None
    output.add(process.stdout.fileno(), "out")
    output.add(process.stderr.fileno(), "err")
    last_progress = last_check = 0.0
    exited_at: float | None = None
    why = ""
    try:
        while output.open and not _held_after_exit(exited_at):
            for name, chunk in output.read(POLL_SECONDS):
                if not chunk:
                    continue  # that pipe has ended
                if name == "out":
                    lines.add(chunk)
                else:
                    stderr += chunk
                    del stderr[:-STDERR_TAIL]
            now = time.monotonic()
            if timeout is not None and now - began >= timeout:
                why = "timeout"
            elif cancel.requested:
                why = "cancel"
            elif now - last_check >= 0.5:
                last_check = now
                why = "stopped" if stopped() else ""
                if exited_at is None and process.poll() is not None:
                    exited_at = now
            if why:
                break
            if progress is not None and now - last_progress >= PROGRESS_SECONDS:
                last_progress = now
                progress(Live(now - began, reader.tool_calls, reader.running_tokens,
                              process.pid))
    finally:
        output.close()
        lines.close()
    return why, stderr.decode("utf-8", "replace")


def _held_after_exit(exited_at: float | None) -> bool:
    """Whether the child exited over EXIT_GRACE_SECONDS ago and its output is still open:
    something it left running holds the pipes (a wrapper's background helper), and would
    hold the iteration to its timeout, or for ever. What it left is ended with its group."""
    return exited_at is not None and time.monotonic() - exited_at >= EXIT_GRACE_SECONDS
