"""Which Python runs the hooks and the command-line tools. Standard library only, in syntax
Python 3.6 still compiles (no `from __future__ import annotations`, annotations in quotes):
`hooks/launch.py` and `bin/` import this module under whatever `python3` there is, before
anything that needs a newer one.

finesse needs Python 3.11 or newer (MIN_PYTHON). When the interpreter running a launcher is
older, `candidates` offers others, in this order, each only if it is there:

1. FINESSE_PYTHON, when set: the user's own choice, a path or a name on PATH;
2. the interpreter finesse's environment was built with (the `executable` of a built
   virtualenv's `pyvenv.cfg` in the plugin data folder), so a loop keeps the interpreter its
   dependencies were installed for;
3. `python3.13`, `python3.12`, `python3.11` on PATH;
4. on Windows, the Python launcher `py -3` (the newest Python 3 it knows).

The search is cheap: a few `stat` calls and one small file read. FINESSE_PYTHON, and a
candidate on PATH that is a script rather than a program (a pyenv or asdf shim, which fails
when its version is not the selected one), are run once to ask their version: whatever the
launcher hands over to must be a Python that runs it, since a program that exits 2 (as
Python does on an option it refuses) would block a Stop. A program on PATH is taken at its
name's word, and the environment's interpreter at its pyvenv.cfg's. A candidate that does
not run, or is older than MIN_PYTHON, is passed over. Nothing is searched when the running
interpreter is new enough: the launchers compare `sys.version_info` first and import this
module only for an old one.
"""

import os
import stat
import sys

MYPY = False  # the type checker takes MYPY as true: typing costs 16 ms to import on 3.9
if MYPY:
    from collections.abc import Iterator, Mapping

MIN_PYTHON = (3, 11)
VARIABLE = "FINESSE_PYTHON"
# Set for a command-line tool re-run under another interpreter: the reason it was chosen.
RELAUNCHED_VARIABLE = "FINESSE_RELAUNCHED"
NAMES = ("python3.13", "python3.12", "python3.11")
WINDOWS_LAUNCHER = ("py", "-3")
# Written into a virtualenv once its dependencies are installed (finesse.support.runtime).
COMPLETE_MARK = ".finesse-complete"
VERSION_TIMEOUT_SECONDS = 10.0
_PROBE = "import sys; sys.stdout.write('%d.%d.%d' % tuple(sys.version_info[:3]))"
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_SMALL_FILE_BYTES = 64 * 1024


class Candidate:
    """An interpreter to run under: the words that start it, and why it was chosen."""

    __slots__ = ("argv", "reason")

    def __init__(self, argv: "list[str]", reason: str) -> None:
        self.argv = argv
        self.reason = reason

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Candidate)
                and (self.argv, self.reason) == (other.argv, other.reason))

    def __repr__(self) -> str:
        return f"Candidate({self.argv!r}, {self.reason!r})"


def is_windows() -> bool:
    return os.name == "nt"


def version_text(info: "tuple[int, ...]") -> str:
    return ".".join(str(part) for part in info[:3])


def data_dir(env: "Mapping[str, str]") -> str:
    """FINESSE_DATA_DIR, else the plugin data folder Claude Code gives hooks, else a cache."""
    configured = env.get("FINESSE_DATA_DIR") or env.get("CLAUDE_PLUGIN_DATA")
    if configured:
        return configured
    cache = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "finesse")


def environment_folders(env: "Mapping[str, str]") -> "list[str]":
    """Where built environments may be: the data folder given (Claude Code gives every hook
    one), or, outside Claude Code, each finesse plugin data folder and then the cache."""
    if env.get("FINESSE_DATA_DIR") or env.get("CLAUDE_PLUGIN_DATA"):
        return [data_dir(env)]
    plugin_data = os.path.join(os.path.expanduser("~"), ".claude", "plugins", "data")
    return [os.path.join(plugin_data, name) for name in sorted(_names(plugin_data))
            if name.startswith("finesse")] + [data_dir(env)]


