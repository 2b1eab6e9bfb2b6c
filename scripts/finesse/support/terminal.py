"""The terminal, behind one door per platform: the bell a notification rings when there is no
desktop notifier, and single keys for `ralph watch` (q quits). POSIX: /dev/tty, termios
cbreak mode and select; Windows: the console (msvcrt). Nothing here blocks for longer than
asked, nothing raises for a missing terminal."""

from __future__ import annotations

import contextlib
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

TTY = "/dev/tty"


def bell() -> str:
    """Ring the terminal's bell; "" when it rang, else why not (one line)."""
    if sys.platform == "win32":
        try:
            import msvcrt

            msvcrt.putwch("\a")
        except (ImportError, OSError) as err:
            return f"the terminal bell failed ({err})"
        return ""
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(TTY, flags)
    except OSError:
        return "no desktop notifier and no terminal for the bell"
    try:
        os.write(descriptor, b"\a")
    except OSError as err:
        return f"the terminal bell failed ({err.strerror})"
    finally:
        os.close(descriptor)
    return ""


class Keys:
    """Keys typed at the terminal, one at a time (`None` descriptor: no terminal)."""

    def __init__(self, descriptor: int | None) -> None:
        self.descriptor = descriptor

    def typed(self, seconds: float) -> str:
        """Wait up to `seconds` for keys; what was typed ("" for nothing)."""
        if self.descriptor is None:
            time.sleep(seconds)
            return ""
        if sys.platform == "win32":
            import msvcrt

            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                if msvcrt.kbhit():
                    return msvcrt.getwch()
                time.sleep(0.05)
            return ""
        import select

        ready, _, _ = select.select([self.descriptor], [], [], seconds)
        if not ready:
            return ""
        return os.read(self.descriptor, 32).decode("utf-8", errors="replace")


@contextlib.contextmanager
def keys() -> Iterator[Keys]:
    """stdin read a key at a time (Ctrl-C still interrupts), put back as it was on the way
    out; a Keys without a descriptor when stdin is not a terminal."""
    if not sys.stdin.isatty():
        yield Keys(None)
        return
    descriptor = sys.stdin.fileno()
    if sys.platform == "win32":  # the console gives keys one at a time already
        yield Keys(descriptor)
        return
    import termios
    import tty

    saved = termios.tcgetattr(descriptor)
    try:
        tty.setcbreak(descriptor)
        yield Keys(descriptor)
    finally:
        termios.tcsetattr(descriptor, termios.TCSADRAIN, saved)
