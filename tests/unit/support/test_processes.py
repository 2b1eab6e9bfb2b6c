"""finesse.support.processes, the one door to process groups: the branch `os.name` picks; on
Windows (stand-ins for Popen, os.kill and taskkill record the calls) a new process group,
CTRL_BREAK_EVENT to it, then `taskkill /F /T` and TerminateProcess, the cancel signals with
Ctrl-Break, and the shell verification commands run in; on POSIX, for real, a session of its
own, the whole group ended gently then forcibly, and an exit seen without reaping."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from finesse.support import processes, survivors
from finesse.support.processes import PosixGroups, WindowsGroups

SCRIPTS = Path(__file__).resolve().parents[3] / "scripts"

CREATE_NEW_PROCESS_GROUP, CTRL_BREAK_EVENT, SIGBREAK = 0x200, 1, 21  # Windows' values


class StandInChild:
    """A started child as the door sees it; `exit_after` polls of it later it has exited."""

    def __init__(self, calls: list[tuple[Any, ...]], exit_after: int | None = None) -> None:
        self.pid = 4242
        self.calls = calls
        self.exit_after = exit_after

    def poll(self) -> int | None:
        if self.exit_after is None:
            return None
        self.exit_after -= 1
        return 0 if self.exit_after < 0 else None

    def kill(self) -> None:
        self.calls.append(("TerminateProcess", self.pid))
        self.exit_after = 0


def windows(calls: list[tuple[Any, ...]], fail: bool = False) -> WindowsGroups:
    def send(pid: int, event: int) -> None:
        calls.append(("os.kill", pid, event))
        if fail:
            raise OSError(6, "The handle is invalid")

    def run(argv: list[str], **options: Any) -> None:
        calls.append(("run", argv, options))
        if fail:
            raise subprocess.TimeoutExpired(argv, 10)

    return WindowsGroups(send=send, run=run)


def eventually_gone(child: processes.Child, seconds: float = 10) -> bool:
    """Whether the child's group is gone within `seconds` (a killed orphan stays a zombie,
    still in its group, until the system's reaper gets to it)."""
    deadline = time.monotonic() + seconds
    while processes.group_alive(child):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_branch_follows_os_name() -> None:
    assert type(processes.groups_for("nt")) is WindowsGroups
    assert type(processes.groups_for("posix")) is PosixGroups
    assert type(processes.platform_groups()) is PosixGroups  # the machine the tests run on


def test_windows_starts_the_child_in_a_new_process_group(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[Any, ...]] = []

    class StandInPopen:
        def __init__(self, args: Any, **options: Any) -> None:
            started.append((args, options))

    monkeypatch.setattr(processes, "_chosen", windows([]))
    monkeypatch.setattr(subprocess, "Popen", StandInPopen)
    processes.start(("claude", "-p"), stdin=subprocess.PIPE, cwd="C:\\project")
    assert started == [(["claude", "-p"], {"stdin": subprocess.PIPE, "cwd": "C:\\project",
                                           "creationflags": CREATE_NEW_PROCESS_GROUP})]


def test_windows_ends_gently_with_ctrl_break_then_taskkill_and_terminate() -> None:
    calls: list[tuple[Any, ...]] = []
    door = windows(calls)
    child = StandInChild(calls)
    door.end_gently(child)
    door.end_forcibly(child)
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
             "stderr": subprocess.DEVNULL, "timeout": processes.TASKKILL_TIMEOUT_SECONDS}
    assert calls == [("os.kill", 4242, CTRL_BREAK_EVENT),
                     ("run", ["taskkill", "/F", "/T", "/PID", "4242"], quiet),
                     ("TerminateProcess", 4242)]


def test_windows_does_not_taskkill_a_child_that_has_exited_and_never_raises() -> None:
    calls: list[tuple[Any, ...]] = []
    windows(calls).end_forcibly(StandInChild(calls, exit_after=0))
    assert calls == [("TerminateProcess", 4242)]
    failing: list[tuple[Any, ...]] = []
    door = windows(failing, fail=True)
    door.end_gently(StandInChild(failing))
    door.end_forcibly(StandInChild(failing))
    assert [call[0] for call in failing] == ["os.kill", "run", "TerminateProcess"]


