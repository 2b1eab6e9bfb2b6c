"""`finesse validate PROMPT_PATH`: does a loop prompt carry the ten attributes a loop needs?

With the loop's own flags (`--max-iterations N`, `--completion-promise TEXT` or
`--completion-promise-file FILE`, `--promise-file` being the last one's older name) the
prompt is judged as the loop will run it: the loop's cap and the promise it detects.

Prints one line per attribute (PASS/FAIL, the line that shows it, how to fix it) and one
for the file's layout (prompt-only: nothing before the cold-start paragraph), or with --json
one object. Exits 0 when every attribute passes and the file is prompt-only, 1 otherwise.
A directory is taken for a multi-workflow plan folder: every sub-workflow and the execution
graph are checked (finesse.authoring.workflows.folder).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from finesse.authoring.prompt_check.validate import ValidationReport, validate_prompt
from finesse.authoring.workflows.folder import folder_summary, validate_workflow_folder
from finesse.errors import UsageError
from finesse.loop.grammar import check_promise, check_promise_file, parse_max_iterations
from finesse.support.files import read_text, shown_name

_EVIDENCE_WIDTH = 72


@click.command("validate")
@click.argument("prompt_path")
@click.option("--max-iterations", "max_iterations", default=None, metavar="N",
              help="The loop's --max-iterations: its cap is this number.")
@click.option("--completion-promise", "promise_text", default=None, metavar="TEXT",
              help="The loop's --completion-promise: the prompt must promise this text.")
@click.option("--completion-promise-file", "promise_file", default=None, metavar="FILE",
              help="A file holding the loop's completion promise (the loop's "
                   "--completion-promise-file).")
@click.option("--promise-file", "old_promise_file", default=None, metavar="FILE",
              help="The older name of --completion-promise-file.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def command(prompt_path: str, max_iterations: str | None, promise_text: str | None,
            promise_file: str | None, old_promise_file: str | None, as_json: bool) -> None:
    """Check a Ralph loop prompt for the ten attributes every loop prompt needs.

    Given a multi-workflow plan folder, check every sub-workflow prompt and the
    execution graph.
    """
    given = [(name, value) for name, value in (("--max-iterations", max_iterations),
                                               ("--completion-promise", promise_text),
                                               ("--completion-promise-file", promise_file),
                                               ("--promise-file", old_promise_file))
             if value is not None]
    if not prompt_path.strip():
        raise UsageError("the prompt file's name is empty: give the path of a prompt file "
                         "(or of a plan folder)")
    if os.path.isdir(prompt_path):
        _validate_folder(prompt_path, [name for name, _ in given], as_json)
        return
    promises = [(name, value) for name, value in given if "promise" in name]
    if len(promises) > 1:
        raise UsageError(f"give the loop's promise once, not both {promises[0][0]} and "
                         f"{promises[1][0]}")
    promise = None
    for name, value in promises:
        promise = check_promise(value, name) if name == "--completion-promise" else (
            check_promise_file(read_text(Path(value), subject=f"{name} {shown_name(value)}"),
                          f"{name} {value}"))
    cap = None if max_iterations is None else parse_max_iterations(max_iterations)
    text = read_text(Path(prompt_path), subject=f"prompt file {shown_name(prompt_path)}")
    report = validate_prompt(text, promise=promise, max_iterations=cap)
    if as_json:
        click.echo(json.dumps(report_json(shown_name(prompt_path), report), indent=2,
                              ensure_ascii=False))
    else:
        click.echo(report_table(shown_name(prompt_path), report))
    if not report.passed:
        raise click.exceptions.Exit(1)


def _validate_folder(path: str, flags: list[str], as_json: bool) -> None:
    if flags:
        own = "cap in the execution graph" if flags[0] == "--max-iterations" else "promise file"
        raise UsageError(f"{flags[0]} is for one prompt; each sub-workflow of a plan folder "
                         f"has its own {own}")
    report = validate_workflow_folder(path)
    if as_json:
        click.echo(json.dumps({
            "path": shown_name(path),
            "passed": report.passed,
            "workflows": [report_json(shown_name(os.path.join(path, result.prompt)),
                                      result.report)
                          for result in report.workflows],
            "errors": report.errors,
        }, indent=2, ensure_ascii=False))
    else:
        click.echo(folder_summary(report))
    if not report.passed:
        raise click.exceptions.Exit(1)


def report_json(path: str, report: ValidationReport) -> dict[str, Any]:
    return {
        "path": path,
        "passed": report.passed,
        "attributes": [result.model_dump() for result in report.attributes],
        "prompt_only": report.prompt_only.model_dump(),
    }


def report_table(path: str, report: ValidationReport) -> str:
    width = max(len(result.key) for result in report.attributes)
    lines = []
    for result in report.attributes:
        evidence = _shorten(result.evidence) if result.evidence else "(no line)"
        line = f"{'PASS' if result.passed else 'FAIL'} {result.id:>2} {result.key:<{width}}  "
        line += evidence if result.passed else f"{evidence}  fix: {result.fix}"
        lines.append(line)
    layout = report.prompt_only
    evidence = _shorten(layout.evidence) if layout.evidence else "(no line)"
    lines.append(f"{'PASS' if layout.passed else 'FAIL'}  - {'prompt-only':<{width}}  "
                 + (evidence if layout.passed else f"{evidence}  fix: {layout.fix}"))
    failed = len(report.failed)
    total = len(report.attributes)
    if failed:
        lines.append(f"{path}: {failed} of {total} attributes fail; fix them and run "
                     "`finesse validate` again")
    elif not layout.passed:
        lines.append(f"{path}: all {total} attributes pass, but the file is not prompt-only; "
                     "fix it and run `finesse validate` again")
    else:
        lines.append(f"{path}: all {total} attributes pass")
    return "\n".join(lines)


def _shorten(evidence: str) -> str:
    return evidence if len(evidence) <= _EVIDENCE_WIDTH else evidence[: _EVIDENCE_WIDTH - 1] + "…"


