"""A headless loop's agent outside the iteration that started it: recorded in the loop's
state while it runs, and ended by the next driver of the loop when the `ralph run` that
started it died without ending it (SIGKILL, a closed terminal), so a loop never has two
agents at once. Only a process that is provably that agent is ever signalled: the same pid,
the same start time, and (Linux) the loop's id in its environment (`HEADLESS_CHILD`,
`finesse.headless.session.child_env`)."""

from __future__ import annotations

from collections.abc import Callable

from finesse.errors import StateError
from finesse.headless.child import KILL_GRACE_SECONDS
from finesse.models import LoopState, RunningAgent
from finesse.record import replace
from finesse.state.store import LoopStore
from finesse.support import survivors
from finesse.support.layout import HEADLESS_CHILD


def agent_started(store: LoopStore, run_id: str, state: LoopState,
                  then: Callable[[LoopState, int], None], pid: int) -> None:
    """Record the agent just started in the loop's state, so that a driver that comes after
    this one died can end it (on Linux it dies with this process anyway)."""
    identity = survivors.process_identity(pid)
    if identity is not None:
        with store.locked(run_id):
            current = store.load(run_id)
            if current is not None and current.headless is not None:
                store.save(replace(current, headless=replace(
                    current.headless, agent=RunningAgent(pid, identity))))
    then(state, pid)


def without_agent(state: LoopState) -> LoopState:
    if state.headless is None or state.headless.agent is None:
        return state
    return replace(state, headless=replace(state.headless, agent=None))


def end_left_agent(store: LoopStore, state: LoopState, say: Callable[[str], None]) -> None:
    """End the agent recorded in the loop's state, left running by a driver that died, before
    another starts: only if it is provably that agent (its start time, and on Linux the
    loop's id in its environment); one line saying what was done. Called by the loop's one
    driver (`runner.driving`), not under the loop's lock, which the wait for the agent to end
    would hold for seconds; the record is cleared under it afterwards."""
    assert state.headless is not None and state.headless.agent is not None
    agent = state.headless.agent
    done = survivors.end_recorded(agent.pid, agent.identity, KILL_GRACE_SECONDS,
                                  marker=f"{HEADLESS_CHILD}={state.session_id}")
    line = {
        "ended": f"ended the agent (claude pid {agent.pid}) left running by the `ralph run` "
                 "that died, before starting another",
        "other": f"left pid {agent.pid} alone: the agent recorded with it has ended and the "
                 "pid is another process's now",
        "unknown": f"left pid {agent.pid} alone: this platform cannot tell whether it is "
                   "still the agent the `ralph run` that died started; end it if it is",
        "stuck": f"the agent (claude pid {agent.pid}) left running by the `ralph run` that "
                 "died outlived SIGKILL: end it before going on",
    }.get(done, "")
    if done == "stuck":
        raise StateError(line)
    if line:
        say(line)
    with store.locked(state.session_id):
        current = store.load(state.session_id)
        if current is not None and current.headless is not None \
                and current.headless.agent == agent:
            store.save(without_agent(current))
