"""Watch it, see it, be told, in the real Claude Code CLI against the scripted model: an
in-session loop that POSTs its end to a server on 127.0.0.1, runs its --notify-cmd with the
report's JSON and leaves an HTML report beside the Markdown one (its task and a file name
hostile); a headless `ralph run` followed live by `ralph watch` in tmux, whose screen shows
the iteration advancing, that notifies once at its end, a hanging server not holding its
stop past the bound."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from finesse.loop.notify.send import NOTIFY_SECONDS
from tests.e2e.fakeapi import FakeModel, bash, text
from tests.e2e.harness import SCRIPTS, ClaudeRunner
from tests.e2e.headless import RALPH, history, ralph_args, ralph_env
from tests.helpers.pages import parse
from tests.helpers.webhook import Webhook

pytestmark = pytest.mark.e2e

TASK = 'Write done.txt <script>alert(1)</script> & "go"'
SLACK = 1.5  # the bound, plus a process's exit
CLI_EXIT = 3.0  # the bound, plus Claude Code writing its result and exiting


def recorder(folder: Path) -> tuple[str, Path]:
    """A --notify-cmd that writes what it reads on stdin to a file; (command, that file)."""
    folder.mkdir(parents=True, exist_ok=True)
    seen = folder / "seen.json"
    script = folder / "record.py"
    script.write_text(f"import sys\nopen({str(seen)!r}, 'w').write(sys.stdin.read())\n")
    return f"python3 {script}", seen


def test_an_in_session_loop_posts_its_end_runs_the_command_and_writes_the_html(
        run_claude: ClaudeRunner, project: Path, tmp_path: Path) -> None:
    command, seen = recorder(tmp_path / "outside")
    files = ("echo done > done.txt && printf x > \"$(printf 'caf\\351.txt')\" && "
             "touch '<img src=x onerror=alert(2)>.txt'")
    script = [
        [text("Writing it."), bash(files)],
        [text("It is written.\n<promise>DONE</promise>")],
    ]
    typed = TASK.replace('"', '\\"')
    with Webhook(hang=25) as hanging, Webhook() as hook, FakeModel(script) as model:
        run = run_claude(f'/ralph-loop "{typed}" --completion-promise DONE --verify '
                         f'"test -f done.txt" --notify {hook.url}/services/T0/B1 '
                         f'--notify {hanging.url}/x --notify-cmd "{command}"',
                         cwd=project, model=model)
        ended = time.monotonic()
        posted = hook.wait_for(1, timeout=5)
        [held] = hanging.received
    assert run.returncode == 0, run.describe()
    # The Stop hook sent the POST the server sits on; the session still ended at once.
    assert ended - held.at < NOTIFY_SECONDS + CLI_EXIT, ended - held.at
    [loop] = history(project)
    assert (loop["outcome"], loop["verified"], model.call_count) == ("success", True, 2)
    assert loop["notify"] == {"targets": [f"{hook.url}/services/T0/B1", f"{hanging.url}/x"],
                              "commands": [command]}
    [received] = posted
    body = received.json()
    report = f".claude/ralph/reports/{loop['loop_id']}.md"
    assert (received.path, body["outcome"], body["verified"], body["iterations"],
            body["report"], body["html_report"], body["task"]) == (
        "/services/T0/B1", "success", True, 1, report, report.replace(".md", ".html"), TASK)
    assert body["text"].startswith("Ralph loop success (verified) after 1/8 iterations in ")
    record = json.loads(seen.read_text())
    assert (record["loop_id"], record["outcome"], record["prompt"]) == (
        loop["loop_id"], "success", TASK)
    page = parse((project / report.replace(".md", ".html")).read_text(encoding="utf-8"))
    assert [mark["data-iteration"] for mark in page.with_attribute("data-iteration")] == ["1"]
    assert TASK in page.text and {"script", "img"} & page.tags() == set()
    assert "caf\\udce9.txt" in page.text and "<img src=x onerror=alert(2)>.txt" in page.text
    log = (project / ".claude" / "ralph" / "finesse.log").read_text()
    assert log.count("\n") == 1 and log.endswith(
        f"notify {hanging.url}/... of loop {loop['loop_id']}: no answer within "
        f"{NOTIFY_SECONDS:.1f} s\n")


class Held:
    """Scripted replies that wait for the test: iteration N's reply is sent once `release(N)`
    is called, so the loop is seen running at each iteration."""

    def __init__(self, count: int) -> None:
        self.gates = [threading.Event() for _ in range(count)]
        self.started = [threading.Event() for _ in range(count)]

    def reply(self, index: int, said: str) -> Any:
        def answer(body: dict[str, Any]) -> list[dict[str, Any]]:
            self.started[index].set()
            self.gates[index].wait(timeout=90)
            return [text(said)]

        return answer


def tmux_screen(name: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True,
                          text=True, timeout=30).stdout


def wait_screen(name: str, needle: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while True:
        screen = tmux_screen(name)
        if needle in screen:
            return screen
        if time.monotonic() > deadline:
            raise AssertionError(f"{needle!r} never appeared; the screen:\n{screen}")
        time.sleep(0.3)


def test_watch_follows_a_headless_run_which_notifies_once_within_the_bound(
        claude_bin: Path, claude_home: Path, project: Path, tmp_path: Path) -> None:
    assert shutil.which("tmux"), "tmux is required by the e2e tests: install it"
    command, seen = recorder(tmp_path / "outside")
    held = Held(3)
    script = [held.reply(0, "Step one."), held.reply(1, "Step two."),
              held.reply(2, "All done.\n<promise>DONE</promise>")]
    name = f"finesse-watch-{uuid.uuid4().hex[:10]}"
    with Webhook(hang=25) as hanging, Webhook() as hook, FakeModel(script) as model:
        args = ralph_args(claude_bin, "run", "Count to three", "--max-iterations", "3",
                          "--completion-promise", "DONE", "--quiesce-after", "5",
                          "--notify", hook.url + "/a", "--notify", hanging.url + "/b",
                          "--notify-cmd", command)
        env = ralph_env(claude_home, model.base_url)
        running = subprocess.Popen(args, cwd=project, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watch_env = {"PATH": os.environ["PATH"], "HOME": str(claude_home),
                     "TERM": "xterm-256color", "PYTHONPATH": str(SCRIPTS), "LANG": "C.UTF-8"}
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "150", "-y", "40",
                        "-c", str(project), "--", "env", "-i",
                        *(f"{k}={v}" for k, v in watch_env.items()), sys.executable,
                        str(RALPH), "watch", "--project", str(project)], check=True,
                       timeout=30)
        try:
            for index in range(3):
                assert held.started[index].wait(timeout=90), running.stderr
                wait_screen(name, f"{index + 1}/3")
                if index:
                    assert f"{index}/3" not in tmux_screen(name).split("Recently")[0]
                held.gates[index].set()
            code = running.wait(timeout=120)
            ended = time.monotonic()
            screen = wait_screen(name, "Recently ended")
            assert "No active Ralph loop." in screen and "success (verified)" not in screen
            assert "success (unverified)" in screen
            subprocess.run(["tmux", "send-keys", "-t", name, "q"], check=True, timeout=30)
            deadline = time.monotonic() + 10
            while subprocess.run(["tmux", "has-session", "-t", name],
                                 capture_output=True).returncode == 0:
                assert time.monotonic() < deadline, "q did not quit ralph watch"
                time.sleep(0.2)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True,
                           timeout=30)
            held.gates[-1].set()
            for gate in held.gates:
                gate.set()
        out, err = running.communicate(timeout=30)
        [arrived] = hanging.wait_for(1, timeout=1)
        [posted] = hook.received
    assert code == 1, f"{out}\n{err}"  # success on the agent's word alone (no --verify)
    [loop] = history(project)
    assert loop["outcome"] == "success"
    assert [entry["result"] for entry in loop["iterations"]] == ["continue", "continue",
                                                                  "success"]
    assert (posted.json()["outcome"], posted.json()["headless"]) == ("success", True)
    assert arrived.json() == posted.json()
    assert json.loads(seen.read_text())["loop_id"] == loop["loop_id"]
    # The hanging server got its POST and never answered: the run ended within the bound.
    assert ended - arrived.at < NOTIFY_SECONDS + SLACK, ended - arrived.at
    log = (project / ".claude" / "ralph" / "finesse.log").read_text()
    assert log.count("\n") == 1 and log.endswith(
        f"notify {hanging.url}/... of loop {loop['loop_id']}: no answer within "
        f"{NOTIFY_SECONDS:.1f} s\n")
