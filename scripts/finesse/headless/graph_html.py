"""A graph run's report as a page: the task and the verdict at the top, then the waves as
columns, one card per sub-workflow with its outcome, iterations, tokens and merge commit,
and a link to its own page. Built from the same `GraphRun` as the Markdown report; every
string through `finesse.loop.html.page.text`. Also what a graph run's notification says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from finesse.headless.graph import MERGED_BEFORE, GraphRun, Row
from finesse.headless.graph_report import as_dict, kept_dir, report_path, verdict
from finesse.loop.html.files import html_path
from finesse.loop.html.page import document, text
from finesse.recording import excerpt
from finesse.spend import totals


def _kind(row: Row) -> str:
    if row.succeeded:
        return "success"
    if row.loop is not None and row.loop.outcome in ("failure", "blocked", "error"):
        return "blocked"
    if row.outcome == "error":
        return "blocked"
    return "other"


def _card(graph: GraphRun, row: Row) -> str:
    made = len(row.loop.iterations) if row.loop is not None else 0
    cap = f"/{row.loop.max_iterations}" if row.loop is not None else ""
    merge = text(row.merge_commit[:12]) if row.merge_commit else "-"
    lines = [f"<dt>outcome</dt><dd>{text(row.outcome)}</dd>",
             f"<dt>iterations</dt><dd>{made}{cap}</dd>",
             f"<dt>tokens</dt><dd>{row.tokens:,}</dd>",
             f"<dt>merge commit</dt><dd><code>{merge}</code></dd>",
             f"<dt>branch</dt><dd><code>{text(row.branch)}</code></dd>"]
    if row.note:
        lines.append(f"<dt>note</dt><dd>{text(row.note)}</dd>")
    link = ""
    if row.loop is not None and (kept_dir(graph) / f"{row.loop.loop_id}.html").is_file():
        link = (f'<p><a href="../graphs/{text(kept_dir(graph).name)}/'
                f'{text(row.loop.loop_id)}.html">its report</a></p>')
    return (f'<div class="card k-{_kind(row)}" data-workflow="{text(row.name)}">'
            f"<h4>{text(row.name)}</h4><dl class=\"facts\">{''.join(lines)}</dl>{link}</div>")


def render_graph_html(graph: GraphRun, task: str) -> str:
    ended = graph.ended_at or graph.started_at
    seconds = max(0, int((ended - graph.started_at).total_seconds()))
    waves = sorted({row.wave for row in graph.rows})
    columns = "".join(
        f'<section class="wave" data-wave="{wave}"><h3>Wave {wave}</h3>'
        + "".join(_card(graph, row) for row in graph.rows if row.wave == wave) + "</section>"
        for wave in waves)
    good = not graph.stopped and all(row.succeeded for row in graph.rows)
    facts = [("Result", f"{verdict(graph)} (exit code {graph.exit_code})"),
             ("Branch", f"{graph.start.short}, from {graph.start.commit[:12]}"),
             ("Duration", f"{seconds // 60} min {seconds % 60:02d} s"),
             ("Sub-workflows", str(len(graph.rows)))]
    if graph.conflicts:
        facts.append(("Conflicting files", ", ".join(graph.conflicts)))
    said = "succeeded" if good else "stopped" if graph.stopped else "partly succeeded"
    body = (f'<h1>Ralph graph report <span class="badge k-{"success" if good else "blocked"}"'
            f' id="outcome">{text(said)}</span></h1>'
            f'<p class="task" id="task">{text(task)}</p><dl class="facts">'
            + "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in facts)
            + f'</dl><h2>Waves</h2><div class="waves">{columns}</div>')
    return document(f"Ralph graph {graph.session}", body)


def graph_html_path(graph: GraphRun) -> Path:
    return html_path(report_path(graph))


def graph_body(graph: GraphRun, task: str, html: Path | None) -> dict[str, Any]:
    """What a graph run's `--notify URL` receives: the same keys as a loop's."""
    loops = [row.loop for row in graph.rows if row.loop is not None]
    spent = [totals(loop) for loop in loops]
    ended = graph.ended_at or graph.started_at
    seconds = max(0, int((ended - graph.started_at).total_seconds()))
    outcome = ("success" if not graph.stopped and all(row.succeeded for row in graph.rows)
               else "stopped" if graph.stopped else "partial")
    merged = sum(1 for row in graph.rows if row.merge_commit or row.outcome == MERGED_BEFORE)
    report = str(report_path(graph).relative_to(graph.root))
    line = (f"Ralph graph {graph.session}: {verdict(graph)}; {merged}/{len(graph.rows)} "
            f"sub-workflow(s) merged in {seconds // 60} min {seconds % 60:02d} s, "
            f"~${sum(s.cost for s in spent):,.2f} est: {excerpt(task, 200)} "
            f"(report: {report})").replace("\n", " ")[:1900]
    return {
        "text": line, "content": line, "outcome": outcome, "title": verdict(graph),
        "verified": None, "task": excerpt(task, 200),
        "iterations": sum(len(loop.iterations) for loop in loops),
        "max_iterations": sum(loop.max_iterations for loop in loops),
        "duration_seconds": seconds,
        "spend": {"tokens": sum(s.billed_tokens for s in spent),
                  "cache_read_tokens": sum(s.cache_read for s in spent),
                  "estimated_cost_usd": round(sum(s.cost for s in spent), 6),
                  "estimated": True},
        "report": report,
        "html_report": str(html.relative_to(graph.root)) if html is not None else None,
        "loop_id": graph.session, "project": str(graph.root), "headless": True,
        "end_message": verdict(graph), "exit_code": graph.exit_code,
    }


def graph_record(graph: GraphRun, task: str) -> dict[str, Any]:
    """What a graph run's `--notify-cmd` reads: its `--json` report."""
    return as_dict(graph, task)
