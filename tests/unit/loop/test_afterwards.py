"""What follows a loop's end: the HTML report beside the Markdown one (or not, when the
config says so), the notifications; and neither can change the loop's result or fail its
end: a FIFO or a directory where the page goes, a report folder that cannot be written, a
notification that fails, each is logged and the loop ends as it would have."""

from __future__ import annotations

import json
import os
import sys
from datetime import timedelta
from pathlib import Path

from finesse.engine import end_loop
from finesse.loop.lifecycle import finish
from finesse.models import IterationRecord, LoopState, Notify
from finesse.state.store import LoopStore
from tests.helpers.pages import parse
from tests.helpers.states import SESSION, T0, T1, make_state, only_archived, store_for
from tests.helpers.webhook import Webhook


def ended(root: Path, **fields: object) -> LoopState:
    records = [IterationRecord(number=n, started_at=T0, ended_at=T1, result=result)
               for n, result in ((1, "rejected"), (2, "success"))]
    state = make_state(root, iteration=2, iterations=records, **fields)  # type: ignore[arg-type]
    return end_loop(state, "success", "Ralph loop done at iteration 2/8.", T1)


def log_lines(store: LoopStore) -> list[str]:
    if not store.paths.log.exists():
        return []
    return [line.split(" ", 1)[1] for line in store.paths.log.read_text().splitlines()]


def test_the_html_report_is_written_beside_the_markdown_one(tmp_path: Path) -> None:
    store = store_for(tmp_path)
    state = ended(tmp_path)
    store.save(replace_outcome(state))
    finish(store, state)
    archived = only_archived(tmp_path)
    markdown = Path(archived.report_path)
    page = markdown.with_suffix(".html")
    assert sorted(path.name for path in markdown.parent.iterdir()) == [page.name, markdown.name]
    parsed = parse(page.read_text(encoding="utf-8"))
    assert [mark["data-iteration"] for mark in parsed.with_attribute("data-iteration")] == [
        "1", "2"]
    assert parsed.by_id("task")[0] == "p" and "Make the tests pass" in parsed.text
    assert log_lines(store) == []


def replace_outcome(state: LoopState) -> LoopState:
    """The loop as it was still running, for the active file."""
    from finesse.record import replace

    return replace(state, outcome=None, ended_at=None, end_message="")


def test_no_html_in_the_config_writes_only_the_markdown(tmp_path: Path) -> None:
    (tmp_path / ".finesse").mkdir()
    (tmp_path / ".finesse" / "config.json").write_text('{"no_html": true}')
    store = store_for(tmp_path)
    finish(store, ended(tmp_path))
    markdown = Path(only_archived(tmp_path).report_path)
    assert sorted(path.name for path in markdown.parent.iterdir()) == [markdown.name]


def test_a_fifo_or_a_directory_where_the_page_goes_is_left_alone_and_logged(
        tmp_path: Path) -> None:
    store = store_for(tmp_path)
    first, second = ended(tmp_path), ended(tmp_path, loop_id="20261130T070000Z-0b7c5c3e-def456")
    store.paths.reports.mkdir(parents=True)
    fifo = store.paths.reports / f"{first.loop_id}.html"
    os.mkfifo(fifo)
    (store.paths.reports / f"{second.loop_id}.html").mkdir()
    banner = finish(store, first)
    finish(store, second)
    assert banner.startswith("Ralph loop done at iteration 2/8.\n")
    assert [loop.outcome for loop in store.history()] == ["success", "success"]
    assert fifo.is_fifo() and (store.paths.reports / f"{second.loop_id}.html").is_dir()
    assert log_lines(store) == [
        f"the HTML report {store.paths.reports}/{loop.loop_id}.html of loop {loop.loop_id} "
        "was not written: something that is not a regular file is there; it was left alone"
        for loop in (first, second)]


