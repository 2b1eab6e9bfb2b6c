"""A graph run's end: its HTML report with the waves as columns and a card per
sub-workflow, and one notification for the whole run."""

from __future__ import annotations

from pathlib import Path

from finesse.headless.graph_end import after_graph
from finesse.headless.graph_html import graph_html_path
from finesse.models import Notify
from tests.helpers.pages import outside_references, parse
from tests.helpers.webhook import Webhook
from tests.unit.headless.test_graph import THREE, FakeLoops, plan, run


def test_the_page_has_a_column_per_wave_and_a_card_per_sub_workflow(git_repo: Path) -> None:
    loaded = plan(git_repo, *THREE)
    done = run(git_repo, loaded, FakeLoops(outcomes={"beta": "failure"}))
    with Webhook() as hook:
        page = after_graph(done, loaded.task, Notify(targets=[hook.url + "/graph"]))
        [posted] = hook.wait_for(1)
    assert page == graph_html_path(done) and page.is_file()
    parsed = parse(page.read_text(encoding="utf-8"))
    assert outside_references(parsed) == []
    columns = [(tag, attrs) for tag, attrs in parsed.elements
               if "data-wave" in attrs or "data-workflow" in attrs]
    alpha = next(row for row in done.rows if row.name == "alpha")
    assert alpha.merge_commit is not None
    assert [(attrs.get("data-wave") or attrs["data-workflow"], attrs["class"])
            for _, attrs in columns] == [
        ("1", "wave"), ("alpha", "card k-success"), ("beta", "card k-blocked"),
        ("2", "wave"), ("gamma", "card k-other")]
    assert alpha.merge_commit[:12] in parsed.text and loaded.task in parsed.text
    body = posted.json()
    assert (body["outcome"], body["iterations"], body["html_report"]) == (
        "partial", 2, str(page.relative_to(git_repo)))
    assert body["text"].startswith(
        f"Ralph graph {done.session}: ran every wave; some sub-workflows did not succeed "
        "(below); 1/3 sub-workflow(s) merged in ")


def test_no_html_in_the_config_and_nobody_to_tell(git_repo: Path) -> None:
    (git_repo / ".finesse").mkdir()
    (git_repo / ".finesse" / "config.json").write_text('{"no_html": true}')
    loaded = plan(git_repo, *THREE)
    done = run(git_repo, loaded, FakeLoops())
    assert after_graph(done, loaded.task, None) is None
    assert not graph_html_path(done).exists()
