"""The one report of a graph run: a row per sub-workflow (outcome, iterations, tokens,
branch, merge commit), why the run stopped, the conflicting files, and where each
sub-workflow's own report was kept. As Markdown for people, as a dict for `--json`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from finesse.headless.graph import GraphRun, Row
from finesse.support.files import shown_name


def graph_id(graph: GraphRun) -> str:
    return f"{graph.started_at:%Y%m%dT%H%M%SZ}-{graph.session}"


def kept_dir(graph: GraphRun) -> Path:
    """Where the sub-workflows' reports and records are kept (`.claude/ralph/graphs/ID/`)."""
    return graph.root / ".claude" / "ralph" / "graphs" / graph_id(graph)


def report_path(graph: GraphRun) -> Path:
    return graph.root / ".claude" / "ralph" / "reports" / f"graph-{graph_id(graph)}.md"


def _relative(graph: GraphRun, path: Path) -> str:
    try:
        return str(path.relative_to(graph.root))
    except ValueError:
        return str(path)


def _loop_report(graph: GraphRun, row: Row) -> str:
    if row.loop is None:
        return ""
    kept = kept_dir(graph) / f"{row.loop.loop_id}.md"
    return _relative(graph, kept) if kept.is_file() else ""


def verdict(graph: GraphRun) -> str:
    if graph.stopped:
        return f"stopped: {graph.stopped}"
    if all(row.succeeded for row in graph.rows):
        return "every sub-workflow succeeded and was merged"
    return "ran every wave; some sub-workflows did not succeed (below)"


def render(graph: GraphRun, task: str) -> str:
    ended = graph.ended_at or graph.started_at
    seconds = max(0, int((ended - graph.started_at).total_seconds()))
    lines = [f"# Ralph graph report: {graph.session}", "",
             f"- Task: {task}",
             f"- Plan: `{shown_name(_relative(graph, graph.folder))}`",
             f"- Branch: `{graph.start.short}`, from `{graph.start.commit[:12]}`",
             f"- Duration: {seconds // 60} min {seconds % 60:02d} s",
             f"- Result: {verdict(graph)} (exit code {graph.exit_code})"]
    if graph.conflicts:
        lines.append("- Conflicting files: " + ", ".join(f"`{shown_name(name)}`"
                                                         for name in graph.conflicts))
    lines += ["", "| wave | sub-workflow | outcome | iterations | tokens | branch | "
              "merge commit |", "| ---: | --- | --- | ---: | ---: | --- | --- |"]
    for row in graph.rows:
        made = len(row.loop.iterations) if row.loop is not None else 0
        merge = f"`{row.merge_commit[:12]}`" if row.merge_commit else "-"
        lines.append(f"| {row.wave} | {row.name} | {row.outcome} | {made} | {row.tokens:,} | "
                     f"`{row.branch}` | {merge} |")
    lines += ["", "## Notes", ""]
    lines += [f"- {row.name}: {row.note}" for row in graph.rows if row.note] or ["- none"]
    kept = [(row.name, _loop_report(graph, row)) for row in graph.rows]
    lines += ["", "## Sub-workflow reports", ""]
    lines += [f"- {name}: `{path}`" for name, path in kept if path] or ["- none"]
    if graph.stopped:
        lines += ["", "## What now", "",
                  "Branches are left as they are. Resolve what stopped the run (merge a "
                  "conflicting branch by hand, or fix what failed), then run the same "
                  "`ralph run --graph` again: branches already merged count as done. "
                  "Worktrees of sub-workflows that were not merged stay for inspection; "
                  "remove one with `git worktree remove PATH`."]
    return "\n".join(lines) + "\n"


def as_dict(graph: GraphRun, task: str) -> dict[str, Any]:
    return {
        "graph": graph.session,
        "task": task,
        "folder": _relative(graph, graph.folder),
        "branch": graph.start.short,
        "start_commit": graph.start.commit,
        "started_at": graph.started_at.isoformat(),
        "ended_at": graph.ended_at.isoformat() if graph.ended_at else None,
        "stopped": graph.stopped,
        "conflicts": graph.conflicts,
        "exit_code": graph.exit_code,
        "report": _relative(graph, report_path(graph)),
        "workflows": [{
            "name": row.name, "wave": row.wave, "depends_on": list(row.depends_on),
            "outcome": row.outcome,
            "verified": row.loop.verified if row.loop is not None else None,
            "iterations": len(row.loop.iterations) if row.loop is not None else 0,
            "tokens": row.tokens, "branch": row.branch,
            "worktree": _relative(graph, Path(row.worktree)),
            "merge_commit": row.merge_commit, "note": row.note,
            "loop_id": row.loop.loop_id if row.loop is not None else None,
            "report": _loop_report(graph, row) or None,
        } for row in graph.rows],
    }
