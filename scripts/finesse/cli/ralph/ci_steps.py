"""The steps the jobs of a `ralph ci` workflow run (`finesse.headless.ci.jobs`): each says
what it did in the job's log, sets the step's outputs (`$GITHUB_OUTPUT`) and writes the job
summary (`$GITHUB_STEP_SUMMARY`); outside GitHub Actions the summary goes to stdout."""

from __future__ import annotations

import os
from pathlib import Path

import click

from finesse.authoring.workflows.folder import LoadedGraph, load_execution_graph
from finesse.errors import UsageError
from finesse.headless.ci import jobs, summary
from finesse.support.writes import storable


def _append(variable: str, text: str) -> bool:
    """Append to the file GitHub names in `variable`; False when it names none."""
    where = os.environ.get(variable)
    if not where:
        return False
    with open(where, "ab") as handle:
        handle.write(storable(text))
    return True


def _summarise(text: str) -> None:
    if not _append("GITHUB_STEP_SUMMARY", text + "\n"):
        click.echo(text)


def _output(**values: str) -> None:
    _append("GITHUB_OUTPUT", "".join(f"{key}={value}\n" for key, value in values.items()))


def _needs(option: str, value: str | None, step: str) -> Path:
    if value is None:
        raise UsageError(f"{step} needs {option}")
    return Path(value)


def _waves(value: str | None, loaded: LoadedGraph) -> set[int]:
    if value is None or not value.strip(" ,"):
        return set(range(1, len(loaded.waves) + 1))
    try:
        return {int(part) for part in value.split(",") if part.strip()}
    except ValueError:
        raise UsageError(f"--waves takes wave numbers such as ,1,2, not {value!r}") from None


def run_step(root: Path, plan_dir: Path, *, begin_task: str | None, end_task: str | None,
             loop_json: str | None, keep: str | None, merge_wave: int | None,
             reports: str | None, waves: str | None) -> int:
    loaded = load_execution_graph(plan_dir if plan_dir.is_absolute() else root / plan_dir)
    if begin_task is not None:
        begun = jobs.begin_task(root, loaded, begin_task)
        _output(run="true" if begun.run else "false")
        if begun.run:
            click.echo(f"{begin_task}: on the new branch {begun.branch}")
        else:
            click.echo(f"{begin_task}: not run: {begun.note}")
            _summarise(summary.skipped(begun))
        return 0
    if end_task is not None:
        end = jobs.end_task(root, loaded, end_task,
                            _needs("--loop-json", loop_json, "--end-task"),
                            _needs("--keep", keep, "--end-task"))
        text = summary.task(end)
        _summarise(text)
        (Path(keep or ".") / f"{end_task}.summary.md").write_text(text, encoding="utf-8")
        if end.pushed:
            click.echo(f"{end_task}: pushed {end.branch} at {end.pushed[:12]}")
        for problem in end.problems:
            click.echo(f"{end_task}: {problem}", err=True)
        return 0 if end.pushed and not end.problems else 1
    assert merge_wave is not None
    done = jobs.merge_wave(root, loaded, merge_wave,
                           _needs("--reports", reports, "--merge-wave"), _waves(waves, loaded))
    _output(commit=done.commit)
    for row in done.rows:
        click.echo(f"wave {merge_wave} {row.name}: {row.outcome}"
                   + (f", merged {row.merge_commit[:12]}" if row.merge_commit else "")
                   + (f" ({row.note})" if row.note and not row.merge_commit else ""))
    _summarise(summary.merge(done))
    if done.stopped:
        click.echo(f"::error::merge wave {merge_wave}: {done.stopped}")
        return 1
    return 0
