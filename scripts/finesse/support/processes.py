"""Child processes in a process group of their own, and ending that group: the only door to
the platform's process groups and signals. Verification and gate commands
(`finesse.support.verify`) and each iteration of `ralph run` (`finesse.headless.child`) start
their children with `start` and end them here; `ralph run` takes its cancel signals from
`cancel_signals`.

POSIX: the child starts a new session, so it leads a group of its own and nothing sent to it
reaches its parent. Ending it gently is SIGTERM to the group, forcibly SIGKILL. The group is
alive while any member is (`killpg(group, 0)`), and the child's exit is seen without reaping
it (`waitid` with WNOWAIT), so its pid, which is the group's id, stays reserved and
signalling the group can never reach an unrelated process.

Windows: the child starts a new process group (CREATE_NEW_PROCESS_GROUP), so a Ctrl-C in the
console does not reach it. Ending it gently is CTRL_BREAK_EVENT to that group; forcibly,
`taskkill /F /T` (the child and every descendant still linked to it) and then
TerminateProcess. Windows has no group to ask: it counts as alive while the child runs.

A child that must not outlive its parent (`start(..., die_with_parent=True)`: an iteration's
agent, which `ralph run` killed outright would otherwise leave running in its own session)
gets, on Linux, a parent-death signal (prctl PR_SET_PDEATHSIG, SIGTERM so that Claude Code
ends the commands it started), set in the child between fork and exec, with a check that the
parent did not die before it was set. Linux sends it when the thread that started the child
ends, and every caller waits for its child in that thread. Elsewhere there is no such signal:
the caller records the child and ends it later (`finesse.support.survivors`), signalling
only the very process it recorded, never a later one given the same pid.

The platform's specifics are looked up when first used, never at import: the package loads
on either.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from finesse.support.interpreters import which

# The values Windows gives these (signal.CTRL_BREAK_EVENT, signal.SIGBREAK and
# subprocess.CREATE_NEW_PROCESS_GROUP exist only there).
CREATE_NEW_PROCESS_GROUP = 0x00000200
CTRL_BREAK_EVENT = 1
SIGBREAK = 21
TASKKILL_TIMEOUT_SECONDS = 10.0
POLL_SECONDS = 0.05
Args = str | list[str]


class Child(Protocol):
    """What the door needs of a started child (a `subprocess.Popen` is one)."""

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...

    def kill(self) -> None: ...


class PosixGroups:
    """A new session per child; SIGTERM and SIGKILL to its group."""

    name = "posix"

    def popen_options(self, die_with_parent: bool = False) -> dict[str, Any]:
        options: dict[str, Any] = {"start_new_session": True}
        hook = _parent_death_hook() if die_with_parent else None
        if hook is not None:
            options["preexec_fn"] = hook
        return options

    def _signal(self, group: int, signum: int) -> bool:
        try:
            os.killpg(group, signum)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def end_gently(self, child: Child) -> None:
        self._signal(child.pid, signal.SIGTERM)

    def end_forcibly(self, child: Child) -> None:
        self._signal(child.pid, signal.SIGKILL)

    def group_alive(self, child: Child) -> bool:
        return self._signal(child.pid, 0)

    def exited(self, child: Child) -> bool:
        """Whether the child has exited, without reaping it (see the module docstring)."""
        if not hasattr(os, "waitid"):  # pragma: no cover - macOS before Python 3.13
            return child.poll() is not None
        try:
            found = os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return found is not None

    def cancel_signals(self) -> dict[int, str]:
        return {signal.SIGINT: "SIGINT (Ctrl-C)", signal.SIGTERM: "SIGTERM"}

    def signal_leader(self, leader: int, forcibly: bool) -> None:
        """SIGTERM (or SIGKILL) to the group `leader` leads, or to it alone if it leads none."""
        signum = signal.SIGKILL if forcibly else signal.SIGTERM
        if not self._signal(leader, signum):
            with contextlib.suppress(OSError):
                os.kill(leader, signum)

    def shell(self, command: str, env: Mapping[str, str]) -> Args:
        return ["/bin/sh", "-c", command]


class WindowsGroups:
    """A new process group per child; CTRL_BREAK_EVENT, then `taskkill /F /T` and
    TerminateProcess. `send` and `run` are os.kill and subprocess.run (stand-ins in tests)."""

    name = "windows"

    def __init__(self, send: Callable[[int, int], None] = os.kill,
                 run: Callable[..., Any] = subprocess.run) -> None:
        self.send = send
        self.run = run

    def popen_options(self, die_with_parent: bool = False) -> dict[str, Any]:
        return {"creationflags": CREATE_NEW_PROCESS_GROUP}

    def end_gently(self, child: Child) -> None:
        with contextlib.suppress(OSError):
            self.send(child.pid, CTRL_BREAK_EVENT)

    def end_forcibly(self, child: Child) -> None:
        if child.poll() is None:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                self.run(["taskkill", "/F", "/T", "/PID", str(child.pid)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, timeout=TASKKILL_TIMEOUT_SECONDS)
        with contextlib.suppress(OSError):
            child.kill()

    def group_alive(self, child: Child) -> bool:
        return child.poll() is None

    def exited(self, child: Child) -> bool:
        return child.poll() is not None

    def cancel_signals(self) -> dict[int, str]:
        return {signal.SIGINT: "SIGINT (Ctrl-C)", SIGBREAK: "SIGBREAK (Ctrl-Break)",
                signal.SIGTERM: "SIGTERM"}

    def signal_leader(self, leader: int, forcibly: bool) -> None:
        """Gently, CTRL_BREAK_EVENT to the group `leader` leads (it reaches the group only
        from the same console; elsewhere it fails, and the forcible end follows the grace);
        forcibly, `taskkill /F /T` (it and its descendants)."""
        if not forcibly:
            with contextlib.suppress(OSError):
                self.send(leader, CTRL_BREAK_EVENT)
            return
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            self.run(["taskkill", "/F", "/T", "/PID", str(leader)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, timeout=TASKKILL_TIMEOUT_SECONDS)

    def shell(self, command: str, env: Mapping[str, str]) -> Args:
        """Git for Windows' bash when there is one (the shell Claude Code's Bash tool uses
        there: CLAUDE_CODE_GIT_BASH_PATH, else the bash.exe beside git.exe), else cmd.exe."""
        bash = env.get("CLAUDE_CODE_GIT_BASH_PATH") or ""
        if not os.path.isfile(bash):
            git = which("git", env, windows=True)
            bash = os.path.join(os.path.dirname(os.path.dirname(git)), "bin", "bash.exe") \
                if git else ""
        if os.path.isfile(bash):
            return [bash, "-c", command]
        comspec = env.get("COMSPEC") or "cmd.exe"
        return f'"{comspec}" /d /s /c "{command}"'


Groups = PosixGroups | WindowsGroups
_chosen: Groups | None = None


def groups_for(os_name: str) -> Groups:
    """The process groups of the platform named like `os.name` ("nt" is Windows)."""
    return WindowsGroups() if os_name == "nt" else PosixGroups()


def platform_groups() -> Groups:
    global _chosen
    if _chosen is None:
        _chosen = groups_for(os.name)
    return _chosen


PR_SET_PDEATHSIG = 1


def _parent_death_hook() -> Callable[[], None] | None:
    """What the child runs before exec on Linux so that its parent's death ends it: prctl,
    looked up here (nothing is loaded in the child), then a check that the parent was still
    there when it took effect. None where the platform has no such signal."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return None
    parent = os.getpid()
    death_signal = int(signal.SIGTERM)

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, death_signal)
        if os.getppid() != parent:  # the parent died before the signal was set
            os._exit(128 + death_signal)

    return hook


