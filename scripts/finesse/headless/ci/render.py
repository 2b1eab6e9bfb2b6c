"""The workflow file's text: a header saying that `ralph ci` wrote it, from which plan and
with which command, then the workflow as YAML (PyYAML quotes every value that needs it; a
script is a literal block, as written).

The header's `# ralph-ci-plan: <the plan folder from the repository's top>` line is how
`ralph ci` knows a file as its own: it rewrites a file it wrote for the same plan, and
refuses every other file (one the user wrote, another plan's) unless given `--force`.
"""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from finesse.errors import UsageError
from finesse.headless.ci.plan import CiPlan, duration_word
from finesse.headless.ci.workflow import build_workflow
from finesse.support.files import open_regular, shown_name

WRITTEN_BY = "# Written by `ralph ci`"
PLAN_LINE = "# ralph-ci-plan: "
HEADER_BYTES = 64 * 1024  # a file's header is looked for in its first bytes only


class _Dumper(yaml.SafeDumper):  # type: ignore[misc]
    """Block style, lists indented under their key, scripts as literal blocks."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _text(dumper: Any, value: str) -> Any:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value,
                                   style="|" if "\n" in value else None)


_Dumper.add_representer(str, _text)


def command_line(plan: CiPlan) -> list[str]:
    """The `ralph ci` command that writes this workflow again, from the repository's top."""
    settings = plan.settings
    words = ["ralph", "ci", *(["--project", plan.project] if plan.project != "." else []),
             plan.plan_dir, "--jobs", str(settings.jobs), "--auth", settings.auth,
             "--runs-on", settings.runs_on,
             "--iteration-timeout", duration_word(settings.iteration_timeout)]
    for trigger in settings.triggers:
        words += ["--on", f"{trigger.kind}:{trigger.value}"]
    return [*words, "--finesse", settings.finesse, *settings.run_options, *settings.extra]


def render(plan: CiPlan) -> str:
    header = [f"# ralph: the waves of the plan {plan.marker}/ as GitHub Actions jobs.",
              f"{WRITTEN_BY}, which writes it again when run again: change the plan or the",
              "# command, not this file. The command that wrote it:",
              f"#   {shlex.join(command_line(plan))}",
              f"{PLAN_LINE}{plan.marker}", ""]
    data: dict[str, Any] = build_workflow(plan)
    body: str = yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=4096,
                          allow_unicode=True)
    return "\n".join(header) + body


def written_for(text: str) -> str | None:
    """The plan a file `ralph ci` wrote is for, from its header; None for any other file."""
    header = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    if not any(line.startswith(WRITTEN_BY) for line in header):
        return None
    plans = [line.removeprefix(PLAN_LINE).strip() for line in header
             if line.startswith(PLAN_LINE)]
    return plans[0] if len(plans) == 1 else None


def check_target(path: Path, plan: CiPlan, *, force: bool, shown: str = "") -> None:
    """Whether the workflow may be written at `path` (`shown` so in messages): nothing
    there, or a file `ralph ci` wrote for this plan, or anything regular with `force`; a
    UsageError otherwise."""
    shown = shown or shown_name(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as err:
        raise UsageError(f"{shown}: cannot look at it ({err.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        if force:
            return
        raise UsageError(f"{shown} is a symbolic link: give --output for another file, or "
                         "--force to replace the link with the workflow")
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{shown} is not a regular file (a directory, FIFO or device): "
                         "give --output for another file")
    if force:
        return
    handle = open_regular(path)
    if handle is None:
        raise UsageError(f"{shown}: cannot read it: give --output for another file")
    with handle:
        try:
            head = handle.read(HEADER_BYTES)
        except OSError as err:
            raise UsageError(f"{shown}: cannot read it ({err.strerror}): give --output for "
                             "another file") from None
    owner = written_for(head.decode("utf-8", errors="replace"))
    if owner == plan.marker:
        return
    whose = (f"the workflow of another plan, {owner}/" if owner is not None
             else "a workflow ralph ci did not write")
    raise UsageError(f"{shown} is {whose}: give --output for another file, or --force to "
                     "replace it")
