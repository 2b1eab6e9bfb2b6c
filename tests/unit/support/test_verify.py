"""Verification commands: exit codes, timeouts that end the whole group, bounded output.
Every test runs twice (conftest: both_ways_of_reading_pipes): with the selector POSIX reads
pipes with, and with the reader threads Windows needs (finesse.support.pipes)."""

from __future__ import annotations

import os
import subprocess
import time
import tracemalloc
from pathlib import Path

import pytest

from finesse.results import CommandResult
from finesse.support import verify
from finesse.support.verify import (
    fingerprint,
    normalise_output,
    run_all,
    run_command,
)

# Each test with the selector POSIX reads pipes with, then the threads Windows needs.
pytestmark = pytest.mark.usefixtures("both_ways_of_reading_pipes")


def alive(pid: int) -> bool:
    """Whether pid is a process that has not exited (a zombie waiting to be reaped has)."""
    found = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True,
                           text=True, check=False)
    state = found.stdout.strip()
    return bool(state) and not state.startswith("Z")


def group_members(group: int) -> list[int]:
    """Live processes whose process group is `group`."""
    listing = subprocess.run(["ps", "-A", "-o", "pid=,pgid=,stat="], capture_output=True,
                             text=True, check=True).stdout
    members = []
    for row in listing.splitlines():
        pid, pgid, state = row.split(None, 2)
        if int(pgid) == group and not state.startswith("Z"):
            members.append(int(pid))
    return members


def eventually_gone(pids: list[int], seconds: float = 5.0) -> list[int]:
    """The pids still alive after waiting up to `seconds` for them to be reaped."""
    end = time.monotonic() + seconds
    while True:
        left = [pid for pid in pids if alive(pid)]
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


# --- run_command ------------------------------------------------------------------------------


def test_passing_command(tmp_path: Path) -> None:
    done = run_command("echo hello", cwd=tmp_path, timeout=10)
    assert (done.command, done.exit_code, done.timed_out, done.output_tail, done.output_bytes,
            done.passed) == ("echo hello", 0, False, "hello\n", 6, True)
    assert done.fingerprint == fingerprint(0, False, "hello\n", window=2000)
    assert 0 <= done.duration_seconds < 5


@pytest.mark.parametrize(("command", "exit_code"), [
    ("exit 1", 1), ("exit 2", 2), ("false", 1), ("exit 255", 255),
    ("no-such-command-finesse-test", 127), ("kill -9 $$", -9),
])
def test_exit_codes(tmp_path: Path, command: str, exit_code: int) -> None:
    done = run_command(command, cwd=tmp_path, timeout=10)
    assert (done.exit_code, done.timed_out, done.passed) == (exit_code, False, False)


def test_stdout_and_stderr_are_combined_in_order(tmp_path: Path) -> None:
    done = run_command("echo one; echo two >&2; echo three", cwd=tmp_path, timeout=10)
    assert done.output_tail == "one\ntwo\nthree\n"


def test_shell_syntax_works_as_in_a_makefile(tmp_path: Path) -> None:
    done = run_command("printf '%s\\n' \"a b\" | tr a-z A-Z && test -d .", cwd=tmp_path,
                       timeout=10)
    assert (done.exit_code, done.output_tail) == (0, "A B\n")


