"""`ralph run`: the loop headless, from a terminal or CI, a fresh `claude -p` per iteration.

The loop's arguments are `/ralph-loop`'s, parsed by the same grammar into the same start
request; the options below are the run's own. With `--graph DIR` it runs a decomposed
plan's waves instead (`finesse.headless.graph`). Exit codes: `finesse.headless.exits`.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import click

from finesse.cli.ralph.common import project_option, store_for
from finesse.cli.ralph.running import run_loop
from finesse.errors import UsageError
from finesse.headless import runner
from finesse.headless.session import parse_claude_args
from finesse.loop.request import start_request
from finesse.models import HeadlessRun

_DURATION = re.compile(r"([0-9]{1,7})\s*([smh]?)")
MIN_ITERATION_SECONDS = 10
MAX_ITERATION_SECONDS = 7 * 24 * 3600


def parse_duration(value: str | None) -> int | None:
    """`--iteration-timeout 600`, `90s`, `10m` or `2h`, in seconds."""
    if value is None:
        return None
    found = _DURATION.fullmatch(value.strip())
    seconds = (int(found.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[found.group(2)]
               if found else 0)
    if not MIN_ITERATION_SECONDS <= seconds <= MAX_ITERATION_SECONDS:
        raise UsageError(f"--iteration-timeout needs a duration from {MIN_ITERATION_SECONDS} s "
                         f"to 7 days, not {value!r}: for example 600, 90s, 20m or 2h")
    return seconds


def check_claude(claude: str) -> str:
    """The CLI each iteration runs; a UsageError saying what to do when there is none."""
    if shutil.which(claude) is None:
        raise UsageError(f"cannot run the Claude Code CLI {claude!r}: install it "
                         "(`npm install -g @anthropic-ai/claude-code`) or give --claude-bin PATH")
    return claude


run_options = [
    click.option("--model", default=None, metavar="NAME",
                 help="The model of every iteration's agent (claude --model)."),
    click.option("--json", "as_json", is_flag=True,
                 help="Print the final report as JSON on stdout (progress goes to stderr)."),
    click.option("--wait-on-limit", is_flag=True,
                 help="On a usage limit, wait for its reset (within --timeout-minutes), "
                      "then go on, instead of stopping."),
    click.option("--iteration-timeout", default=None, metavar="DURATION",
                 help="Kill an iteration that runs longer (600, 90s, 20m, 2h); it is "
                      "recorded and the loop goes on."),
    click.option("--claude-bin", default="claude", metavar="PATH", show_default=True,
                 help="The Claude Code CLI to run."),
    click.option("--claude-args", default=None, metavar="ARGS",
                 help='More flags for every iteration, e.g. "--permission-mode acceptEdits".'),
]


def with_run_options(function: click.decorators.FC) -> click.decorators.FC:
    for option in reversed(run_options):
        function = option(function)
    return function


@click.command("run", context_settings={"ignore_unknown_options": True,
                                        "allow_interspersed_args": True})
@project_option
@with_run_options
@click.option("--graph", "graph_dir", default=None, metavar="DIR",
              help="Run a decomposed plan (finesse-plans/<session>/) wave by wave, each "
                   "sub-workflow in its own worktree.")
@click.option("--jobs", type=click.IntRange(1, 16), default=2, show_default=True,
              help="With --graph: at most this many sub-workflows at a time.")
@click.argument("words", nargs=-1, type=click.UNPROCESSED,
                metavar="[PROMPT] [/ralph-loop OPTIONS]...")
def command(project: str | None, model: str | None, as_json: bool, wait_on_limit: bool,
            iteration_timeout: str | None, claude_bin: str, claude_args: str | None,
            graph_dir: str | None, jobs: int, words: tuple[str, ...]) -> int:
    """Run a Ralph loop headless: /ralph-loop's arguments, each iteration a fresh
    `claude -p`. Exit 0 verified success, 1 failure or blocked, 2 usage error, 3 a
    resumable stop (`ralph resume` goes on)."""
    store = store_for(project)
    settings = HeadlessRun(claude=check_claude(claude_bin), model=model,
                           claude_args=parse_claude_args(claude_args),
                           iteration_timeout=parse_duration(iteration_timeout),
                           wait_on_limit=wait_on_limit)
    if graph_dir is not None:
        from finesse.cli.ralph.graph_run import run_graph_command

        return run_graph_command(store, Path(graph_dir), list(words), settings, jobs=jobs,
                         as_json=as_json)
    request = start_request(shlex.join(words), store.paths.root)
    state = runner.start(store, request, settings)
    for warning in request.warnings:
        click.echo(f"warning: {warning}", err=True)
    how = ", ".join(part for part in (f"model {model}" if model else "",
                                      f"effort {state.effort}" if state.effort else "") if part)
    click.echo(f"Ralph run {state.loop_id}: up to {state.max_iterations} iterations, promise "
               f"{state.promise}, each a fresh `claude -p`{f' ({how})' if how else ''}.",
               err=as_json)
    return run_loop(store, state.session_id, as_json=as_json)
