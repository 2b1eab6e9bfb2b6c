"""`ralph statusline`: Claude Code's status line command, and the loops' window on quota.

Claude Code runs the command its settings name under `statusLine`, with one JSON document
on stdin (2.1.328: `session_id`, `workspace.project_dir`, `model`, `cost`,
`context_window.used_percentage`, and for plans with usage windows `rate_limits.five_hour`
and `rate_limits.seven_day`, each `used_percentage` and `resets_at` in epoch seconds). This
prints one short line: the session's loop (iteration, last verification), its tokens and
estimated cost, the quota used. When the project has active loops it also records the
latest window figures in `.claude/ralph/quota.json`, where `--stop-at-quota` reads them.

Standard library only and quick (it runs after every change in the conversation). A
command it chains to (`--chain CMD`, set by `ralph statusline --install --force` over an
existing status line) runs first, with the same input, and its first line is shown before
ours. Whatever goes wrong, it prints a line and exits 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from finesse.models import LoopState
from finesse.results import Quota
from finesse.spend import totals
from finesse.state.paths import StatePaths, is_valid_session_id
from finesse.state.quota import record_quota
from finesse.state.store import LoopStore
from finesse.support import processes
from finesse.support.numbers import epoch_time, percentage

CHAIN_TIMEOUT_SECONDS = 2.0


def _when(value: object) -> datetime | None:
    when = epoch_time(value)
    return when if when is not None and when.timestamp() > 0 else None


def refused_percentages(data: Mapping[str, Any]) -> list[str]:
    """The usage windows whose `used_percentage` is given but is no percentage."""
    limits = data.get("rate_limits")
    if not isinstance(limits, dict):
        return []
    return [name for name in ("five_hour", "seven_day")
            if isinstance(found := limits.get(name), dict)
            and found.get("used_percentage") is not None
            and percentage(found["used_percentage"]) is None]


def quota_of(data: Mapping[str, Any], now: datetime) -> Quota | None:
    """The usage windows in the status line's input, None when it carries none."""
    limits = data.get("rate_limits")
    if not isinstance(limits, dict):
        return None

    def window(name: str) -> tuple[float | None, datetime | None]:
        found = limits.get(name)
        if not isinstance(found, dict):
            return None, None
        return percentage(found.get("used_percentage")), _when(found.get("resets_at"))

    five, five_resets = window("five_hour")
    week, week_resets = window("seven_day")
    if five is None and week is None:
        return None
    return Quota(at=now, five_hour=five, five_hour_resets_at=five_resets, seven_day=week,
                 seven_day_resets_at=week_resets)


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


def describe(state: LoopState | None, quota: Quota | None) -> str:
    parts = []
    if state is None:
        parts.append("ralph: no loop")
    else:
        parts.append(f"ralph {state.iteration}/{state.max_iterations}")
        if state.last_verification:
            green = all(result.passed for result in state.last_verification)
            parts.append("verify green" if green else "verify red")
        spent = totals(state)
        parts.append(f"{_tokens(spent.billed_tokens)} tok ~${spent.cost:.2f} est")
    if quota is not None:
        if quota.five_hour is not None:
            parts.append(f"5h {quota.five_hour:g}%")
        if quota.seven_day is not None:
            parts.append(f"7d {quota.seven_day:g}%")
    return " · ".join(parts)


def _chained(command: str, raw: bytes) -> str:
    try:
        done = subprocess.run(processes.shell(command), input=raw, capture_output=True,
                              timeout=CHAIN_TIMEOUT_SECONDS)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = done.stdout.decode("utf-8", errors="replace").splitlines()
    return lines[0] if lines else ""


def render(raw: bytes, env: Mapping[str, str], now: datetime, chain: str | None) -> str:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        data = {}
    data = data if isinstance(data, dict) else {}
    workspace = data.get("workspace")
    project = workspace.get("project_dir") if isinstance(workspace, dict) else None
    project = project or env.get("CLAUDE_PROJECT_DIR") or data.get("cwd") or os.getcwd()
    store = LoopStore(StatePaths(Path(str(project))))
    quota = quota_of(data, now)
    session = data.get("session_id")
    state = None
    if store.paths.loops.is_dir():
        if quota is not None:
            record_quota(store.paths, quota)
        for name in refused_percentages(data):
            store.log(f"status line: rate_limits.{name}.used_percentage is no percentage "
                      "(NaN, infinite, negative or not a number): refused")
        if is_valid_session_id(session):
            try:
                state = store.peek(str(session))
            except Exception:  # a corrupt file is the Stop hook's to report
                state = None
    line = describe(state, quota)
    before = _chained(chain, raw) if chain else ""
    return f"{before} | {line}" if before else line


def main(argv: Sequence[str] | None = None, stdin: BinaryIO | None = None,
         stdout: TextIO | None = None) -> int:
    args = list(sys.argv[2:] if argv is None else argv)
    chain = args[args.index("--chain") + 1] if "--chain" in args[:-1] else None
    out = sys.stdout if stdout is None else stdout
    try:
        raw = (sys.stdin.buffer if stdin is None else stdin).read()
        out.write(render(raw, os.environ, datetime.now(UTC), chain) + "\n")
    except Exception:
        out.write("ralph: status unavailable\n")
    return 0