def test_cwd_is_respected(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("here\n")
    done = run_command("pwd -P; cat marker.txt; touch made.txt", cwd=tmp_path, timeout=10)
    assert done.output_tail == f"{tmp_path.resolve()}\nhere\n"
    assert (tmp_path / "made.txt").exists()


def test_env_replaces_the_environment(tmp_path: Path) -> None:
    done = run_command('echo "$FINESSE_X|${HOME-unset}"', cwd=tmp_path, timeout=10,
                       env={"FINESSE_X": "given", "PATH": os.environ["PATH"]})
    assert done.output_tail == "given|unset\n"


def test_stdin_is_empty(tmp_path: Path) -> None:
    done = run_command("cat; echo end", cwd=tmp_path, timeout=10)
    assert (done.exit_code, done.output_tail, done.timed_out) == (0, "end\n", False)


def test_missing_cwd_cannot_start(tmp_path: Path) -> None:
    missing = tmp_path / "gone"
    done = run_command("true", cwd=missing, timeout=10)
    tail = f"could not start /bin/sh in {missing}: that directory does not exist"
    assert done == CommandResult("true", None, False, done.duration_seconds, tail, 0,
                                 fingerprint(None, False, tail))
    assert not done.passed


def test_cwd_that_is_a_file_cannot_start(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    done = run_command("true", cwd=a_file, timeout=10)
    assert (done.exit_code, done.output_tail) == (
        None, f"could not start /bin/sh in {a_file}: that is not a directory")


def test_nul_in_command_cannot_start(tmp_path: Path) -> None:
    done = run_command("echo \0", cwd=tmp_path, timeout=10)
    assert (done.exit_code, done.timed_out, done.output_tail) == (
        None, False, f"could not start /bin/sh in {tmp_path}: the command contains a NUL character")


def test_timeout_kills_the_child_and_its_grandchildren(tmp_path: Path) -> None:
    command = ("echo $$ > group.pid; sh -c 'echo $$ > inner.pid; sleep 60 & echo $! > bg.pid; "
               "sleep 60' & echo started; wait")
    started = time.monotonic()
    done = run_command(command, cwd=tmp_path, timeout=0.5)
    elapsed = time.monotonic() - started
    assert (done.exit_code, done.timed_out, done.passed, done.output_tail) == (
        None, True, False, "started\n")
    assert 0.5 <= done.duration_seconds <= elapsed < 0.5 + verify.KILL_GRACE_SECONDS
    group = int((tmp_path / "group.pid").read_text())
    pids = [group, *(int((tmp_path / name).read_text()) for name in ("inner.pid", "bg.pid"))]
    assert eventually_gone(pids) == []
    assert group_members(group) == []


def test_timeout_escalates_to_sigkill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verify, "KILL_GRACE_SECONDS", 0.3)
    started = time.monotonic()
    done = run_command("trap '' TERM; echo $$ > group.pid; sleep 60", cwd=tmp_path, timeout=0.3)
    assert time.monotonic() - started < 2
    assert (done.exit_code, done.timed_out) == (None, True)
    group = int((tmp_path / "group.pid").read_text())
    assert eventually_gone(group_members(group)) == []


def test_timeout_does_not_touch_other_processes(tmp_path: Path) -> None:
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        done = run_command("sleep 60", cwd=tmp_path, timeout=0.2)
        assert done.timed_out
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_background_leftovers_are_ended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verify, "DRAIN_SECONDS", 0.2)
    started = time.monotonic()
    done = run_command("sleep 60 & echo $! > bg.pid; echo ok", cwd=tmp_path, timeout=10)
    assert time.monotonic() - started < 3
    assert (done.exit_code, done.timed_out, done.output_tail) == (0, False, "ok\n")
    assert eventually_gone([int((tmp_path / "bg.pid").read_text())]) == []


def test_quiet_background_leftovers_are_ended(tmp_path: Path) -> None:
    done = run_command("sleep 60 >/dev/null 2>&1 & echo $! > bg.pid", cwd=tmp_path, timeout=10)
    assert (done.exit_code, done.timed_out) == (0, False)
    assert done.duration_seconds < 3
    assert eventually_gone([int((tmp_path / "bg.pid").read_text())]) == []


def test_closed_output_still_waits_for_the_command(tmp_path: Path) -> None:
    done = run_command("exec >&- 2>&-; sleep 0.3; touch finished", cwd=tmp_path, timeout=10)
    assert (done.exit_code, done.output_bytes) == (0, 0)
    assert (tmp_path / "finished").exists()