def test_windows_end_group_waits_the_grace_then_forces(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(processes, "_chosen", windows(calls))
    child = StandInChild(calls)  # ignores Ctrl-Break: runs until terminated
    started = time.monotonic()
    processes.end_group(child, grace=0.3)
    assert time.monotonic() - started >= 0.3
    assert [call[0] for call in calls] == ["os.kill", "run", "TerminateProcess"]
    assert not processes.group_alive(child) and processes.exited(child)


def test_windows_cancel_signals_include_ctrl_break() -> None:
    assert WindowsGroups().cancel_signals() == {
        signal.SIGINT: "SIGINT (Ctrl-C)", SIGBREAK: "SIGBREAK (Ctrl-Break)",
        signal.SIGTERM: "SIGTERM"}
    assert PosixGroups().cancel_signals() == {signal.SIGINT: "SIGINT (Ctrl-C)",
                                              signal.SIGTERM: "SIGTERM"}


def test_windows_runs_commands_in_git_bash_when_there_is_one(tmp_path: Path) -> None:
    git = tmp_path / "Git" / "cmd" / "git.exe"
    bash = tmp_path / "Git" / "bin" / "bash.exe"
    for path in (git, bash):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"MZ")
    door = WindowsGroups()
    assert door.shell("pytest -q", {"PATH": str(git.parent)}) == [str(bash), "-c", "pytest -q"]
    chosen = tmp_path / "chosen-bash.exe"
    chosen.write_bytes(b"MZ")
    assert door.shell("make", {"PATH": str(git.parent),
                               "CLAUDE_CODE_GIT_BASH_PATH": str(chosen)}) == [
        str(chosen), "-c", "make"]
    assert door.shell("make test", {"PATH": str(tmp_path / "nothing"),
                                    "COMSPEC": "C:\\Windows\\system32\\cmd.exe"}) == (
        '"C:\\Windows\\system32\\cmd.exe" /d /s /c "make test"')


def test_posix_the_child_leads_its_own_group_and_ends_with_all_of_it(tmp_path: Path) -> None:
    child = processes.start(["/bin/sh", "-c", "sleep 60 & echo $!; wait"],
                            stdout=subprocess.PIPE)
    assert child.stdout is not None
    background = int(child.stdout.readline())
    assert os.getpgid(child.pid) == child.pid != os.getpgid(0)
    assert os.getpgid(background) == child.pid
    processes.end_group(child, grace=5)
    assert child.poll() == -signal.SIGTERM
    assert eventually_gone(child)
    child.stdout.close()


