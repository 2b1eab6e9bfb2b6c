"""Children of an earlier process, found again: a child is recorded by its pid and its
identity (what tells it from any later process given the same pid), and ended later only
while it is still that process. This is how a driver of a headless loop ends the agent its
predecessor, killed outright, left running (`finesse.headless.agents`).

Linux: the identity is the boot's id and the process's start time from /proc, and its
environment (/proc/PID/environ, readable for the same user) must hold the marker the caller
names. Other POSIX systems: the start time as `ps -o lstart=` gives it (to the second).
Windows: the creation time GetProcessTimes gives (100 ns ticks since 1601), read through a
handle opened on the pid, which also says whether the process still runs; the environment of
another process cannot be read there, so the creation time alone is the proof. On Linux the
parent-death signal (`finesse.support.processes.start`) is what takes the child along in the
first place.
"""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

from finesse.support import processes

POLL_SECONDS = 0.05
KILLED_WAIT_SECONDS = 5.0  # for a SIGKILLed process to be gone, on a loaded machine


def _proc_identity(pid: int) -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as boot_file:
            boot = boot_file.read().strip()
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat_file:
            stat = stat_file.read()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):  # a zombie has ended
        return None
    return f"linux:{boot}:{fields[19]}"  # the start time, in clock ticks since boot


def _ps_identity(pid: int) -> str | None:
    try:
        done = subprocess.run(["ps", "-o", "lstart=", "-o", "stat=", "-p", str(pid)],
                              capture_output=True, text=True, timeout=10,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    words = done.stdout.split()
    if done.returncode != 0 or len(words) < 2 or words[-1].startswith("Z"):
        return None
    return "ps:" + " ".join(words[:-1])


# The Windows API's values (winnt.h, winbase.h).
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
SYNCHRONIZE = 0x00100000
WAIT_TIMEOUT = 0x102


def _kernel32() -> Any:
    """kernel32 with the types of the four calls made, or None where ctypes cannot load it."""
    try:
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    except (ImportError, AttributeError, OSError):
        return None
    kernel32.OpenProcess.restype = wintypes.HANDLE
    kernel32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
    kernel32.WaitForSingleObject.restype = wintypes.DWORD
    kernel32.WaitForSingleObject.argtypes = (wintypes.HANDLE, wintypes.DWORD)
    kernel32.GetProcessTimes.restype = wintypes.BOOL
    kernel32.GetProcessTimes.argtypes = (wintypes.HANDLE,) + (ctypes.c_void_p,) * 4
    kernel32.CloseHandle.argtypes = (wintypes.HANDLE,)
    return kernel32


def _windows_identity(pid: int, kernel32: Any = None) -> str | None:
    """The creation time of the running process `pid` (Windows), None when no process of
    ours has that pid or it has exited (its handle signalled). `kernel32` is a stand-in in
    tests; its calls fill the byref'd values as the real ones do."""
    import ctypes

    kernel32 = kernel32 if kernel32 is not None else _kernel32()
    if kernel32 is None:
        return None
    handle = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, False, pid)
    if not handle:  # no such process, or not one this user may ask about: not our agent
        return None
    try:
        if kernel32.WaitForSingleObject(handle, 0) != WAIT_TIMEOUT:
            return None  # signalled: it has exited (the pid lives on while a handle is open)
        created, exited, in_kernel, in_user = (ctypes.c_ulonglong() for _ in range(4))
        if not kernel32.GetProcessTimes(handle, ctypes.byref(created), ctypes.byref(exited),
                                        ctypes.byref(in_kernel), ctypes.byref(in_user)):
            return None
        return f"windows:{created.value}"
    finally:
        kernel32.CloseHandle(handle)


def process_identity(pid: int) -> str | None:
    """What tells the running process `pid` from any later process given the same pid: on
    Linux the boot's id and the process's start time (/proc), elsewhere on POSIX its start
    time as `ps` gives it, on Windows its creation time. None when no such process runs, or
    the platform cannot say."""
    if pid <= 0:
        return None
    if os.name == "nt":
        return _windows_identity(pid)
    if os.path.isdir("/proc/self"):
        return _proc_identity(pid)
    return _ps_identity(pid)


def _environment_holds(pid: int, marker: str) -> bool:
    """Whether the process's environment holds `marker` ("NAME=value"), where it can be
    read (Linux, the same user); True where it cannot, the start time then being the proof."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return marker.encode() in environ.read().split(b"\0")
    except OSError:
        return True


def end_recorded(pid: int, identity: str, grace: float, marker: str = "") -> str:
    """End the process recorded as `pid` with `identity` (and its group, which it leads),
    if and only if it is still that process and, where its environment can be read, that
    holds `marker`: gently, then forcibly after `grace` seconds. Returns "ended", "gone"
    (it had ended), "other" (the pid is another process's now: left alone), "unknown"
    (the platform cannot say: left alone) or "stuck" (it outlived SIGKILL)."""
    if os.name == "nt" and _kernel32() is None:
        return "unknown"
    now = process_identity(pid)
    if now is None:
        return "gone"
    if now != identity or (marker and not _environment_holds(pid, marker)):
        return "other"
    for forcibly, seconds in ((False, grace), (True, KILLED_WAIT_SECONDS)):
        if process_identity(pid) != identity:
            break
        processes.signal_leader(pid, forcibly)  # it leads its group (processes.start)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and process_identity(pid) == identity:
            time.sleep(POLL_SECONDS)
    return "ended" if process_identity(pid) != identity else "stuck"


