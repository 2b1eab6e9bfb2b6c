"""Sending notifications: one POST of the JSON body, a command run without a shell with the
record on stdin, the desktop notifier or the bell; and the bound: a server that hangs, a
command that hangs or does not exist, a redirect, an error status, each comes back within
NOTIFY_SECONDS as a problem in a few words, never an exception."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from finesse.loop.notify.send import NOTIFY_SECONDS, Delivery, deliver, shown_target
from finesse.models import Notify
from finesse.support import terminal
from tests.helpers.webhook import Webhook

BODY = {"text": "Ralph loop success (verified) after 2/8 iterations", "title": "success",
        "outcome": "success"}
RECORD = {"loop_id": "L1", "outcome": "success", "report_path": "/p/r.md", "prompt": "ü ✓"}
# The bound, and what a hanging peer may add to it (thread start, a process's exit).
SLACK = 1.5


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def test_a_url_gets_one_post_of_the_json_body(tmp_path: Path) -> None:
    with Webhook() as hook:
        done = deliver(Notify(targets=[f"{hook.url}/services/T0/SECRET"]), BODY, RECORD,
                       cwd=tmp_path)
    assert done == [Delivery(f"{hook.url}/...")]
    [posted] = hook.received
    assert (posted.method, posted.path, posted.headers["content-type"]) == (
        "POST", "/services/T0/SECRET", "application/json")
    assert posted.json() == BODY


def test_a_server_that_hangs_is_given_up_at_the_bound(tmp_path: Path) -> None:
    with Webhook(hang=20) as hook:
        started = time.monotonic()
        done = deliver(Notify(targets=[hook.url + "/x"]), BODY, RECORD, cwd=tmp_path)
        took = time.monotonic() - started
        assert len(hook.received) == 1  # it got the request, and is still sitting on it
    assert done == [Delivery(f"{hook.url}/...", f"no answer within {NOTIFY_SECONDS:.1f} s")]
    assert took < NOTIFY_SECONDS + SLACK


@pytest.mark.parametrize(("status", "problem"), [(500, "answered HTTP 500"),
                                                 (302, "answered HTTP 302")])
def test_an_error_or_a_redirect_is_a_problem_and_no_second_request(
        tmp_path: Path, status: int, problem: str) -> None:
    with Webhook() as elsewhere, Webhook(status=status, location=elsewhere.url + "/y") as hook:
        done = deliver(Notify(targets=[hook.url + "/x"]), BODY, RECORD, cwd=tmp_path)
    assert done == [Delivery(f"{hook.url}/...", problem)]
    assert (len(hook.received), elsewhere.received) == (1, [])


def test_nobody_listening_is_a_problem(tmp_path: Path) -> None:
    with Webhook() as hook:
        url = hook.url
    [delivery] = deliver(Notify(targets=[url + "/x"]), BODY, RECORD, cwd=tmp_path)
    assert delivery.target == f"{url}/..."
    assert delivery.problem.startswith("failed (") and "refused" in delivery.problem.lower()


def test_a_command_reads_the_record_on_stdin_and_runs_without_a_shell(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    command = script(tmp_path, "record.py", (
        "import json, os, sys\n"
        f"open({str(seen)!r}, 'w').write(json.dumps({{'stdin': sys.stdin.read(), "
        "'argv': sys.argv[1:], 'cwd': os.getcwd(), 'env': [os.environ.get(k) for k in "
        "('RALPH_LOOP_ID', 'RALPH_OUTCOME', 'RALPH_REPORT')]}))\n"))
    project = tmp_path / "project"
    project.mkdir()
    done = deliver(Notify(commands=[f"{command} '$(touch pwned)' \"a b\" ;rm"]), BODY,
                   RECORD, cwd=project)
    assert done == [Delivery(f"--notify-cmd {command} '$(touch pwned)' \"a b\" ;rm")]
    got = json.loads(seen.read_text())
    assert json.loads(got["stdin"]) == RECORD
    assert got["argv"] == ["$(touch pwned)", "a b", ";rm"]
    assert (got["cwd"], got["env"]) == (str(project), ["L1", "success", "/p/r.md"])
    assert sorted(path.name for path in project.iterdir()) == []


def test_a_command_that_hangs_is_stopped_at_the_bound_with_its_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = script(tmp_path, "hang.py", (
        "import os, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "time.sleep(60)\n"))
    started = time.monotonic()
    done = deliver(Notify(commands=[command]), BODY, RECORD, cwd=tmp_path)
    took = time.monotonic() - started
    assert done == [Delivery(f"--notify-cmd {command}",
                             f"still running after {NOTIFY_SECONDS:.1f} s: stopped")]
    assert took < NOTIFY_SECONDS + SLACK
    for pid in map(int, pids.read_text().split()):
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of a process we did not reap is gone for our purpose
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_a_command_that_does_not_exist_or_fails_is_a_problem(tmp_path: Path) -> None:
    failing = script(tmp_path, "fail.py", "import sys\nsys.exit('no route to the pager')\n")
    done = deliver(Notify(commands=["no-such-notifier-xyz --x", failing]), BODY, RECORD,
                   cwd=tmp_path)
    assert done == [
        Delivery("--notify-cmd no-such-notifier-xyz --x",
                 "could not start (No such file or directory)"),
        Delivery(f"--notify-cmd {failing}", "exit 1: no route to the pager"),
    ]


def test_desktop_uses_notify_send_with_the_text_as_arguments(tmp_path: Path) -> None:
    seen = tmp_path / "argv.json"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script(bin_dir, "notify-send",
           f"import json, sys\nopen({str(seen)!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
    body = {**BODY, "text": "Fix <b>it</b> & 'go' $(x)"}
    done = deliver(Notify(targets=["desktop"]), body, RECORD, cwd=tmp_path,
                   env={"PATH": str(bin_dir), "DISPLAY": ":0"})
    assert done == [Delivery("desktop")]
    assert json.loads(seen.read_text()) == [
        "--app-name=ralph", "--", "Ralph loop success",
        "Fix &lt;b&gt;it&lt;/b&gt; &amp; 'go' $(x)"]


def test_desktop_without_a_notifier_rings_the_bell(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    tty = tmp_path / "tty"
    tty.write_bytes(b"")
    monkeypatch.setattr(terminal, "TTY", str(tty))
    done = deliver(Notify(targets=["desktop"]), BODY, RECORD, cwd=tmp_path,
                   env={"PATH": str(tmp_path)})
    assert (done, tty.read_bytes()) == ([Delivery("desktop")], b"\a")
    monkeypatch.setattr(terminal, "TTY", str(tmp_path / "no-such-tty"))
    assert deliver(Notify(targets=["desktop"]), BODY, RECORD, cwd=tmp_path,
                   env={"PATH": str(tmp_path)}) == [
        Delivery("desktop", "no desktop notifier and no terminal for the bell")]


def test_all_at_once_within_one_bound(tmp_path: Path) -> None:
    slow = script(tmp_path, "slow.py", "import time\ntime.sleep(30)\n")
    with Webhook(hang=20) as hanging, Webhook() as fine:
        started = time.monotonic()
        done = deliver(Notify(targets=[hanging.url + "/a", fine.url + "/b"],
                              commands=[slow]), BODY, RECORD, cwd=tmp_path)
        took = time.monotonic() - started
    assert done == [
        Delivery(f"--notify-cmd {slow}", f"still running after {NOTIFY_SECONDS:.1f} s: stopped"),
        Delivery(f"{hanging.url}/...", f"no answer within {NOTIFY_SECONDS:.1f} s"),
        Delivery(f"{fine.url}/..."),
    ]
    assert took < NOTIFY_SECONDS + SLACK


def test_a_url_is_shown_without_its_secret_path() -> None:
    assert shown_target("https://hooks.slack.com/services/T0/B1/XYZ?token=1") == (
        "https://hooks.slack.com/...")
    assert shown_target("http://127.0.0.1:8080/x") == "http://127.0.0.1:8080/..."
    assert shown_target("desktop") == "desktop"