def start(args: Args | Sequence[str], *, die_with_parent: bool = False,
          **options: Any) -> subprocess.Popen[bytes]:
    """`subprocess.Popen(args, **options)` in a process group of its own: the one place a
    child that may have to be ended with everything it started is spawned. With
    `die_with_parent`, on Linux the child is signalled when its parent dies."""
    command: Args = args if isinstance(args, str) else list(args)
    process: subprocess.Popen[bytes] = subprocess.Popen(
        command, **options, **platform_groups().popen_options(die_with_parent))
    return process


def shell(command: str, env: Mapping[str, str] | None = None) -> Args:
    """The words that run `command` in the platform's shell (POSIX: `/bin/sh -c`)."""
    return platform_groups().shell(command, os.environ if env is None else env)


def end_gently(child: Child) -> None:
    """Ask the child's group to end (SIGTERM; CTRL_BREAK_EVENT)."""
    platform_groups().end_gently(child)


def end_forcibly(child: Child) -> None:
    """End the child's group now (SIGKILL; taskkill /F /T, TerminateProcess)."""
    platform_groups().end_forcibly(child)


def group_alive(child: Child) -> bool:
    return platform_groups().group_alive(child)


def exited(child: Child) -> bool:
    """Whether the child has exited (on POSIX without reaping it)."""
    return platform_groups().exited(child)


def end_group(child: Child, grace: float, then: float = 1.0) -> None:
    """End the child's group gently, forcibly after `grace` seconds if any of it is left, and
    wait up to `then` seconds more for it to be gone."""
    for ender, seconds in ((end_gently, grace), (end_forcibly, then)):
        ender(child)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if child.poll() is not None and not group_alive(child):
                return
            time.sleep(POLL_SECONDS)


def cancel_signals() -> dict[int, str]:
    """The signals that ask `ralph run` to cancel, with the names it reports them by."""
    return platform_groups().cancel_signals()


def pid_alive(pid: int) -> bool:
    """Whether a process with this id may still run: POSIX asks with signal 0; on Windows,
    where `os.kill` would end it, it is taken to run."""
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: it runs
        return True
    return True


def kill_self() -> None:
    """End this process at once, as a SIGKILL from outside would: no cleanup, no flush (the
    crash-safety tests' kill points, `finesse.support.writes.fault_point`)."""
    if os.name == "nt":
        os._exit(137)
    os.kill(os.getpid(), signal.SIGKILL)


def signal_leader(leader: int, forcibly: bool) -> None:
    """End, gently or forcibly, the group `leader` leads (or it alone): a child of an earlier
    process, recorded and identified (`finesse.support.survivors`), with no Popen here."""
    platform_groups().signal_leader(leader, forcibly)
