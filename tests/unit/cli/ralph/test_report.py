"""`ralph report`: the report of an ended loop, or its whole state as JSON; exit codes,
stdout and stderr whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finesse.models import IterationRecord
from finesse.results import ModelUsage
from finesse.schema import to_dict
from finesse.spend import PRICES_DATED
from finesse.state.store import LoopStore
from tests.helpers.cli import ended_loop, run
from tests.helpers.states import T0, make_state

pytestmark = pytest.mark.usefixtures("ralph_clock")


def test_report_prints_the_latest_report(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    ended_loop(store, root, "aaa111", 10, report_text="# older\n")
    ended_loop(store, root, "bbb222", 30, report_text="# latest ✓\n\n- Status: limit\n")
    ended_loop(store, root, "ccc333", 20, report_text="# middle\n")
    assert run(capsys, "report", "--project", str(root)) == (
        0, "# latest ✓\n\n- Status: limit\n", ""
    )


def test_report_of_a_given_loop_by_its_id_or_a_prefix(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    older = ended_loop(store, root, "aaa111", 10, report_text="# older\n")
    ended_loop(store, root, "bbb222", 30, report_text="# latest\n")
    assert run(capsys, "report", "--project", str(root), older) == (0, "# older\n", "")
    assert run(capsys, "report", "--project", str(root), "20261130T0710") == (
        0, "# older\n", ""
    )


def test_report_json_is_the_whole_ended_state(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    loop_id = ended_loop(store, root, "aaa111", 10, outcome="blocked", blocker="no API key",
                         learnings=["the API needs a key"])
    code, out, err = run(capsys, "report", "--json", "--project", str(root))
    assert (code, err) == (0, "")
    [ended] = store.history()
    record = json.loads(out)
    spend = record.pop("spend")
    assert record == to_dict(ended)
    assert (ended.loop_id, ended.outcome, ended.blocker, ended.learnings) == (
        loop_id, "blocked", "no API key", ["the API needs a key"]
    )
    assert spend == {
        "estimated": True, "prices_dated": PRICES_DATED, "iterations": [],
        "total": {"tokens": 0, "cache_read_tokens": 0, "estimated_cost_usd": 0.0,
                  "partial": False},
        "cost_to_green_usd": None,
        "rejected_claims": {"count": 0, "estimated_cost_usd": 0.0},
    }


def test_report_json_has_the_spend_of_the_report(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    def made(number: int, result: str, tokens: int, cost: float) -> IterationRecord:
        return IterationRecord(number=number, started_at=T0, ended_at=T0, result=result,
                               usage=[ModelUsage("claude-sonnet-4-5", tokens, 0, 0, 7)],
                               cost=cost)

    ended_loop(store, root, "aaa111", 10, outcome="success", verified=True, iteration=3,
               iterations=[made(1, "continue", 1000, 0.25), made(2, "rejected", 2000, 0.5),
                           made(3, "success", 3000, 0.75)])
    code, out, err = run(capsys, "report", "--json", "--project", str(root))
    assert (code, err) == (0, "")
    spend = json.loads(out)["spend"]
    assert spend["iterations"] == [
        {"iteration": 1, "result": "continue", "tokens": 1000, "cache_read_tokens": 7,
         "estimated_cost_usd": 0.25},
        {"iteration": 2, "result": "rejected", "tokens": 2000, "cache_read_tokens": 7,
         "estimated_cost_usd": 0.5},
        {"iteration": 3, "result": "success", "tokens": 3000, "cache_read_tokens": 7,
         "estimated_cost_usd": 0.75},
    ]
    assert spend["total"] == {"tokens": 6000, "cache_read_tokens": 21,
                              "estimated_cost_usd": 1.5, "partial": False}
    assert (spend["cost_to_green_usd"], spend["rejected_claims"]) == (
        1.5, {"count": 1, "estimated_cost_usd": 0.5})


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], (1, "", "ralph report: no ended Ralph loop in {root}\n")),
        (["nope"], (1, "", "ralph report: no ended Ralph loop 'nope' in {root}\n")),
    ],
)
def test_report_without_ended_loops(capsys: pytest.CaptureFixture[str], root: Path,
                                    store: LoopStore, argv: list[str],
                                    expected: tuple[int, str, str]) -> None:
    store.save(make_state(root))  # an active loop has no report yet
    code, out, err = expected
    assert run(capsys, "report", "--project", str(root), *argv) == (
        code, out, err.format(root=root)
    )


def test_report_with_an_ambiguous_prefix(capsys: pytest.CaptureFixture[str], root: Path,
                                         store: LoopStore) -> None:
    ended_loop(store, root, "aaa111", 10, report_text="# a\n")
    ended_loop(store, root, "bbb222", 30, report_text="# b\n")
    assert run(capsys, "report", "--project", str(root), "20261130T07") == (
        2, "",
        "ralph report: 2 loops start with '20261130T07': give more of the id "
        "(see 'ralph report --help')\n",
    )


def test_report_file_missing(capsys: pytest.CaptureFixture[str], root: Path,
                             store: LoopStore) -> None:
    loop_id = ended_loop(store, root, "aaa111", 10)
    assert run(capsys, "report", "--project", str(root)) == (
        1, "", f"ralph report: the report of {loop_id} is missing; try --json\n"
    )


def test_report_html_prints_the_page_the_end_wrote(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    loop_id = ended_loop(store, root, "aaa111", 10, report_text="# report\n")
    page = store.paths.reports / f"{loop_id}.html"
    page.write_text("<!DOCTYPE html><p>as written at the end</p>\n")
    assert run(capsys, "report", "--html", "--project", str(root)) == (0, f"{page}\n", "")
    assert page.read_text() == "<!DOCTYPE html><p>as written at the end</p>\n"


def test_report_html_writes_a_missing_page_and_says_it_was_made_later(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    from tests.helpers.pages import parse

    loop_id = ended_loop(store, root, "aaa111", 10, report_text="# report\n")
    assert run(capsys, "report", "--project", str(root), "--html", loop_id) == (
        0, f"{store.paths.reports / (loop_id + '.html')}\n", "")
    parsed = parse((store.paths.reports / f"{loop_id}.html").read_text(encoding="utf-8"))
    assert "Written after the loop ended: the files changed are as the project is now." in (
        parsed.text)
    assert parsed.by_id("outcome") == ("span", {"class": "badge k-other", "id": "outcome"})


def test_report_html_and_json_do_not_mix(
    capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore
) -> None:
    ended_loop(store, root, "aaa111", 10, report_text="# report\n")
    assert run(capsys, "report", "--html", "--json", "--project", str(root)) == (
        2, "", "ralph report: give --json or --html, not both (see 'ralph report --help')\n")


def test_a_report_holding_bytes_that_are_not_utf8_is_printed_as_it_is(
    root: Path, store: LoopStore
) -> None:
    """The report keeps the bytes of a name that is not UTF-8 (a learning or a file name
    with U+DC80, stored as the byte 0x80): `ralph report` printed a UnicodeDecodeError
    traceback instead; it prints the file byte for byte, as `cat` would."""
    from tests.helpers.launch import Run, run_ralph

    loop_id = ended_loop(store, root, "aaa111", 10, report_text="x")
    (store.paths.reports / f"{loop_id}.md").write_bytes(b"# report\n\n- Learning: l\x80\n")
    assert run_ralph(root, "report") == Run(0, "# report\n\n- Learning: l\\x80\n", "")
