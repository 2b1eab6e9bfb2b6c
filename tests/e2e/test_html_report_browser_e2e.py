"""The HTML report in a real headless Chromium: a loop ended through the plugin's own end
(a hostile task, a reply and command output holding markup, file names that are not UTF-8
or hold markup), then opened in the light and the dark colour scheme. The DOM the browser
built has one timeline mark per iteration and the task as text, no element the loop's text
could have injected; the screenshots are not blank and differ by scheme; the page asks for
nothing but itself (a leaky control page shows the method sees what a page asks for)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from finesse.loop.lifecycle import finish
from finesse.models import IterationRecord
from finesse.results import ModelUsage
from finesse.state.store import LoopStore
from tests.e2e.browser import Recorder, colours, render
from tests.helpers.pages import parse
from tests.helpers.repo import head
from tests.helpers.states import T0, command_result, make_state, only_archived

pytestmark = pytest.mark.e2e

TASK = ('Fix </p><script>document.title="pwned"</script><img src="http://evil.test/x.png" '
        "onerror=alert(1)> & <link rel=stylesheet href=https://fonts.test/f.css> \"quoted\"")


def ended_loop(project: Path, store: LoopStore) -> Path:
    """A loop of five iterations ended by `finish`; its HTML report."""
    os.makedirs(project / "src", exist_ok=True)
    base = head(project)
    (project / "src" / "slug.py").write_text("def slug(): ...\n")
    with open(os.fsencode(project / "src") + b"/caf\xe9.txt", "w") as latin1:
        latin1.write("é\n")
    (project / "src" / '<img src="http:x" onerror=alert(2)>.txt').write_text("x\n")
    red = command_result("pytest -q", 1, "FAILED\n")
    green = command_result("pytest -q", 0, "3 passed <script>alert(3)</script>\n")
    results = ["rejected", "continue", "continue", "rejected", "success"]
    iterations = [IterationRecord(
        number=n, started_at=T0 + timedelta(minutes=n - 1), ended_at=T0 + timedelta(minutes=n),
        result=result, verification=[green if result == "success" else red] if result in (
            "rejected", "success") else [],
        approach=f"step {n} <iframe src=//evil.test>", learning=f"learned <b>{n}</b>",
        usage=[ModelUsage("claude-sonnet-4-5", 9000 + 1000 * n, 800, 0, 40_000)],
        cost=0.05 * n) for n, result in enumerate(results, 1)]
    state = make_state(project, prompt=TASK, iteration=5, iterations=iterations,
                       verify=["pytest -q"], last_verification=[green], baseline_commit=base,
                       learnings=[f"learned <b>{n}</b>" for n in range(1, 6)],
                       outcome="success", verified=True, ended_at=T0 + timedelta(minutes=5),
                       end_message="Ralph loop done at iteration 5/8 and verified.")
    finish(store, state)
    return Path(only_archived(project).report_path).with_suffix(".html")


def test_the_report_renders_in_chromium_with_a_mark_per_iteration_and_asks_for_nothing(
        git_repo: Path, store: LoopStore, tmp_path: Path) -> None:
    page = ended_loop(git_repo, store).read_bytes()
    leaky = (b'<html><body><img src="http://leak.test/x.png">'
             b'<link rel=stylesheet href="https://fonts.test/f.css">leak</body></html>')
    with Recorder({"/report.html": page, "/leaky.html": leaky}) as served:
        url = served.origin + "/report.html"
        light = render(url, tmp_path / "light.png", tmp_path / "profile-light", served.origin)
        dark = render(url, tmp_path / "dark.png", tmp_path / "profile-dark", served.origin,
                      dark=True)
        control = render(served.origin + "/leaky.html", tmp_path / "leaky.png",
                         tmp_path / "profile-leaky", served.origin)
    assert light.requests == dark.requests == [url]
    assert control.requests == [served.origin + "/leaky.html", "http://leak.test/x.png",
                                "https://fonts.test/f.css", served.origin + "/favicon.ico"]
    dom = parse(light.dom)
    marks = dom.with_attribute("data-iteration")
    assert [(mark["data-iteration"], mark["data-result"]) for mark in marks] == [
        ("1", "rejected"), ("2", "continue"), ("3", "continue"), ("4", "rejected"),
        ("5", "success")]
    assert dom.by_id("task")[0] == "p" and TASK in dom.text
    assert {"script", "img", "iframe"} & dom.tags() == set()
    assert [tag for tag, attrs in dom.elements if tag == "link"] == ["link"]  # the icon
    assert "src/caf\\udce9.txt" in dom.text
    assert 'src/<img src="http:x" onerror=alert(2)>.txt' in dom.text
    assert "$ pytest -q\n3 passed <script>alert(3)</script>" in dom.text
    assert [mark["title"] for mark in marks][:2] == [
        "iteration 1: rejected; verification red: pytest -q (exit 1)",
        "iteration 2: continue; no check run"]
    assert dom.elements[0] == ("html", {"lang": "en"})
    backgrounds = []
    for shot in (light.screenshot, dark.screenshot):
        seen = colours(shot)
        background, most = max(seen.items(), key=lambda item: item[1])
        assert len(seen) > 50 and most < 0.95 * sum(seen.values()), (shot, len(seen))
        backgrounds.append(background)
    light_bg, dark_bg = backgrounds
    assert sum(light_bg) > 600 and sum(dark_bg) < 150, (light_bg, dark_bg)
