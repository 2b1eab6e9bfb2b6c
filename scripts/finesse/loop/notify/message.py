"""What a notification says: the POST body (outcome, task, iterations, duration, spend,
report paths, and `text`, the one line a Slack or Discord incoming webhook shows as it is;
`content` holds the same line for Discord's own webhooks), and the report's JSON that a
`--notify-cmd` command reads on its stdin (`ralph report --json`'s record)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from finesse.loop.final_report import title
from finesse.models import LoopState
from finesse.recording import excerpt
from finesse.schema import to_dict
from finesse.spend import receipt, totals

TASK_CHARS = 200
TEXT_CHARS = 1900  # under Discord's 2,000 characters a message


def loop_record(state: LoopState) -> dict[str, Any]:
    """An ended loop's record, with its spend under `spend` (`ralph report --json`)."""
    return {**to_dict(state), "spend": receipt(state).as_dict()}


def _relative(path: str, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


def _duration(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    return (f"{hours} h {rest // 60:02d} min" if hours else
            f"{rest // 60} min {rest % 60:02d} s")


def body(state: LoopState, html: Path | None) -> dict[str, Any]:
    """The JSON a `--notify URL` receives."""
    root = Path(state.project_root)
    ended = state.ended_at or state.updated_at
    seconds = max(0, int((ended - state.started_at).total_seconds()))
    spent = totals(state)
    report = _relative(state.report_path, root) if state.report_path else ""
    task = excerpt(state.prompt, TASK_CHARS)
    line = (f"Ralph loop {title(state)} after {len(state.iterations)}/{state.max_iterations} "
            f"iterations in {_duration(seconds)}, {spent.billed_tokens:,} tokens, "
            f"~${spent.cost:,.2f} est: {task}" + (f" (report: {report})" if report else ""))
    line = line.replace("\r", " ").replace("\n", " ")[:TEXT_CHARS]
    return {
        "text": line,
        "content": line,
        "outcome": state.outcome,
        "title": title(state),
        "verified": state.verified,
        "task": task,
        "iterations": len(state.iterations),
        "max_iterations": state.max_iterations,
        "duration_seconds": seconds,
        "spend": {"tokens": spent.billed_tokens, "cache_read_tokens": spent.cache_read,
                  "estimated_cost_usd": round(spent.cost, 6), "estimated": True},
        "report": report,
        "html_report": _relative(str(html), root) if html is not None else None,
        "loop_id": state.loop_id,
        "project": str(root),
        "headless": state.headless is not None,
        "end_message": state.end_message,
    }