def _names(folder: str) -> "list[str]":
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _small_text(path: str) -> "str | None":
    """A regular file's text (at most 64 KiB), or None; a FIFO or a device is never read."""
    try:
        descriptor = os.open(path, _READ_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return os.read(descriptor, _SMALL_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _version(text: str) -> "tuple[int, ...] | None":
    try:
        return tuple(int(part) for part in text.strip().split("."))
    except ValueError:
        return None


def pyvenv_settings(venv: str) -> "dict[str, str]":
    """The `key = value` lines of a virtualenv's pyvenv.cfg ({} when it cannot be read)."""
    text = _small_text(os.path.join(venv, "pyvenv.cfg")) or ""
    settings = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            settings[key.strip()] = value.strip()
    return settings


def built_interpreter(env: "Mapping[str, str]") -> "str | None":
    """The interpreter of the most recently built environment, when it is still there and
    new enough (by the version its pyvenv.cfg records)."""
    best = None  # type: tuple[float, str] | None
    for folder in environment_folders(env):
        for name in _names(folder):
            if not name.startswith("venv-"):
                continue
            venv = os.path.join(folder, name)
            try:
                built_at = os.stat(os.path.join(venv, COMPLETE_MARK)).st_mtime
            except (OSError, ValueError):
                continue
            settings = pyvenv_settings(venv)
            executable = settings.get("executable", "")
            version = _version(settings.get("version", ""))
            if (executable and version is not None and version >= MIN_PYTHON
                    and os.path.isfile(executable) and (best is None or built_at > best[0])):
                best = (built_at, executable)
    return None if best is None else best[1]


def which(name: str, env: "Mapping[str, str]", windows: "bool | None" = None) -> "str | None":
    """The first `name` (on Windows `name.exe`) in the PATH of `env`, as Claude Code finds
    the command of an exec-form hook; None when there is none."""
    windows = is_windows() if windows is None else windows
    filename = name + ".exe" if windows and not name.lower().endswith(".exe") else name
    for folder in env.get("PATH", os.defpath).split(";" if windows else os.pathsep):
        if not folder:
            continue
        path = os.path.join(folder, filename)
        if windows:
            # An App Execution Alias is a reparse point that may not stat as a file.
            if os.path.lexists(path) and not os.path.isdir(path):
                return path
        elif os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def is_script(path: str) -> bool:
    """Whether the file starts with `#!`: a wrapper such as a pyenv shim, not a program."""
    try:
        descriptor = os.open(path, _READ_FLAGS)
    except (OSError, ValueError):
        return False
    try:
        return os.read(descriptor, 2) == b"#!"
    except OSError:
        return False
    finally:
        os.close(descriptor)


def version_of(argv: "list[str]", env: "Mapping[str, str]") -> "tuple[int, ...] | None":
    """The version the interpreter started by `argv` reports, or None when it does not run."""
    import subprocess

    try:
        done = subprocess.run(
            [*argv, "-S", "-c", _PROBE], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, timeout=VERSION_TIMEOUT_SECONDS, env=dict(env),
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return _version(done.stdout.decode("ascii", "replace"))


def _runs_new_enough(argv: "list[str]", env: "Mapping[str, str]") -> bool:
    version = version_of(argv, env)
    return version is not None and version >= MIN_PYTHON


def _named(value: str, env: "Mapping[str, str]", windows: bool) -> "str | None":
    """FINESSE_PYTHON's interpreter: a path as given, or a bare name found on PATH."""
    if os.sep in value or (os.altsep is not None and os.altsep in value):
        return value if os.path.lexists(value) else None
    return which(value, env, windows)


def candidates(env: "Mapping[str, str]",
               windows: "bool | None" = None) -> "Iterator[Candidate]":
    """The interpreters to try, in order (see the module docstring), found lazily."""
    windows = is_windows() if windows is None else windows
    chosen = env.get(VARIABLE, "")
    if chosen:
        found = _named(chosen, env, windows)
        if found is not None and _runs_new_enough([found], env):
            yield Candidate([found], VARIABLE + "=" + chosen)
    built = built_interpreter(env)
    if built is not None:
        yield Candidate([built], "the interpreter finesse's environment was built with")
    for name in NAMES:
        found = which(name, env, windows)
        if found is None:
            continue
        if is_script(found) and not _runs_new_enough([found], env):
            continue
        yield Candidate([found], name + " on PATH")
    if windows:
        launcher = which(WINDOWS_LAUNCHER[0], env, windows)
        if launcher is not None:
            yield Candidate([launcher, *WINDOWS_LAUNCHER[1:]], "the Python launcher py -3")


def choose(env: "Mapping[str, str]", windows: "bool | None" = None) -> "Candidate | None":
    """The first candidate, or None when there is none."""
    for candidate in candidates(env, windows):
        return candidate
    return None


def looked_for(windows: "bool | None" = None) -> str:
    """What `candidates` looks for, in words, for a one-line refusal."""
    windows = is_windows() if windows is None else windows
    words = (f"{VARIABLE}, the interpreter of finesse's environment, "
             f"{', '.join(NAMES[:-1])} and {NAMES[-1]} on PATH")
    return words + (", and " + " ".join(WINDOWS_LAUNCHER) if windows else "")


def refusal(running: "tuple[int, ...]", reason: "str | None" = None,
            windows: "bool | None" = None, who: str = "finesse") -> str:
    """One line: `who` cannot run under `running`, what was looked for, what to do.
    `reason` names the candidate that was itself too old (the interpreter was re-run under it)."""
    found = version_text(running)
    advice = ("install Python 3.11 or newer (from python.org, or e.g. `brew install "
              "python@3.12`) or set FINESSE_PYTHON to one; see `ralph doctor`")
    if reason:
        return f"{who}: needs Python 3.11 or newer, and {reason} is {found}: {advice}"
    return (f"{who}: needs Python 3.11 or newer; python3 is {found}, and none was found "
            f"(looked for {looked_for(windows)}): {advice}")


def run_replacing(argv: "list[str]", windows: "bool | None" = None,
                  env: "Mapping[str, str] | None" = None) -> int:
    """Run `argv` in place of this process (in `env`, else this one's), its standard streams
    (a hook's JSON on stdin) passed through unread. On POSIX the process is replaced: the pid
    stays the one Claude Code waits for and times out, and this returns only by raising
    OSError when `argv` cannot be started. Windows has no such call: the child is started with
    the inherited streams and waited for, and its exit code returned."""
    windows = is_windows() if windows is None else windows
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    if not windows:
        os.execve(argv[0], argv, dict(os.environ if env is None else env))
    import subprocess

    return subprocess.call(argv, env=None if env is None else dict(env))