def test_output_is_bounded_in_memory(tmp_path: Path) -> None:
    size = 50 * 1024 * 1024
    command = f"yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c {size}; echo; echo THE END"
    tracemalloc.start()
    try:
        done = run_command(command, cwd=tmp_path, timeout=60, tail_chars=1000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024
    assert (done.exit_code, done.output_bytes) == (0, size + len("\nTHE END\n"))
    assert len(done.output_tail) == 1000
    assert done.output_tail.endswith("\nTHE END\n")
    assert set(done.output_tail[:-9].split("\n")[1:-1]) == {"0123456789abcdefghijklmnopqrstuvwxyz"}


def test_tail_never_splits_a_character(tmp_path: Path) -> None:
    done = run_command("i=0; while [ $i -lt 500 ]; do printf 'é€😀'; i=$((i+1)); done",
                       cwd=tmp_path, timeout=10, tail_chars=100)
    assert done.output_bytes == 500 * (2 + 3 + 4)
    assert done.output_tail == ("é€😀" * 34)[-100:]


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    done = run_command("printf 'a\\377b\\n'", cwd=tmp_path, timeout=10)
    assert (done.output_tail, done.output_bytes) == ("a\ufffdb\n", 4)


def test_run_all_runs_every_command_in_order(tmp_path: Path) -> None:
    results = run_all(["echo 1 >> log", "exit 3", "echo 2 >> log; echo two"], cwd=tmp_path,
                      timeout=10)
    assert [(r.command, r.exit_code, r.output_tail) for r in results] == [
        ("echo 1 >> log", 0, ""), ("exit 3", 3, ""), ("echo 2 >> log; echo two", 0, "two\n")]
    assert (tmp_path / "log").read_text() == "1\n2\n"


def test_verification_runs_in_the_project_root_within_its_timeout(git_repo: Path) -> None:
    results = run_all(["pwd", "sleep 5"], cwd=git_repo, settings={"FINESSE_VERIFY_TIMEOUT": "0.3"})
    assert [(r.command, r.exit_code, r.timed_out) for r in results] == [
        ("pwd", 0, False), ("sleep 5", None, True)
    ]
    assert results[0].output_tail == f"{git_repo}\n"
    assert results[1].duration_seconds < 4


# --- fingerprint ------------------------------------------------------------------------------


def test_normalise_output() -> None:
    raw = ("\x1b[31mFAILED\x1b[0m test_x.py::test_a - at 0x7f3a2b1c \n"
           "==== 1 failed, 12 passed in 0.53s ====\r\n"
           "commit 3f9a2c1d8e7b; pid 4242; /tmp/pytest-of-u/pytest-17/t0\n\n\n")
    assert normalise_output(raw) == (
        "FAILED test_x.py::test_a - at #\n"
        "=== # failed, # passed in #.#s ===\n"
        "commit #; pid #; /tmp/pytest-of-u/pytest-#/t#"
    )


def pytest_like(test: str, seconds: str, pid: int) -> str:
    summary = f" 1 failed, 3 passed in {seconds}s "
    return (f"tests/test_x.py F...\n"
            f"E   AssertionError: worker {pid} at 0x{pid * 7919:x} said no\n"
            f"{summary.center(60, '=')}\n"
            f"FAILED tests/test_x.py::{test} - AssertionError\n")


def test_fingerprint_ignores_timings_and_numbers() -> None:
    first = fingerprint(1, False, pytest_like("test_a", "0.12", 1234))
    assert first == fingerprint(1, False, pytest_like("test_a", "103.5", 98765) + "  \n\n")
    assert len(first) == 16 and int(first, 16) >= 0


def test_fingerprint_tells_failures_apart() -> None:
    prints = {
        fingerprint(1, False, pytest_like("test_a", "0.1", 1)),
        fingerprint(1, False, pytest_like("test_b", "0.1", 1)),
        fingerprint(2, False, pytest_like("test_a", "0.1", 1)),
        fingerprint(None, True, pytest_like("test_a", "0.1", 1)),
        fingerprint(None, False, pytest_like("test_a", "0.1", 1)),
    }
    assert len(prints) == 5


def test_same_failure_twice_gives_the_same_fingerprint(tmp_path: Path) -> None:
    # The tail is cut from 300 lines whose numbers change length from run to run.
    script = tmp_path / "noisy.sh"
    script.write_text('i=0; while [ $i -lt 300 ]; do echo "step $i took $(($i * $1)) ms"; '
                      'i=$((i+1)); done; echo "FAILED $2 in $1.0s"; exit 1\n')
    runs = [run_command(f"sh noisy.sh {factor} test_a", cwd=tmp_path, timeout=10)
            for factor in (1, 7, 12345)]
    assert len({r.output_tail for r in runs}) == 3
    assert len({r.output_bytes for r in runs}) == 3
    assert len({r.fingerprint for r in runs}) == 1
    other = run_command("sh noisy.sh 1 test_b", cwd=tmp_path, timeout=10)
    assert other.fingerprint != runs[0].fingerprint


def test_timeout_fingerprint_is_stable(tmp_path: Path) -> None:
    runs = [run_command(f"echo waiting {n}; sleep 60", cwd=tmp_path, timeout=0.5)
            for n in (1, 22)]
    assert runs[0].fingerprint == runs[1].fingerprint == fingerprint(None, True, "waiting 1\n")
