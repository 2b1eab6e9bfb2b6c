"""`ralph`: the loops of this project from a terminal. Same engine, same state files.

The CLI only parses and dispatches; errors become one line on stderr and an exit code here.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from pathlib import Path

import click

from finesse.errors import FinesseError, UsageError
from finesse.loop.grammar import MAX_TIMEOUT_MINUTES, ResumeRequest
from finesse.loop.lifecycle import cancel_loop, describe, latest_resumable, resume_loop, start_loop
from finesse.loop.request import start_request
from finesse.schema import to_dict
from finesse.state.paths import StatePaths, find_project_root, is_valid_session_id
from finesse.state.store import LoopStore, utcnow


def _store(project: str | None) -> LoopStore:
    root = Path(project).resolve() if project else find_project_root(os.environ, os.getcwd())
    return LoopStore(StatePaths(root))


project_option = click.option(
    "--project", type=click.Path(file_okay=False), default=None,
    help="Project root (default: $CLAUDE_PROJECT_DIR, else the git top level of the cwd).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Ralph loops of this project: status, cancel, start, doctor."""


@cli.command()
@project_option
@click.option("--json", "as_json", is_flag=True, help="Print the loops as JSON.")
def status(project: str | None, as_json: bool) -> None:
    """Every active loop of the project."""
    store = _store(project)
    loops = store.active_loops()
    if as_json:
        click.echo(json.dumps(
            {"project": str(store.paths.root),
             "loops": [to_dict(loop) for loop in loops]},
            indent=2, ensure_ascii=False,
        ))
        return
    if not loops:
        click.echo(f"No active Ralph loop in {store.paths.root}.")
        return
    now = utcnow()
    click.echo("\n\n".join(describe(loop, now, history=True) for loop in loops))


@cli.command()
@project_option
@click.option("--session", "session_id", default=None, help="Cancel this session's loop.")
@click.option("--all", "cancel_all", is_flag=True, help="Cancel every loop of the project.")
def cancel(project: str | None, session_id: str | None, cancel_all: bool) -> None:
    """Cancel a loop now: the one active loop, one session's, or --all."""
    store = _store(project)
    if session_id and cancel_all:
        raise click.UsageError("give --session ID or --all, not both")
    if session_id:
        targets = [session_id]
    else:
        targets = [loop.session_id for loop in store.active_loops()]
        if len(targets) > 1 and not cancel_all:
            raise click.UsageError(
                f"{len(targets)} loops are active: pick one with --session ID "
                "(see `ralph status`) or cancel them all with --all"
            )
    if not targets:
        raise click.ClickException(f"no active Ralph loop in {store.paths.root}")
    for target in targets:
        if not is_valid_session_id(target):
            raise click.UsageError(f"not a session id: {target!r}")
        with store.locked(target):
            ended = cancel_loop(store, target, utcnow(), by="`ralph cancel`")
        if ended is None:
            raise click.ClickException(f"session {target} has no active Ralph loop")
        click.echo(ended.end_message + f" (session {target})")


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@project_option
@click.option("--session", "session_id", required=True,
              help="The Claude Code session the loop belongs to.")
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
def start(project: str | None, session_id: str, words: tuple[str, ...]) -> None:
    """Start a loop for a session, with the /ralph-loop grammar after the options."""
    if not is_valid_session_id(session_id):
        raise click.UsageError(f"not a session id: {session_id!r}")
    store = _store(project)
    request = start_request(shlex.join(words), store.paths.root)
    with store.locked(session_id):
        state = start_loop(store, session_id, request, utcnow())
    for warning in request.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"Started Ralph loop {state.loop_id} for session {session_id}: "
               f"up to {state.max_iterations} iterations, promise {state.promise}.")


@cli.command()
@project_option
@click.option("--json", "as_json", is_flag=True, help="Print the ended loop's record as JSON.")
@click.argument("loop", required=False)
def report(project: str | None, as_json: bool, loop: str | None) -> None:
    """The report of the latest ended loop, or of LOOP (a loop id or its start)."""
    store = _store(project)
    ended = store.history()
    if loop:
        ended = [state for state in ended if state.loop_id.startswith(loop)]
        if len(ended) > 1:
            raise click.UsageError(
                f"{len(ended)} loops start with {loop!r}: give more of the id"
            )
    if not ended:
        raise click.ClickException(
            f"no ended Ralph loop{' ' + repr(loop) if loop else ''} in {store.paths.root}"
        )
    latest = max(ended, key=lambda state: state.ended_at or state.updated_at)
    if as_json:
        click.echo(json.dumps(to_dict(latest), indent=2, ensure_ascii=False))
        return
    path = Path(latest.report_path) if latest.report_path else None
    if path is None or not path.is_file():
        raise click.ClickException(f"the report of {latest.loop_id} is missing; try --json")
    click.echo(path.read_text(encoding="utf-8"), nl=False)


@cli.command()
@project_option
@click.option("--session", "session_id", default=None,
              help="Resume this session's loop (default: the project's latest).")
@click.option("--max-iterations", type=click.IntRange(1, 1000), default=None,
              help="The new cap on iterations (more than made so far).")
@click.option("--timeout-minutes", type=click.IntRange(1, MAX_TIMEOUT_MINUTES), default=None,
              help="A fresh time limit, counted from now.")
def resume(project: str | None, session_id: str | None, max_iterations: int | None,
           timeout_minutes: int | None) -> None:
    """Reopen the latest loop that hit a limit, quiesced, timed out or was blocked."""
    if session_id is not None and not is_valid_session_id(session_id):
        raise click.UsageError(f"not a session id: {session_id!r}")
    store = _store(project)
    previous = latest_resumable(store, session_id)
    with store.locked(previous.session_id):
        state = resume_loop(store, previous, ResumeRequest(max_iterations, timeout_minutes),
                            utcnow(), by="`ralph resume`")
    click.echo(
        f"Resumed Ralph loop {state.loop_id} at iteration {state.iteration}/"
        f"{state.max_iterations}. It goes on at the next stop of session {state.session_id}: "
        "send any prompt in that session."
    )


@cli.command()
def doctor() -> None:
    """Check Python, the plugin's environment, Claude Code, and the plugin's validity."""
    from finesse.cli.doctor import report

    healthy, text = report()
    click.echo(text)
    if not healthy:
        raise click.exceptions.Exit(1)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="ralph",
                 standalone_mode=False)
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except click.Abort:
        click.echo("Aborted.", err=True)
        return 1
    except FinesseError as err:
        click.echo(f"ralph: {err}", err=True)
        return 2 if isinstance(err, UsageError) else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
