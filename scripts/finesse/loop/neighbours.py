"""The loops a new loop may not share its work tree with: gate mode commits and reverts the
whole project directory, so a gate loop refuses any other loop in its project, in a project
above it in the same work tree, or (for a gate loop) in one below it (a monorepo's
packages); a plain loop refuses a gate loop in those places."""

from __future__ import annotations

from finesse.errors import UsageError
from finesse.state.paths import StatePaths
from finesse.state.store import LoopStore
from finesse.support import git as gitstate
from finesse.support.files import shown_name
from finesse.support.layout import LOOPS_DIR


def _stores_in_the_work_tree(store: LoopStore, *, below: bool) -> list[LoopStore]:
    """This project's store, then those of the projects above it in its work tree and, when
    `below`, of those below it (a monorepo's packages): a gate loop's commits and reverts
    reach into a project below, and a loop above works in this one's files."""
    root = store.paths.root
    top = gitstate.work_tree_top(root)
    above = [path for path in root.absolute().parents if path.is_relative_to(top)]
    nested = gitstate.projects_below(root) if below else []
    return [store, *(LoopStore(StatePaths(path)) for path in [*above, *nested]
                     if (path / LOOPS_DIR).is_dir())]


def refuse_beside(store: LoopStore, session_id: str, *, gate: bool) -> None:
    """Gate mode commits and reverts the whole project directory: it cannot share a work
    tree with another loop, whose files it would commit or delete, in this project or in
    one above or below it."""
    for other in _stores_in_the_work_tree(store, below=gate):
        others = [loop for loop in other.active_loops() if loop.session_id != session_id]
        clash = next((loop for loop in others if gate or loop.gate), None)
        if clash is None:
            continue
        which = "a gate-mode loop" if clash.gate else "a loop"
        where = "" if other is store else f" (project {shown_name(str(other.paths.root))})"
        raise UsageError(
            f"session {clash.session_id} runs {which} in this work tree{where}; gate mode "
            "commits and reverts the whole project, so two loops cannot share it: run this one "
            "in a linked worktree (`git worktree add ../other-tree`, then start Claude Code "
            "there)"
        )
