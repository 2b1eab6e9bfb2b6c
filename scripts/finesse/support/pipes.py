"""Reading a child's output pipes as the data comes, each read bounded by a deadline: the only
door to waiting on pipes. POSIX waits with `selectors`; Windows, whose select() takes sockets
only, reads each pipe in a thread of its own that hands every chunk to one queue. Either way
a read gives each chunk with the name its pipe was added under, and an empty chunk once a
pipe has ended; the platform is chosen by `os.name` when the pipes are opened.
"""

from __future__ import annotations

import os
import queue
import selectors
import threading

CHUNK_BYTES = 64 * 1024
QUEUED_CHUNKS = 8
POLL_SECONDS = 0.1
Chunk = tuple[str, bytes]


class SelectorPipes:
    """POSIX: one selector over every pipe; a read takes one chunk from each ready pipe."""

    def __init__(self) -> None:
        self.selector = selectors.DefaultSelector()

    def add(self, fd: int, name: str) -> None:
        self.selector.register(fd, selectors.EVENT_READ, name)

    @property
    def open(self) -> bool:
        """Whether a pipe has not ended yet."""
        return bool(self.selector.get_map())

    def read(self, timeout: float) -> list[Chunk]:
        """What arrives within `timeout` seconds ([] when nothing does)."""
        found: list[Chunk] = []
        for key, _ in self.selector.select(max(0.0, timeout)):
            chunk = os.read(key.fd, CHUNK_BYTES)
            if not chunk:
                self.selector.unregister(key.fileobj)
            found.append((key.data, chunk))
        return found

    def close(self) -> None:
        self.selector.close()


class ThreadPipes:
    """Windows: a daemon thread per pipe reads it to its end into one queue. The queue holds
    at most QUEUED_CHUNKS, so a pipe that outruns its reader waits (memory stays bounded as
    with a selector); once closed, the threads drop what they read and end with their pipes.
    Each thread reads a duplicate of its pipe's descriptor and closes it at the end: the
    caller may close its own at any time without the number being reused under a reader."""

    def __init__(self) -> None:
        self.chunks: queue.Queue[Chunk] = queue.Queue(maxsize=QUEUED_CHUNKS)
        self.running = 0
        self.closed = threading.Event()

    def add(self, fd: int, name: str) -> None:
        self.running += 1
        threading.Thread(target=self._pump, args=(os.dup(fd), name), daemon=True).start()

    def _pump(self, fd: int, name: str) -> None:
        try:
            while True:
                try:
                    chunk = os.read(fd, CHUNK_BYTES)
                except OSError:  # a broken pipe: it has ended for its reader
                    chunk = b""
                while not self.closed.is_set():
                    try:
                        self.chunks.put((name, chunk), timeout=POLL_SECONDS)
                        break
                    except queue.Full:
                        continue
                if not chunk:
                    return
        finally:
            os.close(fd)

    @property
    def open(self) -> bool:
        return self.running > 0

    def read(self, timeout: float) -> list[Chunk]:
        try:
            found = [self.chunks.get(timeout=max(0.0, timeout))]
        except queue.Empty:
            return []
        while True:
            try:
                found.append(self.chunks.get_nowait())
            except queue.Empty:
                break
        self.running -= sum(1 for _, chunk in found if not chunk)
        return found

    def close(self) -> None:
        self.closed.set()


Pipes = SelectorPipes | ThreadPipes


def open_pipes(os_name: str | None = None) -> Pipes:
    """Pipes to read on the platform named like `os.name` (default: this one)."""
    return ThreadPipes() if (os.name if os_name is None else os_name) == "nt" else SelectorPipes()