def test_posix_a_group_deaf_to_sigterm_is_killed_after_the_grace() -> None:
    child = processes.start(["/bin/sh", "-c", "trap '' TERM; echo ready; sleep 60 & wait"],
                            stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    started = time.monotonic()
    processes.end_group(child, grace=0.3)
    assert time.monotonic() - started >= 0.3
    assert child.poll() == -signal.SIGKILL
    assert eventually_gone(child)
    child.stdout.close()


def test_posix_an_exit_is_seen_without_reaping_the_child() -> None:
    # The pid, the group's id, stays reserved until the child is waited for.
    child = processes.start(["/bin/sh", "-c", "exit 3"])
    deadline = time.monotonic() + 10
    while not processes.exited(child) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert processes.exited(child) and child.returncode is None
    assert processes.group_alive(child)  # a zombie, not reaped: its group id is still taken
    assert child.wait() == 3


def test_the_shell_posix_runs_commands_in() -> None:
    assert processes.shell("pytest -q && ruff check") == ["/bin/sh", "-c",
                                                          "pytest -q && ruff check"]


@pytest.mark.skipif(os.name == "nt", reason="POSIX identities")
def test_a_recorded_process_is_ended_only_while_it_is_that_process(tmp_path: Path) -> None:
    child = processes.start([sys.executable, "-c", "import time; time.sleep(60)"],
                            env={**os.environ, "MARK": "ours"})
    try:
        identity = survivors.process_identity(child.pid)
        assert identity is not None and identity == survivors.process_identity(child.pid)
        # Another start time, or (where it can be read) another environment: not ours.
        assert survivors.end_recorded(child.pid, identity + "0", 1.0) == "other"
        if sys.platform.startswith("linux"):
            assert survivors.end_recorded(child.pid, identity, 1.0, marker="MARK=theirs") \
                == "other"
        assert child.poll() is None
        # A generous grace: it returns as soon as the process is gone.
        assert survivors.end_recorded(child.pid, identity, 30.0, marker="MARK=ours") == "ended"
        assert child.wait(timeout=10) == -15
        assert survivors.end_recorded(child.pid, identity, 1.0) == "gone"
        assert survivors.process_identity(child.pid) is None
    finally:
        child.kill()
        child.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's parent-death signal")
def test_a_child_started_to_die_with_its_parent_does() -> None:
    # The parent is a Python that starts the child through the door, prints its pid, and is
    # then killed outright: the child gets SIGTERM from the kernel.
    script = ("import sys, time; sys.path.insert(0, sys.argv[1]); "
              "from finesse.support import processes; "
              "c = processes.start([sys.executable, '-c', 'import time; time.sleep(60)'], "
              "die_with_parent=True); print(c.pid, flush=True); time.sleep(60)")
    parent = subprocess.Popen([sys.executable, "-c", script, str(SCRIPTS)],
                              stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    identity = survivors.process_identity(pid)
    assert identity is not None
    parent.kill()
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 30
    while survivors.process_identity(pid) == identity and time.monotonic() < deadline:
        time.sleep(0.05)
    assert survivors.process_identity(pid) != identity


@pytest.mark.skipif(os.name == "nt", reason="POSIX ps")
def test_the_identity_ps_gives_is_stable_and_ends_with_the_process() -> None:
    # The identity macOS and the BSDs get (Linux reads /proc), here from Linux's own ps.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        first = survivors._ps_identity(child.pid)
        assert first is not None and first.startswith("ps:")
        assert survivors._ps_identity(child.pid) == first
    finally:
        child.kill()
        child.wait()
    assert survivors._ps_identity(child.pid) is None


class StandInKernel32:
    """The four kernel32 calls `survivors._windows_identity` makes, over a table of pid ->
    (creation time, running); the byref'd values are filled as the real calls fill them."""

    def __init__(self, processes: dict[int, tuple[int, bool]], times_fail: bool = False) -> None:
        self.processes = processes
        self.times_fail = times_fail
        self.open: list[int] = []
        self.calls: list[tuple[Any, ...]] = []

    def OpenProcess(self, access: int, inherit: bool, pid: int) -> int:
        self.calls.append(("OpenProcess", access, inherit, pid))
        if pid not in self.processes:
            return 0
        self.open.append(pid)
        return 1000 + pid

    def WaitForSingleObject(self, handle: int, milliseconds: int) -> int:
        self.calls.append(("WaitForSingleObject", handle, milliseconds))
        return survivors.WAIT_TIMEOUT if self.processes[handle - 1000][1] else 0

    def GetProcessTimes(self, handle: int, *refs: Any) -> int:
        self.calls.append(("GetProcessTimes", handle))
        if self.times_fail:
            return 0
        refs[0]._obj.value = self.processes[handle - 1000][0]
        return 1

    def CloseHandle(self, handle: int) -> int:
        self.open.remove(handle - 1000)
        return 1


def test_windows_identity_is_the_creation_time_of_a_running_process() -> None:
    kernel = StandInKernel32({42: (133_000_000_000_000_000, True), 43: (7, False)})
    assert survivors._windows_identity(42, kernel) == "windows:133000000000000000"
    assert kernel.calls[0] == ("OpenProcess", survivors.PROCESS_QUERY_LIMITED_INFORMATION
                               | survivors.SYNCHRONIZE, False, 42)
    assert ("WaitForSingleObject", 1042, 0) in kernel.calls  # asked without waiting
    # Exited (its handle signalled, the pid still held by some handle), or no such process.
    assert survivors._windows_identity(43, kernel) is None
    assert survivors._windows_identity(44, kernel) is None
    assert kernel.open == []  # every handle opened was closed
    # The same pid given to a later process has another creation time: another identity.
    later = StandInKernel32({42: (133_000_000_000_000_999, True)})
    assert survivors._windows_identity(42, later) != survivors._windows_identity(42, kernel)


def test_windows_identity_is_none_when_the_times_cannot_be_read() -> None:
    kernel = StandInKernel32({42: (5, True)}, times_fail=True)
    assert survivors._windows_identity(42, kernel) is None
    assert kernel.open == []


def test_windows_ends_a_recorded_leader_with_ctrl_break_then_taskkill() -> None:
    calls: list[tuple[Any, ...]] = []
    door = windows(calls)
    door.signal_leader(4242, forcibly=False)
    door.signal_leader(4242, forcibly=True)
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
             "stderr": subprocess.DEVNULL, "timeout": processes.TASKKILL_TIMEOUT_SECONDS}
    assert calls == [("os.kill", 4242, CTRL_BREAK_EVENT),
                     ("run", ["taskkill", "/F", "/T", "/PID", "4242"], quiet)]
    failing: list[tuple[Any, ...]] = []
    door = windows(failing, fail=True)  # neither raises
    door.signal_leader(4242, forcibly=False)
    door.signal_leader(4242, forcibly=True)
    assert [call[0] for call in failing] == ["os.kill", "run"]


def test_windows_ends_a_recorded_agent_only_while_it_is_that_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # end_recorded's choices with Windows' identity and door: the creation time decides.
    kernel = StandInKernel32({42: (900, True)})
    calls: list[tuple[Any, ...]] = []

    def send(pid: int, signum: int) -> None:
        calls.append(("os.kill", pid, signum))  # ignores Ctrl-Break

    def run(args: list[str], **options: Any) -> None:
        calls.append(("run", args))
        kernel.processes[42] = (900, False)  # taskkill ends it

    monkeypatch.setattr(survivors, "process_identity",
                        lambda pid: survivors._windows_identity(pid, kernel))
    monkeypatch.setattr(processes, "_chosen", WindowsGroups(send=send, run=run))
    assert survivors.end_recorded(42, "windows:901", 0.1) == "other"
    assert calls == []
    assert survivors.end_recorded(42, "windows:900", 0.1) == "ended"
    assert calls == [("os.kill", 42, CTRL_BREAK_EVENT),
                     ("run", ["taskkill", "/F", "/T", "/PID", "42"])]
    assert survivors.end_recorded(42, "windows:900", 0.1) == "gone"
