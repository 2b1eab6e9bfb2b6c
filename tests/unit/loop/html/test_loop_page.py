"""The HTML report of one loop: every string from the loop escaped (a prompt, a reply, a
command's output and a file name are hostile), one timeline mark per iteration coloured by
its result, the spend chart, the learnings and files; nothing on the page can load
anything."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from finesse.loop.final_report import EndFacts
from finesse.loop.html.loop_page import render_html
from finesse.loop.html.page import CSP
from finesse.models import IterationRecord
from finesse.results import ModelUsage
from finesse.support.git import LineChanges
from tests.helpers.pages import outside_references, parse
from tests.helpers.states import T0, command_result, make_state

HOSTILE = ('Fix </p><script>alert("x")</script><img src="http://evil.example/x.png" '
           "onerror=alert(1)> & <style>body{display:none}</style> \ud800 \x1b[31m")


def iteration(number: int, result: str, tokens: int = 0, cost: float = 0.0, *,
              gate_action: str = "", **fields: object) -> IterationRecord:
    usage = [ModelUsage("claude-sonnet-4-5", tokens, 0, 0, 0)] if tokens else []
    return IterationRecord(number=number, started_at=T0 + timedelta(minutes=number - 1),
                           ended_at=T0 + timedelta(minutes=number), result=result,
                           usage=usage, cost=cost, gate_action=gate_action, **fields)  # type: ignore[arg-type]


def facts(files: list[str]) -> EndFacts:
    return EndFacts(files=files, lines=LineChanges(41, 3, 0), is_repository=True,
                    state_file=".claude/ralph/history/L.json", scope="/p")


def test_a_hostile_task_reply_output_and_file_names_stay_text(tmp_path: Path) -> None:
    red = command_result('pytest -q "<script>"', 1, "FAILED <script>alert(2)</script>\n")
    state = make_state(
        tmp_path, prompt=HOSTILE, outcome="blocked", iteration=2, verify=['pytest -q "<script>"'],
        last_verification=[red], ended_at=T0 + timedelta(minutes=2),
        end_message="blocked: <b>it</b>", blocker="<iframe src=x></iframe>",
        learnings=["<svg onload=alert(3)>"],
        iterations=[iteration(1, "rejected", verification=[red],
                              approach='<a href="http://evil.example/">go</a>'),
                    iteration(2, "blocked", learning="<svg onload=alert(3)>")])
    page = render_html(state, facts(["src/caf\udce9.txt", "<b>.txt", "tab\tname"]))
    page.encode("utf-8")  # strict: no lone surrogate reaches the file
    parsed = parse(page)
    assert parsed.tags() == {"html", "head", "meta", "link", "title", "style", "body", "main",
                             "h1", "span", "p", "dl", "dt", "dd", "h2", "pre", "div", "a",
                             "table", "thead", "tr", "th", "tbody", "td", "ul", "li", "code"}
    assert outside_references(parsed) == []
    assert [attrs for attrs in parsed.with_attribute("onerror")] == []
    assert [attrs for attrs in parsed.with_attribute("onload")] == []
    shown = HOSTILE.replace("\ud800", "\ufffd").replace("\x1b", "\ufffd")
    assert shown in parsed.text
    assert "FAILED <script>alert(2)</script>" in parsed.text
    assert '<a href="http://evil.example/">go</a>' in parsed.text
    assert "src/caf\\udce9.txt" in parsed.text and "<b>.txt" in parsed.text
    assert "'tab\\tname'" in parsed.text
    assert ("meta", {"http-equiv": "Content-Security-Policy", "content": CSP}) in (
        parsed.elements)


def test_one_mark_per_iteration_coloured_by_its_result(tmp_path: Path) -> None:
    results = [("rejected", ""), ("continue", ""), ("continue", "repair"),
               ("continue", "reverted"), ("limit", ""), ("success", ""), ("blocked", "")]
    state = make_state(tmp_path, outcome="success", verified=True, iteration=7,
                       ended_at=T0 + timedelta(minutes=7),
                       iterations=[iteration(n, result, gate_action=action)
                                   for n, (result, action) in enumerate(results, 1)])
    marks = parse(render_html(state, facts([]))).with_attribute("data-iteration")
    assert [(mark["data-iteration"], mark["data-result"], mark["class"], mark["href"])
            for mark in marks] == [
        ("1", "rejected", "mark k-rejected", "#iteration-1"),
        ("2", "continue", "mark k-continue", "#iteration-2"),
        ("3", "continue", "mark k-repair", "#iteration-3"),
        ("4", "continue", "mark k-reverted", "#iteration-4"),
        ("5", "limit", "mark k-other", "#iteration-5"),
        ("6", "success", "mark k-success", "#iteration-6"),
        ("7", "blocked", "mark k-blocked", "#iteration-7"),
    ]


def test_each_mark_and_row_says_the_iteration_s_checks(tmp_path: Path) -> None:
    green, red = command_result("pytest -q"), command_result("pytest -q", 2)
    gate_red = command_result("make check", None, timed_out=True)
    state = make_state(tmp_path, outcome="limit", iteration=3, ended_at=T0 + timedelta(minutes=3),
                       iterations=[
                           iteration(1, "rejected", verification=[red]),
                           iteration(2, "continue", gate=[gate_red], gate_action="repair"),
                           iteration(3, "limit", gate=[command_result("make check")],
                                     gate_action="committed", commit="a1b2c3d4e5f6a7b8",
                                     verification=[green])])
    parsed = parse(render_html(state, facts([])))
    assert [mark["title"] for mark in parsed.with_attribute("data-iteration")] == [
        "iteration 1: rejected; verification red: pytest -q (exit 2)",
        "iteration 2: continue; gate red: make check (timed out), repair",
        "iteration 3: limit; verification green; gate green, committed a1b2c3d4e5f6",
    ]


def test_the_spend_chart_has_a_bar_per_iteration_and_the_cost_line(tmp_path: Path) -> None:
    state = make_state(tmp_path, outcome="success", verified=True, iteration=3,
                       ended_at=T0 + timedelta(minutes=3),
                       iterations=[iteration(1, "rejected", 18_400, 0.13),
                                   iteration(2, "continue", 9_200, 0.08),
                                   iteration(3, "success", 0, 0.0)])
    parsed = parse(render_html(state, facts([])))
    bars = [attrs for tag, attrs in parsed.elements if tag == "rect"]
    assert [(bar["class"], bar["height"]) for bar in bars] == [
        ("bar", "212.0"), ("bar", "106.0"), ("bar", "0.0")]
    [line] = [attrs for tag, attrs in parsed.elements if tag == "polyline"]
    # Three columns of 772 / 3 px from x=64; the line at 0.13 / 0.21 of the 212 px height,
    # then at the top: the cost does not grow after iteration 2.
    assert line == {"class": "cost", "points": "192.7,96.8 450.0,16.0 707.3,16.0"}
    assert "iteration 1: 18,400 tokens, $0.13 estimated" in parsed.text


def test_no_usage_no_chart_and_the_learnings_and_files_are_listed(tmp_path: Path) -> None:
    state = make_state(tmp_path, outcome="quiesced", iteration=1, ended_at=T0,
                       learnings=["x is flaky", "y needs a fixture"],
                       iterations=[iteration(1, "quiesced")])
    parsed = parse(render_html(state, facts(["src/a.py", "README.md"])))
    assert "No token usage was read for this loop." in parsed.text
    assert [tag for tag, _ in parsed.elements if tag in ("svg", "rect")] == []
    items = parsed.text.split("Learnings")[1]
    assert "x is flakyy needs a fixture" in items
    assert "src/a.pyREADME.md" in items.split("Files changed")[1]
