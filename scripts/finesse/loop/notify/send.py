"""Sending a loop's notifications, all at once, within NOTIFY_SECONDS whatever the other
side does: a URL that does not answer in time is given up (its thread is a daemon, left to
die with the process), a command still running then is stopped (its whole process group).
Nothing here raises or changes the loop: each failure comes back as a `Delivery` with the
problem in a few words, for the caller to log.

- a URL: one POST of the JSON body, no redirect followed (a webhook that redirects is
  refused), proxies as the environment sets them;
- `desktop`: `notify-send` on Linux with a display, `osascript` on macOS (the text passed as
  an argument, never spliced into a script), else the terminal bell on /dev/tty;
- a command: split with shlex, run without a shell, in the project root, its own process
  group, the report's JSON on stdin (a temporary file, so any size), RALPH_LOOP_ID,
  RALPH_OUTCOME and RALPH_REPORT in its environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from finesse.models import Notify
from finesse.record import Record
from finesse.support import processes, terminal

NOTIFY_SECONDS = 2.0
POLL_SECONDS = 0.02
USER_AGENT = "finesse-ralph/0.1"


class Delivery(Record):
    target: str  # what to call it in a log: a URL is shown as its scheme and host only
    problem: str = ""  # "" when it was delivered


def shown_target(target: str) -> str:
    """A URL without its path and query (a webhook's path is its secret)."""
    if target.startswith(("http://", "https://")):
        parts = urlsplit(target)
        return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}/..."
    return target


def _no_redirect() -> Any:
    """urllib's redirect handler, made to refuse: a redirect is an error, not a second
    request (which could go anywhere)."""
    import urllib.request

    class Refuse(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return Refuse()


def _post(url: str, payload: bytes, seconds: float, results: dict[str, str]) -> None:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=payload, method="POST", headers={
        "Content-Type": "application/json", "User-Agent": USER_AGENT})
    opener = urllib.request.build_opener(_no_redirect())
    try:
        with opener.open(request, timeout=max(0.05, seconds)) as answer:
            answer.read(4096)
            status = answer.status
        results[url] = "" if 200 <= status < 300 else f"answered HTTP {status}"
    except urllib.error.HTTPError as err:
        results[url] = f"answered HTTP {err.code}"
    except Exception as err:  # a notification never escapes into the loop's end
        reason = getattr(err, "reason", None) or err
        results[url] = (_no_answer(seconds) if isinstance(reason, TimeoutError) else
                        f"failed ({' '.join(str(reason).split())[:200] or type(err).__name__})")


def _no_answer(seconds: float) -> str:
    return f"no answer within {seconds:.1f} s"


def _desktop_argv(title: str, line: str, env: Mapping[str, str]) -> list[str] | None:
    if sys.platform == "darwin" and shutil.which("osascript", path=env.get("PATH")):
        return ["osascript", "-e", "on run argv", "-e",
                "display notification (item 2 of argv) with title (item 1 of argv)",
                "-e", "end run", title, line]
    display = env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")
    found = shutil.which("notify-send", path=env.get("PATH"))
    if found and display:
        # Notification daemons read the body as markup: it is escaped.
        body = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return [found, "--app-name=ralph", "--", title, body]
    return None


class _Running(Record, frozen=False):
    target: str
    process: subprocess.Popen[bytes]
    errors: IO[bytes]


def _start(target: str, argv: list[str], stdin: IO[bytes] | None, cwd: Path,
           env: Mapping[str, str]) -> _Running | Delivery:
    errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed once the process ends)
    try:
        process = processes.start(argv, cwd=cwd, env=dict(env),
                                  stdin=stdin if stdin is not None else subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=errors)
    except (OSError, ValueError) as err:
        errors.close()
        return Delivery(target, f"could not start ({getattr(err, 'strerror', None) or err})")
    return _Running(target, process, errors)


def _finished(running: _Running) -> Delivery:
    code = running.process.returncode
    running.errors.seek(0)
    said = running.errors.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
    running.errors.close()
    if code == 0:
        return Delivery(running.target)
    last = f": {said[-1][:200]}" if said else ""
    return Delivery(running.target, f"exit {code}{last}")


def _stop(running: _Running, seconds: float) -> Delivery:
    with contextlib.suppress(OSError):
        processes.end_forcibly(running.process)
    running.process.wait()
    running.errors.close()
    return Delivery(running.target, f"still running after {seconds:.1f} s: stopped")


def deliver(notify: Notify, body: dict[str, Any], record: dict[str, Any], *, cwd: Path,
            env: Mapping[str, str] | None = None,
            seconds: float = NOTIFY_SECONDS) -> list[Delivery]:
    """Send every notification; back within `seconds`, one Delivery per target."""
    deadline = time.monotonic() + seconds
    environment = dict(os.environ if env is None else env)
    done: list[Delivery] = []
    posted: dict[str, str] = {}
    payload = json.dumps(body, ensure_ascii=True).encode()
    threads = []
    running: list[_Running] = []
    for target in notify.targets:
        if target.startswith(("http://", "https://")):
            thread = threading.Thread(target=_post, args=(target, payload, seconds, posted),
                                      name="ralph-notify", daemon=True)
            thread.start()
            threads.append((target, thread))
            continue
        argv = _desktop_argv("Ralph loop " + str(body.get("title", "ended")),
                             str(body.get("text", "")), environment)
        started = _start(target, argv, None, cwd, environment) if argv else None
        if isinstance(started, _Running):
            running.append(started)
        else:
            done.append(started or Delivery(target, terminal.bell()))
    if notify.commands:
        extra = {"RALPH_LOOP_ID": str(record.get("loop_id", "")),
                 "RALPH_OUTCOME": str(record.get("outcome", "")),
                 "RALPH_REPORT": str(record.get("report_path", ""))}
        document = json.dumps(record, ensure_ascii=True).encode()
        for command in notify.commands:
            with tempfile.TemporaryFile() as stdin:
                stdin.write(document)
                stdin.seek(0)
                started = _start(f"--notify-cmd {command}", shlex.split(command), stdin, cwd,
                                 {**environment, **extra})
            if isinstance(started, _Running):
                running.append(started)
            else:
                done.append(started)
    while time.monotonic() < deadline and (
            any(r.process.poll() is None for r in running)
            or any(thread.is_alive() for _, thread in threads)):
        time.sleep(POLL_SECONDS)
    for each in running:
        done.append(_finished(each) if each.process.poll() is not None else _stop(each, seconds))
    for target, thread in threads:
        problem = posted.get(target) if not thread.is_alive() else None
        done.append(Delivery(shown_target(target),
                             _no_answer(seconds) if problem is None else problem))
    return done
