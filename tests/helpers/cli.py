"""The `ralph` command line run in process, and ended loops for it to find."""

from __future__ import annotations

from pathlib import Path

import pytest

from finesse.cli.ralph import main
from finesse.state.store import LoopStore
from tests.helpers.states import T0, make_state


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`ralph ARGV` through main: its exit code, stdout and stderr."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def ended_loop(store: LoopStore, root: Path, suffix: str, minute: int, outcome: str = "limit",
               report_text: str | None = None, **fields: object) -> str:
    """Archive an ended loop whose report file holds `report_text`; returns its id."""
    loop_id = f"20261130T07{minute:02d}00Z-0b7c5c3e-{suffix}"
    report = store.paths.reports / f"{loop_id}.md"
    if report_text is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(report_text, encoding="utf-8")
    ended_at = T0.replace(minute=minute)
    store.archive(make_state(
        root, loop_id=loop_id, started_at=T0, updated_at=ended_at, ended_at=ended_at,
        outcome=outcome, end_message=f"ended {suffix}", report_path=str(report), **fields,
    ))
    return loop_id
