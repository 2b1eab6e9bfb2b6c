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
from finesse.headless.runner import Progress
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


def task_for(root: Path, session: str, workflow: GraphWorkflow, extra: Sequence[str]) -> Task:
    worktree = worktrees.worktree_path(root, session, workflow.name)
    inside = root.absolute().relative_to(work_tree_top(root))
    return Task(workflow, worktrees.branch_name(session, workflow.name), worktree,
                loop_words(workflow, extra), worktree / inside)


RunOne = Callable[[Task, Cancel], LoopState]


def headless_runner(settings: HeadlessRun, keep: Path,
                    progress_for: Callable[[str], Progress]) -> RunOne:
    """Run a task's loop headless in its worktree; the ended loop, its leftovers committed
    and its report and record copied under `keep`."""

    def run(task: Task, cancel: Cancel) -> LoopState:
        store = LoopStore(StatePaths(task.project))
        request = start_request(shlex.join(task.args), task.project, command="finesse-execute")
        request.notify = None  # the graph run tells once, when it ends
        state = runner.start(store, request, settings)
        ended = runner.drive(store, state.session_id, cancel, progress_for(task.workflow.name))
        worktrees.commit_leftovers(task.worktree, task.workflow.name)
        _keep(store, ended.state, keep)
        return ended.state

    return run


def _keep(store: LoopStore, state: LoopState, keep: Path) -> None:
    keep.mkdir(parents=True, exist_ok=True)
    report = Path(state.report_path) if state.report_path else None
    for source in (store.paths.history / f"{state.loop_id}.json", report,
                   report.with_suffix(".html") if report else None):
        if source is not None and source.is_file():
            shutil.copyfile(source, keep / source.name)
