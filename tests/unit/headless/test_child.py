"""One iteration's `claude -p` as a process: its prompt on stdin, its stream read as it
comes, and its process group ended on a timeout, a cancel, or when its loop ends outside.
Every test runs twice (conftest: both_ways_of_reading_pipes): with the selector POSIX reads
pipes with, and with the reader threads Windows needs (finesse.support.pipes)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from finesse.headless import child
from finesse.headless.child import Cancel, Live, run_child
from tests.helpers import streams as s
from tests.helpers.streams import FakeClaude

# Each test with the selector POSIX reads pipes with, then the threads Windows needs.
pytestmark = pytest.mark.usefixtures("both_ways_of_reading_pipes")


def fake(tmp_path: Path, *entries: dict[str, object]) -> FakeClaude:
    return FakeClaude(tmp_path / "bin", list(entries))


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_prompt_goes_in_on_stdin_and_the_stream_is_read(tmp_path: Path) -> None:
    claude = fake(tmp_path, {"events": s.reply_events("Done.", tools=2)})
    seen: list[int] = []
    done = run_child([str(claude.path), "-p"], cwd=tmp_path, env=os.environ,
                     prompt="the prompt \u00e9" * 20_000, timeout=30, cancel=Cancel(),
                     started=seen.append)
    assert (done.exit_code, done.killed, done.stream.reply, done.stream.tool_calls) == (
        0, "", "Done.", 2)
    assert [call["prompt"] for call in claude.calls] == ["the prompt \u00e9" * 20_000]
    assert seen == [done.pid]


def test_a_child_over_its_time_is_ended_with_its_whole_group(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    claude = fake(tmp_path, {"events": [s.init()], "touch": str(marker), "sleep": 60})
    # A grandchild in the same group, left behind by the fake's shell.
    script = claude.path.read_text().replace(
        "time.sleep(entry", "import subprocess; subprocess.Popen(['sleep', '61']); "
        "time.sleep(entry")
    claude.path.write_text(script)
    began = time.monotonic()
    done = run_child([str(claude.path)], cwd=tmp_path, env=os.environ, prompt="x",
                     timeout=1.5, cancel=Cancel())
    assert done.killed == "timeout" and done.stream.session_id == "5e55"
    assert time.monotonic() - began < 10
    assert done.pid is not None and gone(done.pid)
    with pytest.raises(ProcessLookupError):
        os.killpg(done.pid, 0)


def test_a_cancel_ends_the_child_at_once(tmp_path: Path) -> None:
    claude = fake(tmp_path, {"sleep": 60})
    cancel = Cancel()
    threading.Timer(0.5, cancel.request, args=("SIGINT (Ctrl-C)", 2)).start()
    done = run_child([str(claude.path)], cwd=tmp_path, env=os.environ, prompt="x",
                     timeout=None, cancel=cancel)
    assert (done.killed, done.duration < 10, cancel.by, cancel.signal) == (
        "cancel", True, "SIGINT (Ctrl-C)", 2)


def test_a_loop_ended_outside_ends_its_child(tmp_path: Path) -> None:
    claude = fake(tmp_path, {"sleep": 60})
    flag = tmp_path / "ended"
    threading.Timer(0.3, flag.touch).start()
    done = run_child([str(claude.path)], cwd=tmp_path, env=os.environ, prompt="x",
                     timeout=None, cancel=Cancel(), stopped=flag.exists)
    assert done.killed == "stopped"


def test_a_child_that_cannot_start_says_why(tmp_path: Path) -> None:
    done = run_child([str(tmp_path / "no-such-claude")], cwd=tmp_path, env=os.environ,
                     prompt="x", timeout=None, cancel=Cancel())
    assert (done.exit_code, done.pid, done.stream.complete) == (None, None, False)
    assert done.stderr_tail == f"{tmp_path / 'no-such-claude'}: No such file or directory"


def test_a_last_line_without_its_newline_counts_and_an_overlong_one_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(child, "MAX_LINE_BYTES", 1000)
    huge = json.dumps(s.result("x" * 5000))
    claude = fake(tmp_path, {"events": [s.init(), huge], "stderr": "warn\n",
                             "raw": json.dumps(s.result("the end")), "exit": 3})
    done = run_child([str(claude.path)], cwd=tmp_path, env=os.environ, prompt="x",
                     timeout=30, cancel=Cancel())
    assert (done.exit_code, done.stream.reply, done.stream.skipped_lines,
            done.stderr_tail) == (3, "the end", 1, "warn\n")


def test_progress_is_reported_while_the_child_works(tmp_path: Path) -> None:
    claude = fake(tmp_path, {"events": [s.init(), *s.assistant("m", s.tool("t1"))],
                             "sleep": 1.5})
    lives: list[Live] = []
    run_child([str(claude.path)], cwd=tmp_path, env=os.environ, prompt="x", timeout=30,
              cancel=Cancel(), progress=lives.append)
    assert lives and lives[-1].tool_calls == 1 and lives[-1].tokens == 101


def test_a_cancel_wakes_a_waiter() -> None:
    cancel = Cancel()
    threading.Timer(0.2, cancel.request, args=("x",)).start()
    began = time.monotonic()
    assert cancel.wait(30) is True and time.monotonic() - began < 5
    cancel.request("y", 15)  # the first cancel's reason stays
    assert (cancel.by, cancel.signal) == ("x", None)


def test_a_child_that_exits_leaving_its_output_held_open_is_read_to_its_exit(
        tmp_path: Path) -> None:
    """A `claude` whose wrapper left something running that holds its stdout (a helper
    started in the background): the output never closes, so the iteration waited for the
    whole --iteration-timeout (for ever without one) although claude had exited. Once it has
    exited, a short grace, and the iteration ends with what it said."""
    claude = fake(tmp_path, {"events": s.reply_events("Done.")})
    script = claude.path.read_text().replace(
        "time.sleep(entry", "import subprocess; subprocess.Popen(['sleep', '300']); "
        "time.sleep(entry")
    claude.path.write_text(script)
    done = run_child([str(claude.path)], cwd=tmp_path, env=os.environ, prompt="x",
                     timeout=20, cancel=Cancel())
    assert (done.killed, done.exit_code, done.stream.reply) == ("", 0, "Done.")
