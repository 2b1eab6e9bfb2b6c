"""What follows a graph run's end, once its Markdown report is written: its HTML report
beside it (unless the config says `"no_html": true`) and one notification for the whole run
(its sub-workflows tell nobody themselves). Like a loop's end (`finesse.loop.afterwards`),
nothing here fails the run or changes its exit code: each problem is logged."""

from __future__ import annotations

from pathlib import Path

from finesse.headless.graph import GraphRun
from finesse.headless.graph_html import (
    graph_body,
    graph_html_path,
    graph_record,
    render_graph_html,
)
from finesse.loop.html.files import write_html
from finesse.loop.project_config import html_wanted
from finesse.models import Notify
from finesse.state.paths import StatePaths
from finesse.state.store import LoopStore
from finesse.support.files import shown_name


def after_graph(graph: GraphRun, task: str, notify: Notify | None) -> Path | None:
    """Write the graph's HTML report and send its notification; the page, or None."""
    store = LoopStore(StatePaths(graph.root))
    html: Path | None = None
    if html_wanted(graph.root):
        target = graph_html_path(graph)
        problem = write_html(target, render_graph_html(graph, task))
        if problem:
            store.log(f"the HTML report {shown_name(str(target))} of graph {graph.session} "
                      f"was not written: {problem}")
        else:
            html = target
    if notify is not None:
        from finesse.loop.notify.send import deliver

        for delivery in deliver(notify, graph_body(graph, task, html),
                                graph_record(graph, task), cwd=graph.root):
            if delivery.problem:
                store.log(f"notify {delivery.target} of graph {graph.session}: "
                          f"{delivery.problem}")
    return html
