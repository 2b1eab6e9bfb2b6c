"""One sub-workflow of a decomposed plan, run as a headless loop in its own worktree.

Its loop's arguments are `finesse.headless.plan_args.loop_words`, the translation `ralph ci`
uses too, with the options given to `ralph run --graph` (budgets, `--effort`, more
`--verify` ...) after them. When the loop ends, what it left uncommitted is committed on its
branch, and its report and record are copied into the project's `.claude/ralph/graphs/<run>/`:
the worktree goes away after the merge, they stay.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from finesse.authoring.workflows.folder import GraphWorkflow
from finesse.headless import runner, worktrees
from finesse.headless.child import Cancel
from finesse.headless.plan_args import loop_words
from finesse.headless.progress import Progress
from finesse.loop.request import start_request
from finesse.models import HeadlessRun, LoopState
from finesse.state.paths import StatePaths
from finesse.state.store import LoopStore
from finesse.support.git import work_tree_top


@dataclass(frozen=True)
class Task:
    workflow: GraphWorkflow
    branch: str
    worktree: Path  # a checkout of the whole repository
    args: tuple[str, ...]  # the loop's arguments, as words
    project: Path  # the project inside it: in a monorepo, not the worktree's top
    again: bool = False  # the worktree is left from a run that stopped: its loop goes on


def task_for(root: Path, session: str, workflow: GraphWorkflow, extra: Sequence[str],
             again: bool = False) -> Task:
    worktree = worktrees.worktree_path(root, session, workflow.name)
    inside = root.absolute().relative_to(work_tree_top(root))
    return Task(workflow, worktrees.branch_name(session, workflow.name), worktree,
                loop_words(workflow, extra), worktree / inside, again)


RunOne = Callable[[Task, Cancel], LoopState]


def headless_runner(settings: HeadlessRun, keep: Path,
                    progress_for: Callable[[str], Progress]) -> RunOne:
    """Run a task's loop headless in its worktree; the ended loop, its leftovers committed
    and its report and record copied under `keep`."""

    def run(task: Task, cancel: Cancel) -> LoopState:
        store = LoopStore(StatePaths(task.project))
        shown = progress_for(task.workflow.name)
        ended = _go_on(store, cancel, shown) if task.again else None
        if ended is None:
            request = start_request(shlex.join(task.args), task.project,
                                    command="finesse-execute")
            request.notify = None  # the graph run tells once, when it ends
            state = runner.start(store, request, settings)
            ended = runner.drive(store, state.session_id, cancel, shown).state
        worktrees.commit_leftovers(task.worktree, task.workflow.name)
        _keep(store, ended, keep)
        return ended

    return run


def _go_on(store: LoopStore, cancel: Cancel, shown: Progress) -> LoopState | None:
    """In the worktree of a run that stopped: its loop driven on when it is still active (its
    agent, if left running, is ended first: `runner.drive`), or its successful end when only
    the merge was missing; None when a new loop must run."""
    active = [loop for loop in store.active_loops() if loop.headless is not None]
    if active:
        loop = active[0]
        shown.say(f"picking up its loop {loop.loop_id} at iteration {loop.iteration}/"
                  f"{loop.max_iterations}: the run that ran it stopped")
        return runner.drive(store, loop.session_id, cancel, shown).state
    ended = sorted(store.history(), key=lambda loop: loop.ended_at or loop.updated_at)
    if ended and ended[-1].outcome == "success":
        shown.say(f"its loop {ended[-1].loop_id} had succeeded: merging it")
        return ended[-1]
    return None


def _keep(store: LoopStore, state: LoopState, keep: Path) -> None:
    keep.mkdir(parents=True, exist_ok=True)
    report = Path(state.report_path) if state.report_path else None
    for source in (store.paths.history / f"{state.loop_id}.json", report,
                   report.with_suffix(".html") if report else None):
        if source is not None and source.is_file():
            shutil.copyfile(source, keep / source.name)
