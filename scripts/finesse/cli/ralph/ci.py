"""`ralph ci PLAN_DIR`: the GitHub Actions workflow that runs a decomposed plan's waves on
many machines (`finesse.headless.ci`).

PLAN_DIR is the plan folder as `ralph run --graph` takes it, from the project root. The
workflow goes to `.github/workflows/ralph-<session>.yml` at the repository's top (`--output`
for another file, `--print` for stdout); a file there that `ralph ci` did not write for this
plan is refused unless `--force`. The loop options after PLAN_DIR apply to every
sub-workflow, as with `--graph`. `--begin-task`, `--end-task` and `--merge-wave` are the
steps the workflow's jobs run (`finesse.cli.ralph.ci_steps`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, cast

import click

from finesse.cli.ralph.common import project_option, store_for
from finesse.cli.ralph.run import parse_duration
from finesse.errors import UsageError
from finesse.headless.ci.install import default_requirement
from finesse.headless.ci.plan import CiSettings, Trigger, load_ci_plan
from finesse.headless.ci.render import check_target, render
from finesse.headless.session import parse_claude_args
from finesse.support.files import shown_name
from finesse.support.git import work_tree_top
from finesse.support.writes import write_atomic


def parse_trigger(value: str) -> Trigger:
    kind, _, name = value.partition(":")
    if kind not in ("label", "push") or not name.strip() or "\n" in name:
        raise UsageError(f"--on takes label:NAME (a pull request given the label NAME) or "
                         f"push:BRANCH (the plan pushed to BRANCH), not {value!r}")
    return Trigger(cast(Literal["label", "push"], kind), name.strip())


def _one_line(option: str, value: str) -> str:
    if not value.strip() or "\n" in value or "\r" in value:
        raise UsageError(f"{option} needs a value on one line, not {value!r}")
    return value.strip()


def settings_from(finesse: str | None, auth: str, jobs: int, runs_on: str,
                  iteration_timeout: str, triggers: tuple[str, ...], model: str | None,
                  claude_args: str | None, wait_on_limit: bool,
                  words: tuple[str, ...]) -> tuple[CiSettings, list[str]]:
    """The generator's settings from the options; the warnings they bring."""
    notes = []
    if finesse is None:
        found = default_requirement()
        requirement = found.text
        notes += [found.note] if found.note else []
    else:
        requirement = _one_line("--finesse", finesse)
    run_options: list[str] = []
    if model is not None:
        run_options += ["--model", _one_line("--model", model)]
    if claude_args is not None:
        parse_claude_args(claude_args)
        run_options += ["--claude-args", _one_line("--claude-args", claude_args)]
    if wait_on_limit:
        run_options.append("--wait-on-limit")
    seconds = parse_duration(iteration_timeout)
    assert seconds is not None
    settings = CiSettings(
        finesse=requirement, auth=cast(Literal["api-key", "oauth"], auth), jobs=jobs,
        runs_on=_one_line("--runs-on", runs_on), iteration_timeout=seconds,
        triggers=tuple(parse_trigger(value) for value in triggers),
        run_options=tuple(run_options), extra=words)
    return settings, notes


def _target(root: Path, output: str | None, session: str) -> Path:
    if output is not None:
        return Path(output).absolute()
    return work_tree_top(root) / ".github" / "workflows" / f"ralph-{session}.yml"


def _shown(path: Path) -> str:
    try:
        return shown_name(path.relative_to(Path.cwd()))
    except (ValueError, OSError):  # OSError: the working directory was removed
        return shown_name(path)


@click.command("ci", context_settings={"ignore_unknown_options": True,
                                       "allow_interspersed_args": True})
@project_option
@click.argument("plan_dir", metavar="PLAN_DIR")
@click.option("--output", default=None, metavar="PATH",
              help="Write the workflow here (default: .github/workflows/ralph-<session>.yml "
                   "at the repository's top).")
@click.option("--print", "to_stdout", is_flag=True, help="Print the workflow on stdout instead.")
@click.option("--force", is_flag=True,
              help="Replace a file at the output that ralph ci did not write for this plan.")
@click.option("--jobs", type=click.IntRange(1, 64), default=2, show_default=True,
              help="At most this many sub-workflows of a wave at a time (max-parallel).")
@click.option("--on", "triggers", multiple=True, metavar="label:NAME|push:BRANCH",
              help="Also run on a pull request given the label NAME, or on a push of the "
                   "plan to BRANCH (the workflow can always be run by hand).")
@click.option("--auth", type=click.Choice(["api-key", "oauth"]), default="api-key",
              show_default=True,
              help="The credential: the secret ANTHROPIC_API_KEY, or CLAUDE_CODE_OAUTH_TOKEN "
                   "(a subscription; `claude setup-token` makes one).")
