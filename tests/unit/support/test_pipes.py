"""finesse.support.pipes, the door to waiting on a child's pipes: both ways of reading (the
selector POSIX uses, and the reader threads Windows needs, whose select() takes sockets only)
read a real child's two pipes to their ends, each chunk under its pipe's name, with an empty
one at each end; a read with nothing to give waits its time and gives nothing; the threads
keep memory bounded when the reader lags, and let go of the caller's descriptors. Which one a
platform gets is chosen by `os.name`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tracemalloc

import pytest

from finesse.support import pipes
from finesse.support.pipes import SelectorPipes, ThreadPipes, open_pipes

TALKER = (
    "import sys, time\n"
    "for i in range(5):\n"
    "    sys.stdout.write('out %d\\n' % i); sys.stdout.flush()\n"
    "    sys.stderr.write('err %d\\n' % i); sys.stderr.flush()\n"
    "    time.sleep(0.02)\n"
)


def test_each_platform_gets_its_way() -> None:
    assert type(open_pipes("nt")) is ThreadPipes
    assert type(open_pipes("posix")) is SelectorPipes


@pytest.mark.parametrize("os_name", ["posix", "nt"])
def test_both_pipes_are_read_to_their_ends(os_name: str) -> None:
    child = subprocess.Popen([sys.executable, "-c", TALKER], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    reading = open_pipes(os_name)
    reading.add(child.stdout.fileno(), "out")
    reading.add(child.stderr.fileno(), "err")
    got: dict[str, bytes] = {"out": b"", "err": b""}
    ends: list[str] = []
    deadline = time.monotonic() + 30
    while reading.open and time.monotonic() < deadline:
        for name, chunk in reading.read(0.1):
            got[name] += chunk
            if not chunk:
                ends.append(name)
    reading.close()
    child.wait()
    child.stdout.close()
    child.stderr.close()
    assert got == {"out": b"".join(b"out %d\n" % i for i in range(5)),
                   "err": b"".join(b"err %d\n" % i for i in range(5))}
    assert sorted(ends) == ["err", "out"]


@pytest.mark.parametrize("os_name", ["posix", "nt"])
def test_a_read_with_nothing_to_give_waits_its_time(os_name: str) -> None:
    read_end, write_end = os.pipe()
    reading = open_pipes(os_name)
    reading.add(read_end, "out")
    started = time.monotonic()
    assert reading.read(0.3) == []
    assert time.monotonic() - started >= 0.29
    os.write(write_end, b"late")
    assert reading.read(5) == [("out", b"late")]
    os.close(write_end)
    assert reading.read(5) == [("out", b"")]
    assert not reading.open
    reading.close()
    os.close(read_end)


def test_the_threads_keep_memory_bounded_when_the_reader_lags() -> None:
    size = 30 * 1024 * 1024
    child = subprocess.Popen([sys.executable, "-c", f"import sys; sys.stdout.buffer.write("
                              f"b'x' * {size})"], stdout=subprocess.PIPE)
    assert child.stdout is not None
    tracemalloc.start()
    try:
        reading = ThreadPipes()
        reading.add(child.stdout.fileno(), "out")
        time.sleep(0.5)  # the reader lags: the thread must wait, not pile chunks up
        total = 0
        while reading.open:
            total += sum(len(chunk) for _, chunk in reading.read(5))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    child.wait()
    child.stdout.close()
    assert total == size
    assert peak < (pipes.QUEUED_CHUNKS + 4) * pipes.CHUNK_BYTES


def test_the_threads_read_a_copy_of_the_callers_descriptor() -> None:
    read_end, write_end = os.pipe()
    reading = ThreadPipes()
    reading.add(read_end, "out")
    os.close(read_end)  # the caller lets go of its own at once: the thread still reads
    os.write(write_end, b"still here")
    assert reading.read(5) == [("out", b"still here")]
    os.close(write_end)
    assert reading.read(5) == [("out", b"")]
    reading.close()
