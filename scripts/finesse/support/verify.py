"""Running the verification commands when the agent says it is done.

The commands are the user's own, from `--verify` or the plan's `## Verification Commands`,
and run as they would from a Makefile: one `/bin/sh -c COMMAND` each (on Windows the shell
`finesse.support.processes.shell` finds), in the project root, with stdin from /dev/null.
Each runs in a process group of its own (`finesse.support.processes`), so a timeout ends the
command and everything it started, and nothing else. Output is read as it comes
(`finesse.support.pipes`) and only a tail is kept, so a command that prints gigabytes costs a
few kilobytes of memory.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from finesse.results import CommandResult
from finesse.support import pipes, processes
from finesse.support.fingerprint import Fingerprint

DEFAULT_TIMEOUT_SECONDS = 300.0
# In a hook: each command at most COMMAND_TIMEOUT_SECONDS, all of them BUDGET_SECONDS (the
# Stop hook's own timeout in hooks.json is 3600 s).
COMMAND_TIMEOUT_SECONDS = 600.0
BUDGET_SECONDS = 3000.0
DEFAULT_TAIL_CHARS = 4000
# After the group is asked to end (SIGTERM), how long it has before it is killed (SIGKILL).
KILL_GRACE_SECONDS = 2.0
# After the shell exits, how long a background process holding its output may keep writing.
DRAIN_SECONDS = 1.0
FINGERPRINT_CHARS = 2000
_POLL_SECONDS = 0.05
_EXIT_POLL_SECONDS = 0.005

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_HEX_LITERAL = re.compile(r"\b0[xX][0-9a-fA-F]+\b")
_HEX_RUN = re.compile(r"(?<![0-9A-Za-z])(?=[0-9A-Fa-f]*[0-9])[0-9A-Fa-f]{8,}(?![0-9A-Za-z])")
_DIGITS = re.compile(r"[0-9]+")
_RULE = re.compile(r"([=\-_*~+#.])\1{3,}")


def normalise_output(text: str) -> str:
    """Output with run-to-run noise taken out: what `fingerprint` hashes.

    Colour codes go; hex addresses and hashes, then every run of digits, become `#` (so
    timings, counts, PIDs and numbered temporary names do not matter); a rule of repeated
    `=`, `-` and the like shrinks to three characters, since its length follows the text
    centred in it, such as pytest's summary line; trailing whitespace and blank lines go.
    """
    text = _ANSI_ESCAPE.sub("", text)
    text = _HEX_LITERAL.sub("#", text)
    text = _HEX_RUN.sub("#", text)
    text = _DIGITS.sub("#", text)
    text = _RULE.sub(r"\1\1\1", text)
    lines = [line.rstrip() for line in re.split(r"\r\n|\r|\n", text)]
    return "\n".join(lines).strip("\n")


def fingerprint(exit_code: int | None, timed_out: bool, output_tail: str, *,
                window: int = FINGERPRINT_CHARS) -> str:
    """A short hash naming a failure: the same failure twice gives the same fingerprint.

    It covers the exit code ("timeout", or "not-started" when there is none) and the last
    `window` characters of the normalised output. The window is cut from the end of the
    normalised text, so it does not move when noise earlier in the output changes length and
    shifts where a kept tail starts; run_command uses half the tail for it.
    """
    body = normalise_output(output_tail)
    body = body[-window:] if window > 0 else ""
    status = "timeout" if timed_out else "not-started" if exit_code is None else str(exit_code)
    return Fingerprint(f"{status}\n{body}".encode()).hexdigest()


class _Tail:
    """The last bytes of a stream, in a bounded buffer."""

    def __init__(self, keep_bytes: int) -> None:
        self.keep_bytes = keep_bytes
        self.buffer = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.buffer += chunk
        if len(self.buffer) > self.keep_bytes:
            del self.buffer[: len(self.buffer) - self.keep_bytes]

    def text(self, chars: int) -> str:
        decoded = self.buffer.decode("utf-8", errors="replace")
        return decoded[-chars:] if chars > 0 else ""


class _Reader:
    """Reads a pipe into a tail until the end of the stream or a deadline."""

    def __init__(self, pipe: int, tail: _Tail) -> None:
        self.tail = tail
        self.ended = False
        self.pipes = pipes.open_pipes()
        self.pipes.add(pipe, "output")

    def read_for(self, seconds: float) -> None:
        """Read what arrives within `seconds`."""
        if self.ended:  # only the exit is awaited now: look again soon
            time.sleep(max(0.0, min(seconds, _EXIT_POLL_SECONDS)))
            return
        for _, chunk in self.pipes.read(seconds):
            if chunk:
                self.tail.add(chunk)
            else:
                self.ended = True

    def close(self) -> None:
        self.pipes.close()


def _not_started(command: str, shell: str, cwd: Path, error: Exception,
                 started: float) -> CommandResult:
    if isinstance(error, ValueError):
        reason = "the command contains a NUL character"
    elif not cwd.exists():
        reason = "that directory does not exist"
    elif not cwd.is_dir():
        reason = "that is not a directory"
    else:
        reason = getattr(error, "strerror", None) or str(error)
    tail = f"could not start {shell} in {cwd}: {reason}"
    return CommandResult(
        command=command, exit_code=None, timed_out=False,
        duration_seconds=time.monotonic() - started, output_tail=tail, output_bytes=0,
        fingerprint=fingerprint(None, False, tail),
    )


def run_command(command: str, *, cwd: Path, timeout: float = DEFAULT_TIMEOUT_SECONDS,
                tail_chars: int = DEFAULT_TAIL_CHARS,
                env: Mapping[str, str] | None = None) -> CommandResult:
    """Run one verification command with `/bin/sh -c`, as a Makefile would, and wait for it.

    The command is the user's own (from `--verify` or the plan), so it is handed to the shell
    as written: quoting, pipes and `&&` work as in a terminal. It runs in `cwd` in a process
    group of its own. After `timeout` seconds that group is asked to end (SIGTERM), is killed
    (SIGKILL) after KILL_GRACE_SECONDS, and the result is marked timed out. When the shell
    exits, whatever it left running in the background in its group is asked to end too
    (after DRAIN_SECONDS if it still holds the output open), so no iteration leaves
    processes behind.
    """
    started = time.monotonic()
    deadline = started + timeout
    shell = processes.shell(command, env)
    try:
        process = processes.start(
            shell, cwd=cwd, env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
    except (OSError, ValueError) as error:
        return _not_started(command, shell[0] if isinstance(shell, list) else "cmd.exe", cwd,
                            error, started)
    assert process.stdout is not None
    # Room for tail_chars characters of up to 4 bytes, and one cut through a character.
    tail = _Tail(tail_chars * 4 + 4)
    reader = _Reader(process.stdout.fileno(), tail)
    timed_out = False
    try:
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            if exited_at is None and processes.exited(process):
                exited_at = now
            if exited_at is not None and (reader.ended or now - exited_at >= DRAIN_SECONDS):
                break
            if now >= deadline:
                timed_out = True
                break
            reader.read_for(min(deadline - now, _POLL_SECONDS))
        processes.end_gently(process)
        if timed_out or not reader.ended:
            grace_end = time.monotonic() + KILL_GRACE_SECONDS
            while (time.monotonic() < grace_end
                   and not (reader.ended and processes.exited(process))):
                reader.read_for(min(grace_end - time.monotonic(), _POLL_SECONDS))
            processes.end_forcibly(process)
        exit_code = process.wait()
    finally:
        reader.close()
        process.stdout.close()
        if process.returncode is None:  # an exception escaped: leave nothing running
            processes.end_forcibly(process)
            process.wait()
    output = tail.text(tail_chars)
    return CommandResult(
        command=command,
        exit_code=None if timed_out else exit_code,
        timed_out=timed_out,
        duration_seconds=time.monotonic() - started,
        output_tail=output,
        output_bytes=tail.total,
        fingerprint=fingerprint(None if timed_out else exit_code, timed_out, output,
                                window=min(FINGERPRINT_CHARS, tail_chars // 2)),
    )


def run_all(commands: Iterable[str], *, cwd: Path, timeout: float | None = None,
            settings: Mapping[str, str] | None = None,
            budget: float = BUDGET_SECONDS) -> list[CommandResult]:
    """Run every command in order, also after a failure, so the evidence is complete.

    Each command may take `timeout` seconds (default: FINESSE_VERIFY_TIMEOUT in `settings`,
    else COMMAND_TIMEOUT_SECONDS) and all of them `budget` seconds together: a hook must end
    well before Claude Code's own timeout for it.
    """
    per_command = timeout if timeout is not None else float(
        (settings or {}).get("FINESSE_VERIFY_TIMEOUT") or COMMAND_TIMEOUT_SECONDS)
    deadline = time.monotonic() + budget
    results = []
    for command in commands:
        remaining = max(1.0, min(per_command, deadline - time.monotonic()))
        results.append(run_command(command, cwd=cwd, timeout=remaining))
    return results
