"""`ralph resume`: reopen a loop that hit a limit, quiesced, timed out or was blocked. A loop
of a session goes on at that session's next stop; a headless loop (`ralph run`) goes on
here, in the foreground, with `ralph run`'s display and exit codes. A headless loop still
active whose `ralph run` died without ending it (SIGKILL) is picked up and driven on."""

from __future__ import annotations

import click

from finesse.cli.ralph.common import project_option, store_for
from finesse.loop.budgets import parse_budgets
from finesse.loop.grammar import MAX_TIMEOUT_MINUTES, ResumeRequest
from finesse.loop.recovery import recover
from finesse.loop.resume import latest_resumable, resume_loop
from finesse.models import LoopState
from finesse.record import replace
from finesse.state.paths import is_valid_session_id
from finesse.state.store import LoopStore, utcnow


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
@click.option("--json", "as_json", is_flag=True,
              help="A headless loop: print the final report as JSON.")
@click.option("--wait-on-limit", is_flag=True,
              help="A headless loop: wait for a usage limit's reset instead of stopping.")
@click.option("--claude-bin", default=None, metavar="PATH",
              help="A headless loop: the Claude Code CLI to run from now on.")
def command(project: str | None, session_id: str | None, max_iterations: int | None,
           timeout_minutes: int | None, max_tokens: str | None, max_cost: str | None,
           stop_at_quota: str | None, as_json: bool, wait_on_limit: bool,
           claude_bin: str | None) -> int:
    """Reopen the latest loop that hit a limit, quiesced, timed out or was blocked (a
    headless one goes on here; one whose `ralph run` died is picked up)."""
    if session_id is not None and not is_valid_session_id(session_id):
        raise click.UsageError(f"not a session id: {session_id!r}")
    given = {"--max-tokens": max_tokens, "--max-cost": max_cost, "--stop-at-quota": stop_at_quota}
    budgets = parse_budgets({flag: [value] for flag, value in given.items() if value is not None})
    store = store_for(project)
    orphan = _undriven_headless(store, session_id)
    if orphan is not None:
        from finesse.cli.ralph.running import run_loop

        if claude_bin is not None or wait_on_limit:
            _run_with(store, orphan.session_id, claude_bin, wait_on_limit)
        click.echo(f"Picking up Ralph run {orphan.loop_id} at iteration {orphan.iteration}/"
                   f"{orphan.max_iterations}: the process that ran it is gone.", err=as_json)
        return run_loop(store, orphan.session_id, as_json=as_json)
    previous = latest_resumable(store, session_id)
    headless = previous.headless
    if headless is not None:
        from finesse.cli.ralph.run import check_claude

        headless = replace(headless, claude=check_claude(claude_bin or headless.claude),
                           wait_on_limit=wait_on_limit or headless.wait_on_limit)
    with store.locked(previous.session_id):
        recovered = recover(store, previous.session_id)  # an interrupted start, rolled back
        if recovered:
            click.echo(f"ralph resume: {recovered}", err=True)
        state = resume_loop(store, previous,
                            ResumeRequest(max_iterations, timeout_minutes, budgets),
                            utcnow(), by="`ralph resume`", headless=headless)
    if headless is not None:
        from finesse.cli.ralph.running import run_loop

        click.echo(f"Resumed Ralph run {state.loop_id} at iteration {state.iteration}/"
                   f"{state.max_iterations} (it had ended: {previous.outcome}).", err=as_json)
        return run_loop(store, state.session_id, as_json=as_json)
    click.echo(
        f"Resumed Ralph loop {state.loop_id} at iteration {state.iteration}/"
        f"{state.max_iterations}. It goes on at the next stop of session {state.session_id}: "
        "send any prompt in that session."
    )
    return 0


def _undriven_headless(store: LoopStore, session_id: str | None) -> LoopState | None:
    """An active headless loop whose `ralph run` died (SIGKILL, a lost machine): it is
    still active, so it is not resumed but driven on from where it was."""
    from finesse.headless.runner import is_driven

    return next((loop for loop in store.active_loops()
                 if loop.headless is not None and session_id in (None, loop.session_id)
                 and not is_driven(store, loop.session_id)), None)


def _run_with(store: LoopStore, session_id: str, claude_bin: str | None,
              wait_on_limit: bool) -> None:
    """A picked-up headless loop goes on with the CLI and the --wait-on-limit it was resumed
    with (its old CLI may be gone since its `ralph run` was killed), saved under its lock
    before it is driven; the rest of its record (the agent it may have left) as it is."""
    from finesse.cli.ralph.run import check_claude

    with store.locked(session_id):
        state = store.load(session_id)
        if state is None or state.headless is None:
            return
        headless = state.headless
        store.save(replace(state, headless=replace(
            headless, claude=check_claude(claude_bin) if claude_bin else headless.claude,
            wait_on_limit=wait_on_limit or headless.wait_on_limit)))
