"""Where a loop's HTML report goes: beside its Markdown report, same name, `.html`, unless
the project's config says `"no_html": true`. Writing it never fails a loop's end: a report
folder that cannot be written, or a path there that is not a regular file (a FIFO, a
directory), is logged and left as it is."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from finesse.loop.final_report import EndFacts
from finesse.loop.html.loop_page import render_html
from finesse.loop.project_config import html_wanted
from finesse.models import LoopState
from finesse.state.store import LoopStore
from finesse.support.files import shown_name
from finesse.support.writes import write_atomic


def html_path(markdown: str | os.PathLike[str]) -> Path:
    return Path(markdown).with_suffix(".html")


def _not_a_file(path: Path) -> bool:
    try:
        return not stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def write_html(path: Path, page: str) -> str:
    """Write the page at `path`; "" when done, else why not, in a few words."""
    try:
        if _not_a_file(path):
            return "something that is not a regular file is there; it was left alone"
        write_atomic(path, page)
    except (OSError, ValueError) as err:
        return getattr(err, "strerror", None) or str(err)
    return ""


def write_loop_html(store: LoopStore, state: LoopState, facts: EndFacts) -> Path | None:
    """The HTML report of a loop that has just ended, beside its Markdown report; None when
    the config turns it off or it could not be written (logged)."""
    if not state.report_path or not html_wanted(store.paths.root):
        return None
    target = html_path(state.report_path)
    problem = write_html(target, render_html(state, facts))
    if problem:
        store.log(f"the HTML report {shown_name(str(target))} of loop {state.loop_id} was not "
                  f"written: {problem}")
        return None
    return target
