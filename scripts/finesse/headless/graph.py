"""`ralph run --graph finesse-plans/<session>/`: a decomposed plan's waves, run headless.

Wave by wave, in the graph's order: each sub-workflow of the wave gets a linked worktree on
its own branch `ralph/<session>/<task>`, made from the starting branch as it is when the
wave starts, and runs as a loop there, at most `jobs` at a time. When every loop of the wave
has ended, the successful branches are merged into the starting branch in the graph's
order; a conflict (or a merge that fails otherwise) is undone and stops the run before the
next wave, with every branch left as it is and the conflicting files named. A sub-workflow
that did not succeed stops the sub-workflows that depend on it; independent ones go on. A
branch already merged into the starting branch (a run stopped earlier, resolved by hand)
counts as done, so running the same graph again picks up where it stopped: what counts as
merged, and how a wave that was interrupted (the run killed outright) is run again, is
`finesse.headless.graph_progress`'s. A branch of a graph's name that this graph did not make
and that is not merged is refused before anything starts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from finesse.authoring.workflows.folder import GraphWorkflow, LoadedGraph
from finesse.errors import FinesseError, UsageError
from finesse.headless import graph_progress, worktrees
from finesse.headless.child import Cancel
from finesse.headless.exits import FAILURE, exit_code, worst
from finesse.headless.subworkflow import RunOne, Task, task_for
from finesse.headless.worktrees import Start
from finesse.loop.final_report import title
from finesse.loop.gate.commits import current_branch
from finesse.models import LoopState
from finesse.spend import totals
from finesse.state.paths import StatePaths
from finesse.state.store import LoopStore, utcnow
from finesse.support.git import head

POLL_SECONDS = 0.2
MERGED_BEFORE = "merged before"


@dataclass
class Row:
    """One sub-workflow's line in the graph's report."""

    name: str
    wave: int
    depends_on: tuple[str, ...]
    branch: str
    worktree: str
    outcome: str = "not run"
    loop: LoopState | None = None
    merge_commit: str | None = None
    note: str = ""
    again: bool = False  # its branch and worktree are left from a run that stopped: go on there

    @property
    def succeeded(self) -> bool:
        return self.outcome == MERGED_BEFORE or (self.loop is not None
                                                 and self.loop.outcome == "success")

    @property
    def tokens(self) -> int:
        return totals(self.loop).billed_tokens if self.loop is not None else 0


@dataclass
class GraphRun:
    session: str
    folder: Path
    root: Path
    start: Start
    started_at: datetime
    rows: list[Row]
    progress: graph_progress.Progress
    ended_at: datetime | None = None
    stopped: str = ""  # why the run stopped before its last wave, if it did
    conflicts: list[str] = field(default_factory=list)
    exit_code: int = 0
    recovered: str = ""  # what was put right of a run that stopped, before this one began

    def row(self, name: str) -> Row:
        return next(row for row in self.rows if row.name == name)


def prepare(root: Path, loaded: LoadedGraph) -> GraphRun:
    """Check the project can run the graph; its rows, with the branches merged before."""
    session = loaded.folder.resolve().name
    recovered = worktrees.abort_own_merge(root, session)
    start = worktrees.starting_point(root)
    rows = [Row(w.name, w.wave, w.depends_on, worktrees.branch_name(session, w.name),
                str(worktrees.worktree_path(root, session, w.name)))
            for wave in loaded.waves for w in wave]
    progress = graph_progress.load(root, session)
    unmerged = []
    for row in rows:
        if worktrees.branch_exists(root, row.branch):
            if graph_progress.merged_before(root, progress, row.name, row.branch):
                row.outcome, row.note = MERGED_BEFORE, "its branch is already merged"
            elif row.name in progress.bases:
                row.again = True
            else:
                unmerged.append(row.branch)
    if unmerged:
        raise UsageError(
            f"{', '.join(unmerged)} already exist(s) and are not merged into {start.short}: "
            "merge them (`git merge BRANCH`), or remove their worktrees and branches "
            "(`git worktree remove PATH`, `git branch -D BRANCH`), then run again")
    for row in rows:
        if row.outcome == MERGED_BEFORE:
            row.note = worktrees.remove_if_all_committed(root, Path(row.worktree)) or row.note
    graph = GraphRun(session, loaded.folder, root, start, utcnow(), rows, progress)
    graph.recovered = recovered
    return graph


def run_graph(graph: GraphRun, loaded: LoadedGraph, extra: list[str], run_one: RunOne, *,
              jobs: int, cancel: Cancel, say: Callable[[str], None]) -> GraphRun:
    for wave in loaded.waves:
        if graph.stopped or cancel.requested:
            graph.stopped = graph.stopped or f"cancelled by {cancel.by}"
            break
        runnable = _runnable(graph, wave)
        say(f"wave {wave[0].wave}: {len(runnable)} sub-workflow(s) to run"
            + (f" ({', '.join(w.name for w in runnable)})" if runnable else ""))
        tasks = _worktrees(graph, runnable, extra)
        _run_all(graph, tasks, run_one, jobs, cancel)
        if cancel.requested:
            graph.stopped = f"cancelled by {cancel.by}"
            break
        _merge_wave(graph, wave, say)
    for row in graph.rows:
        if row.outcome == "not run" and graph.stopped:
            row.note = row.note or f"not run: {graph.stopped}"
    graph.ended_at = utcnow()
    graph.exit_code = _exit_code(graph, cancel)
    return graph


def _runnable(graph: GraphRun, wave: tuple[GraphWorkflow, ...]) -> list[GraphWorkflow]:
    runnable = []
    for workflow in wave:
        row = graph.row(workflow.name)
        if row.outcome == MERGED_BEFORE:
            continue
        missing = [name for name in workflow.depends_on
                   if not (graph.row(name).succeeded
                           and (graph.row(name).merge_commit or graph.row(name).outcome
                                == MERGED_BEFORE))]
        if missing:
            row.outcome = "skipped"
            row.note = f"depends on {', '.join(missing)}, which did not succeed and merge"
            continue
        runnable.append(workflow)
    return runnable


def _worktrees(graph: GraphRun, runnable: list[GraphWorkflow], extra: list[str]) -> list[Task]:
    """A worktree per sub-workflow, made one after the other from the starting branch now."""
    base = head(graph.root) or ""
    tasks = []
    for workflow in runnable:
        row = graph.row(workflow.name)
        try:
            task = task_for(graph.root, graph.session, workflow, extra, again=row.again)
            if row.again:
                worktrees.reopen_worktree(graph.root, task.worktree, task.branch)
            else:
                graph.progress.started(row.name, base)
                worktrees.add_worktree(graph.root, task.worktree, task.branch, base)
        except FinesseError as err:
            row.outcome, row.note = "error", str(err)
            continue
        tasks.append(task)
    return tasks


def _run_all(graph: GraphRun, tasks: list[Task], run_one: RunOne, jobs: int,
             cancel: Cancel) -> None:
    store = LoopStore(StatePaths(graph.root))
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ralph-graph") as pool:
        running: dict[Future[LoopState], Task] = {}
        queue = list(tasks)
        while queue or running:
            while queue and len(running) < jobs and not cancel.requested:
                task = queue.pop(0)
                running[pool.submit(run_one, task, cancel)] = task
            if cancel.requested:
                queue.clear()
            if not running:
                break
            done, _ = wait(running, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            for future in done:
                _record(graph.row(running.pop(future).workflow.name), future)
            stopping = store.cancel_requested()
            if stopping:
                cancel.request(stopping)
            time.sleep(0)


def _record(row: Row, future: Future[LoopState]) -> None:
    try:
        row.loop = future.result()
    except (FinesseError, OSError) as err:
        row.outcome, row.note = "error", " ".join(str(err).split())
        return
    row.outcome = title(row.loop)


def _merge_wave(graph: GraphRun, wave: tuple[GraphWorkflow, ...],
                say: Callable[[str], None]) -> None:
    """Merge the wave's successful branches in the graph's order; the first failure stops."""
    for workflow in wave:
        row = graph.row(workflow.name)
        if row.loop is None or not row.succeeded:
            continue
        if graph.stopped:
            row.note = f"not merged: {graph.stopped}"
            continue
        if current_branch(graph.root) != graph.start.branch:
            graph.stopped = (f"HEAD is no longer on {graph.start.short}, where the merges go: "
                             f"switch back (`git switch {graph.start.short}`) and run again")
            row.note = f"not merged: {graph.stopped}"
            continue
        merged = worktrees.merge(graph.root, row.branch,
                                 worktrees.merge_message(row.name, row.wave, graph.session))
        if merged.commit is None:
            graph.conflicts = merged.conflicts
            what = (f"conflicts in {', '.join(merged.conflicts)}" if merged.conflicts
                    else merged.error)
            row.note = f"merge failed and was undone: {what}"
            graph.stopped = (f"merging {row.branch} into {graph.start.short} failed ({what}); "
                             "every branch is left as it is")
            say(f"stop: {graph.stopped}")
            continue
        row.merge_commit = merged.commit
        graph.progress.merged(row.name, merged.commit)
        say(f"merged {row.branch} into {graph.start.short} ({merged.commit[:12]})")
        problem = worktrees.remove_worktree(graph.root, Path(row.worktree))
        row.note = problem or "merged; its worktree was removed"


def _exit_code(graph: GraphRun, cancel: Cancel) -> int:
    codes = []
    for row in graph.rows:
        if row.loop is not None:
            signalled = cancel.signal if row.loop.ended_by == cancel.by else None
            codes.append(exit_code(row.loop, signalled))
        elif row.outcome == "error":
            codes.append(FAILURE)
    if graph.conflicts or (graph.stopped and not cancel.requested):
        codes.append(FAILURE)
    if cancel.requested and cancel.signal:
        codes.append(128 + cancel.signal)
    return worst(codes)
