"""The job summaries (`$GITHUB_STEP_SUMMARY`, Markdown) the workflow's steps write: one per
sub-workflow (its outcome, iterations, tokens, branch and exit code, then its loop's own
report folded away), and one per merge job (a row per sub-workflow of the wave, why the
merging stopped, the conflicting files, and what to do next)."""

from __future__ import annotations

from pathlib import Path

from finesse.errors import FinesseError
from finesse.headless.ci.jobs import REMOTE, Begin, End, WaveMerge
from finesse.headless.exits import RESUMABLE_STOP, SUCCESS
from finesse.loop.final_report import title
from finesse.spend import dollars, totals
from finesse.support.files import read_bytes

REPORT_CHARS = 200_000  # a step's summary may hold 1 MiB; the report gets at most this
MEANINGS = {SUCCESS: "a verified success", 1: "a failure", 2: "a usage error: nothing ran",
            RESUMABLE_STOP: "a resumable stop", 130: "cancelled (SIGINT)",
            143: "cancelled (SIGTERM)"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def skipped(begin: Begin) -> str:
    workflow = begin.workflow
    return (f"### wave {workflow.wave} · {workflow.name}: not run\n\n"
            f"{begin.note} (`{begin.branch}`).\n")


def _report(end: End) -> list[str]:
    state = end.loop.state
    if state is None or not state.report_path:
        return []
    try:  # the report keeps the bytes of a name that is not UTF-8: shown as U+FFFD here
        text = read_bytes(Path(state.report_path), subject="the loop's report").decode(
            "utf-8", "replace")
    except FinesseError:
        return []
    cut = text[:REPORT_CHARS]
    more = "\n\n(cut here: the whole report is in this job's artifact)" if cut != text else ""
    return ["", f"<details><summary>The loop's report ({state.loop_id})</summary>", "",
            cut.rstrip() + more, "", "</details>"]


def task(end: End) -> str:
    workflow, output = end.workflow, end.loop
    state = output.state
    outcome = title(state) if state is not None else "no loop record"
    lines = [f"### wave {workflow.wave} · {workflow.name}: {outcome}", ""]
    if state is not None:
        spent = totals(state)
        lines += [f"- Iterations: {len(state.iterations)} of {state.max_iterations}",
                  f"- Tokens: {spent.billed_tokens:,} ({dollars(spent.cost)})"]
    if output.exit_code is not None:
        meaning = MEANINGS.get(output.exit_code, "")
        lines.append(f"- Exit code: {output.exit_code}" + (f" ({meaning})" if meaning else ""))
    where = (f"pushed to {REMOTE} at `{end.pushed[:12]}`" if end.pushed else "not pushed")
    lines.append(f"- Branch: `{end.branch}`, {where}")
    if state is not None and state.end_message:
        lines += ["", state.end_message]
    if output.problem:
        lines += ["", f"- {output.problem}"]
    lines += [f"- {problem}" for problem in end.problems]
    return "\n".join([*lines, *_report(end)]) + "\n"


def merge(done: WaveMerge) -> str:
    if not done.selected:
        return (f"### merge wave {done.wave} into `{done.base}`: not chosen\n\n"
                f"Wave {done.wave} was not among the waves this run was given.\n")
    ran = [row for row in done.rows if row.loop is not None]
    verdict = (f"stopped: {done.stopped}" if done.stopped else
               f"{len(done.merged)} of {len(ran)} branch(es) that ran merged")
    lines = [f"### merge wave {done.wave} into `{done.base}`: {verdict}", "",
             "| sub-workflow | outcome | branch | merge commit | note |",
             "| --- | --- | --- | --- | --- |"]
    for row in done.rows:
        commit = f"`{row.merge_commit[:12]}`" if row.merge_commit else "-"
        lines.append(f"| {row.name} | {row.outcome} | `{row.branch}` | {commit} | "
                     f"{_cell(row.note)} |")
    if done.conflicts:
        lines += ["", "Conflicting files: " + ", ".join(f"`{_cell(name)}`"
                                                        for name in done.conflicts)]
    if done.stopped:
        failed = next((row for row in done.rows if row.note.startswith("merge failed")), None)
        how = (f"Merge `{failed.branch}` into `{done.base}` yourself (`git fetch {REMOTE} && "
               f"git switch {done.base} && git merge --no-ff {REMOTE}/{failed.branch}`) and "
               "push, then run this workflow again: branches already merged count as done."
               if failed is not None else "Fix what stopped it, then re-run this job.")
        lines += ["", f"**The waves after this one do not run.** {how}"]
    return "\n".join(lines) + "\n"
