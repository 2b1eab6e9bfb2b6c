"""`ralph run --graph DIR`: a decomposed plan's waves, headless (`finesse.headless.graph`).
Plain lines, each sub-workflow's prefixed with its name, whatever the output is: several
loops at once do not fit one live line."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import click

from finesse.authoring.workflows.folder import load_execution_graph
from finesse.cli.ralph.running import Lines
from finesse.headless import graph_report
from finesse.headless.child import Cancel
from finesse.headless.graph import prepare, run_graph
from finesse.headless.interrupts import cancel_on_signals
from finesse.headless.plan_args import check_plan_words
from finesse.headless.subworkflow import headless_runner
from finesse.loop.notify.settings import project_notify
from finesse.models import HeadlessRun
from finesse.state.store import LoopStore
from finesse.support.writes import write_atomic


def run_graph_command(store: LoopStore, folder: Path, words: list[str], settings: HeadlessRun, *,
              jobs: int, as_json: bool) -> int:
    root = store.paths.root
    parsed = check_plan_words(words, runner="--graph")
    notify = project_notify(parsed.notify, parsed.notify_cmd, root)
    loaded = load_execution_graph(folder if folder.is_absolute() else root / folder)
    graph = prepare(root, loaded)
    out = sys.stderr if as_json else sys.stdout
    lock = threading.Lock()
    say = Lines(out, "", lock).echo
    runner = headless_runner(settings, graph_report.kept_dir(graph),
                             lambda name: Lines(out, f"[{name}] ", lock))
    say(f"Ralph graph {graph.session}: {sum(len(w) for w in loaded.waves)} sub-workflow(s) in "
        f"{len(loaded.waves)} wave(s), at most {jobs} at a time, merged into "
        f"{graph.start.short}.")
    if graph.recovered:
        say(graph.recovered)
    cancel = Cancel()
    with cancel_on_signals(cancel):
        run_graph(graph, loaded, words, runner, jobs=jobs, cancel=cancel, say=say)
    target = graph_report.report_path(graph)
    write_atomic(target, graph_report.render(graph, loaded.task))
    from finesse.headless.graph_end import after_graph

    after_graph(graph, loaded.task, notify)  # the HTML report, the one notification
    if as_json:
        click.echo(json.dumps(graph_report.as_dict(graph, loaded.task), indent=2,
                              ensure_ascii=True))
    else:
        click.echo(f"Ralph graph {graph.session}: {graph_report.verdict(graph)}.")
        for row in graph.rows:
            merged = f", merged {row.merge_commit[:12]}" if row.merge_commit else ""
            click.echo(f"  wave {row.wave} {row.name}: {row.outcome}{merged}")
        click.echo(f"Report: {target.relative_to(root)}")
    return graph.exit_code
