"""The Stop hook for a judge-mode loop (called by `finesse.hooks.stop` under the session's
lock): the main thread's stop is answered from the state (`finesse.judging.decide`), never
counted as an attempt by itself. Standard library only, like the rest of the Stop path.

It measures what the decision needs: the orchestrator's spend since the last stop, the
agents still running in the background (Claude Code lists them in the Stop input), the
working tree, the protected paths when a pass waits, and, when the loop ends short of a
pass on a tree the verifiers have not seen, a fresh verifier run for the final status.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from finesse.hooks.output import HookOutput, continue_turn, tell_user
from finesse.hooks.statusline import read_quota
from finesse.judging.decide import LIMITS, StopView, decide_stop, stale_verification
from finesse.loop import judge_watch
from finesse.loop.lifecycle import finish
from finesse.loop.notebook import record_iteration
from finesse.models import LoopState, judge_of
from finesse.record import replace
from finesse.results import Cursor, ModelUsage
from finesse.state.store import LoopStore, utcnow
from finesse.support.files import is_regular_file
from finesse.support.usage import read_increment
from finesse.support.verify import run_all


def running_agents(fields: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(id, agent type) of each subagent the Stop input lists as still running."""
    found = []
    for task in fields.get("background_tasks") or []:
        if (isinstance(task, dict) and task.get("type") == "subagent"
                and task.get("status") == "running"):
            found.append((str(task.get("id", "")), str(task.get("agent_type", ""))))
    return found


def _spend(state: LoopState, transcript: str | None) -> tuple[list[ModelUsage], Cursor | None]:
    """The orchestrator's tokens since the last stop (its own transcript's new bytes)."""
    if not transcript or not is_regular_file(Path(transcript)):
        return [], None
    increment = read_increment(Path(transcript), state.cursor)
    if increment is None:
        return [], None
    return increment.model_usage(), increment.cursor


def handle_judge_stop(store: LoopStore, state: LoopState, fields: Mapping[str, Any],
                      reply: str | None, cancelled_by: str | None,
                      env: Mapping[str, str]) -> HookOutput | None:
    root = store.paths.root
    transcript = fields.get("transcript_path")
    usage, cursor = _spend(state, transcript if isinstance(transcript, str) else None)
    tree = judge_watch.tree(root, state.baseline_commit)
    now = utcnow()
    current = judge_of(state).current
    view = StopView(
        now=now, reply=reply, cancelled_by=cancelled_by or "",
        background=running_agents(fields), tree=tree.fingerprint, changed=tree.changed,
        usage=usage, cursor=cursor,
        quota=read_quota(store.paths, now) if state.budgets.stop_at_quota is not None else None,
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
