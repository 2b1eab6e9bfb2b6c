"""`ralph resume`: reopen a loop that hit a limit, quiesced, timed out or was blocked."""

from __future__ import annotations

import click

from finesse.cli.ralph.common import project_option, store_for
from finesse.loop.budgets import parse_budgets
from finesse.loop.grammar import MAX_TIMEOUT_MINUTES, ResumeRequest
from finesse.loop.resume import latest_resumable, resume_loop
from finesse.state.paths import is_valid_session_id
from finesse.state.store import utcnow


@click.command("resume")
@project_option
@click.option("--session", "session_id", default=None,
              help="Resume this session's loop (default: the project's latest).")
@click.option("--max-iterations", type=click.IntRange(1, 1000), default=None,
              help="The new cap on iterations (more than made so far).")
@click.option("--timeout-minutes", type=click.IntRange(1, MAX_TIMEOUT_MINUTES), default=None,
              help="A fresh time limit, counted from now.")
@click.option("--max-tokens", default=None, metavar="N",
              help="A new token budget (input, cache creation and output, all iterations).")
@click.option("--max-cost", default=None, metavar="USD",
              help="A new budget in US dollars (estimated from token prices).")
@click.option("--stop-at-quota", default=None, metavar="PERCENT",
              help="Stop when the five-hour or weekly window reaches PERCENT.")
def command(project: str | None, session_id: str | None, max_iterations: int | None,
           timeout_minutes: int | None, max_tokens: str | None, max_cost: str | None,
           stop_at_quota: str | None) -> None:
    """Reopen the latest loop that hit a limit, quiesced, timed out or was blocked."""
    if session_id is not None and not is_valid_session_id(session_id):
        raise click.UsageError(f"not a session id: {session_id!r}")
    given = {"--max-tokens": max_tokens, "--max-cost": max_cost, "--stop-at-quota": stop_at_quota}
    budgets = parse_budgets({flag: [value] for flag, value in given.items() if value is not None})
    store = store_for(project)
    previous = latest_resumable(store, session_id)
    with store.locked(previous.session_id):
        state = resume_loop(store, previous,
                            ResumeRequest(max_iterations, timeout_minutes, budgets),
                            utcnow(), by="`ralph resume`")
    click.echo(
        f"Resumed Ralph loop {state.loop_id} at iteration {state.iteration}/"
        f"{state.max_iterations}. It goes on at the next stop of session {state.session_id}: "
        "send any prompt in that session."
    )
