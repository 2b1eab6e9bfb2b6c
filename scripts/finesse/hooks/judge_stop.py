"""The Stop hook for a judge-mode loop (called by `finesse.hooks.stop` under the session's
lock): the main thread's stop is answered from the state (`finesse.judging.decide`), never
counted as an attempt by itself. Standard library only, like the rest of the Stop path.

It takes the first part of every stop's observation (`finesse.loop.observe.gather`: the
orchestrator's reply read once, its spend since the last stop, a cancel) and measures what
the decision needs besides: the agents still running in the background (Claude Code lists
them in the Stop input), the working tree, the protected paths when a pass waits, and, when
the loop ends short of a pass on a tree the verifiers have not seen, a fresh verifier run
for the final status.
"""

from __future__ import annotations

from finesse.hooks.output import HookOutput, continue_turn, tell_user
from finesse.judging.decide import LIMITS, StopView, decide_stop, stale_verification
from finesse.loop import judge_watch
from finesse.loop.lifecycle import finish
from finesse.loop.notebook import record_iteration
from finesse.loop.observe import gather
from finesse.models import LoopState, StopInput, judge_of
from finesse.record import replace
from finesse.state.store import LoopStore
from finesse.support.verify import run_all

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from finesse.loop.observe import Source


def running_agents(data: StopInput) -> list[tuple[str, str]]:
    """(id, agent type) of each subagent the Stop input lists as still running."""
    found = []
    tasks = data.background_tasks if isinstance(data.background_tasks, list) else []
    for task in tasks:
        if (isinstance(task, dict) and task.get("type") == "subagent"
                and task.get("status") == "running"):
            found.append((str(task.get("id", "")), str(task.get("agent_type", ""))))
    return found


def handle_judge_stop(store: LoopStore, state: LoopState, data: StopInput, source: Source,
                      env: Mapping[str, str]) -> HookOutput | None:
    root = store.paths.root
    gathered = gather(state, store, source)
    activity = gathered.activity
    tree = judge_watch.tree(root, state.baseline_commit)
    current = judge_of(state).current
    view = StopView(
        now=gathered.now, reply=activity.reply, reading=gathered.reading,
        cancelled_by=gathered.cancelled_by, background=running_agents(data),
        tree=tree.fingerprint, changed=tree.changed, usage=list(activity.usage),
        cursor=activity.cursor,
        quota=(source.quota(store, gathered.now)
               if state.budgets.stop_at_quota is not None else None),
        protect_changed=(judge_watch.protect_changes(root, judge_of(state))
                         if current is not None and current.passed else []),
    )
    decision = decide_stop(state, view)
    if (decision.action == "end" and decision.outcome in LIMITS
            and stale_verification(state, tree.fingerprint)):
        results = run_all(state.verify, cwd=root, settings=env)
        decision = decide_stop(state, replace(view, verification=results))
    if decision.action == "wait":
        store.save(decision.state)
        return None
    if decision.action == "continue":
        following = decision.state
        if decision.closed:
            following = record_iteration(store, following, following.iterations[-1], [])
        store.save(following)
        return continue_turn(decision.reason, system_message=decision.message, env=env)
    return tell_user(finish(store, decision.state, decision.notes))