def test_a_report_folder_that_cannot_be_written_still_ends_the_loop(tmp_path: Path) -> None:
    store = store_for(tmp_path)
    store.paths.base.mkdir(parents=True)
    os.mkfifo(store.paths.reports)  # not a folder: nothing can be written in it
    state = ended(tmp_path)
    store.save(replace_outcome(state))
    banner = finish(store, state)
    archived = only_archived(tmp_path)
    assert (archived.outcome, archived.report_path) == ("success", "")
    assert store.load(SESSION) is None
    assert banner.endswith(
        "\nReport: not written (its folder is not a folder); the ended loop's record is "
        f".claude/ralph/history/{state.loop_id}.json")
    assert store.paths.reports.is_fifo()
    assert log_lines(store) == [
        f"the report of loop {state.loop_id} was not written to {store.paths.reports}/"
        f"{state.loop_id}.md: its folder is not a folder"]


def test_a_failing_notification_is_logged_and_changes_nothing(tmp_path: Path) -> None:
    store = store_for(tmp_path)
    with Webhook(status=503) as hook:
        state = ended(tmp_path, notify=Notify(targets=[hook.url + "/x"],
                                              commands=["no-such-notifier-xyz"]))
        banner = finish(store, state)
        posted = hook.wait_for(1)
    archived = only_archived(tmp_path)
    assert archived.outcome == "success" and archived.notify == state.notify
    assert banner.startswith("Ralph loop done at iteration 2/8.\nFiles modified: 0")
    assert [received.json()["outcome"] for received in posted] == ["success"]
    assert log_lines(store) == [
        f"notify --notify-cmd no-such-notifier-xyz of loop {state.loop_id}: could not start "
        "(No such file or directory)",
        f"notify {hook.url}/... of loop {state.loop_id}: answered HTTP 503"]


def test_the_command_gets_the_ended_loop_s_record_and_the_post_its_summary(
        tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    command = tmp_path / "record.py"
    command.write_text(f"#!{sys.executable}\nimport sys\nopen({str(seen)!r}, 'w')"
                       ".write(sys.stdin.read())\n")
    command.chmod(0o755)
    store = store_for(tmp_path)
    with Webhook() as hook:
        state = ended(tmp_path, notify=Notify(targets=[hook.url + "/x"],
                                              commands=[str(command)]),
                      started_at=T1 - timedelta(minutes=5))
        finish(store, state)
        [posted] = hook.wait_for(1)
    archived = only_archived(tmp_path)
    record = json.loads(seen.read_text())
    assert record["loop_id"] == archived.loop_id and record["outcome"] == "success"
    assert record["report_path"] == archived.report_path
    assert record["spend"]["total"] == {"tokens": 0, "cache_read_tokens": 0,
                                        "estimated_cost_usd": 0.0, "partial": False}
    report = f".claude/ralph/reports/{archived.loop_id}.md"
    line = ("Ralph loop success (unverified) after 2/8 iterations in 5 min 00 s, 0 tokens, "
            f"~$0.00 est: Make the tests pass (report: {report})")
    assert posted.json() == {
        "text": line, "content": line, "outcome": "success", "title": "success (unverified)",
        "verified": None, "task": "Make the tests pass", "iterations": 2,
        "max_iterations": 8, "duration_seconds": 300,
        "spend": {"tokens": 0, "cache_read_tokens": 0, "estimated_cost_usd": 0.0,
                  "estimated": True},
        "report": report, "html_report": report.replace(".md", ".html"),
        "loop_id": archived.loop_id, "project": str(tmp_path), "headless": False,
        "end_message": "Ralph loop done at iteration 2/8.",
    }
    assert log_lines(store) == []


def test_a_stop_that_continues_imports_none_of_it() -> None:
    import subprocess
    import sys

    from tests.e2e.harness import SCRIPTS

    code = (f"import sys; sys.path.insert(0, {str(SCRIPTS)!r}); import finesse.hooks.stop; "
            "print(sorted(name for name in sys.modules if name.split('.')[0] == 'rich' or "
            "name.startswith(('finesse.loop.afterwards', 'finesse.loop.html', "
            "'finesse.loop.notify', 'finesse.loop.watch', 'urllib.request', 'http.client'))))")
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout == "[]\n"