@click.option("--finesse", default=None, metavar="REQUIREMENT",
              help="What the jobs `pip install` for finesse (default: where this finesse "
                   "came from, at its commit), e.g. git+https://github.com/OWNER/finesse@REF.")
@click.option("--runs-on", default="ubuntu-latest", show_default=True, metavar="LABEL",
              help="The runner of every job.")
@click.option("--iteration-timeout", default="20m", show_default=True, metavar="DURATION",
              help="Each iteration's limit; a loop's and its job's timeouts follow from it "
                   "and the iterations.")
@click.option("--model", default=None, metavar="NAME", help="The model of every iteration.")
@click.option("--claude-args", default=None, metavar="ARGS",
              help='More flags for every iteration, e.g. "--permission-mode acceptEdits".')
@click.option("--wait-on-limit", is_flag=True,
              help="On a usage limit, wait for its reset instead of stopping.")
@click.option("--begin-task", default=None, metavar="NAME",
              help="[a step of the workflow] Start sub-workflow NAME's branch.")
@click.option("--end-task", default=None, metavar="NAME",
              help="[a step of the workflow] Commit, push and summarise sub-workflow NAME.")
@click.option("--loop-json", default=None, metavar="FILE",
              help="[with --end-task] What `ralph run --json` printed.")
@click.option("--keep", default=None, metavar="DIR",
              help="[with --end-task] Where to put the files to upload.")
@click.option("--merge-wave", type=click.IntRange(1, None), default=None, metavar="N",
              help="[a step of the workflow] Merge wave N's successful branches and push.")
@click.option("--reports", default=None, metavar="DIR",
              help="[with --merge-wave] The downloaded reports of the wave's jobs.")
@click.option("--waves", default=None, metavar=",1,2,",
              help="[with --merge-wave] The waves this run was given.")
@click.argument("words", nargs=-1, type=click.UNPROCESSED, metavar="[LOOP OPTIONS]...")
def command(project: str | None, plan_dir: str, output: str | None, to_stdout: bool,
            force: bool, jobs: int, triggers: tuple[str, ...], auth: str, finesse: str | None,
            runs_on: str, iteration_timeout: str, model: str | None, claude_args: str | None,
            wait_on_limit: bool, begin_task: str | None, end_task: str | None,
            loop_json: str | None, keep: str | None, merge_wave: int | None,
            reports: str | None, waves: str | None, words: tuple[str, ...]) -> int:
    """Write the GitHub Actions workflow that runs the decomposed plan PLAN_DIR
    (finesse-plans/<session>/) wave by wave on many machines: a job per sub-workflow, a
    merge job per wave. Exit 0 written, 1 a problem, 2 usage error."""
    root = store_for(project).paths.root
    steps = [name for name, given in (("--begin-task", begin_task), ("--end-task", end_task),
                                      ("--merge-wave", merge_wave)) if given is not None]
    if steps:
        from finesse.cli.ralph.ci_steps import run_step

        if len(steps) > 1 or words:
            raise UsageError(f"{steps[0]} is a step of the workflow on its own: give it "
                             "with PLAN_DIR alone")
        return run_step(root, Path(plan_dir), begin_task=begin_task, end_task=end_task,
                        loop_json=loop_json, keep=keep, merge_wave=merge_wave,
                        reports=reports, waves=waves)
    if to_stdout and (output is not None or force):
        raise UsageError("--print writes nothing: leave out --output and --force")
    settings, notes = settings_from(finesse, auth, jobs, runs_on, iteration_timeout,
                                    triggers, model, claude_args, wait_on_limit, words)
    plan = load_ci_plan(root, Path(plan_dir), settings)
    for note in (*notes, *plan.warnings):
        click.echo(f"warning: {note}", err=True)
    text = render(plan)
    if to_stdout:
        click.echo(text, nl=False)
        return 0
    target = _target(root, output, plan.session)
    check_target(target, plan, force=force, shown=_shown(target))
    write_atomic(target, text, follow_links=False)  # --force replaces a link, as it says
    count = sum(len(wave) for wave in plan.waves)
    longest = max(plan.job_minutes(wave) for wave in plan.waves)
    click.echo(f"Wrote {_shown(target)}: {count} sub-workflow(s) in {len(plan.waves)} "
               f"wave(s), at most {jobs} at a time per wave, each job up to {longest} min.")
    if target.parent.parts[-2:] != (".github", "workflows"):
        click.echo("GitHub runs only the workflows in .github/workflows/ at the repository's "
                   "top: move it there to use it.")
    click.echo(f"Commit and push it with {_shown(root / plan.plan_dir)}/, set the repository "
               f"secret {settings.secret}, then run it from the Actions tab (or `gh workflow "
               f"run {target.name}`).")
    return 0
