"""What a loop leaves behind when it ends: a Markdown report, a one-line banner for the user,
the iteration entries and the review written into the plan. Pure text functions."""

from __future__ import annotations

from datetime import datetime

from finesse.engine import RESUMABLE
from finesse.models import CommandResult, IterationRecord, LoopState
from finesse.support.evidence import fence_for

TITLES = {
    "success": "success",
    "limit": "limit reached",
    "blocked": "blocked",
    "quiesced": "quiesced",
    "timeout": "timed out",
    "cancelled": "cancelled",
    "failure": "failure",
    "error": "error",
}


def _minutes(start: datetime, end: datetime) -> str:
    seconds = max(0, int((end - start).total_seconds()))
    return f"{seconds // 60} min {seconds % 60:02d} s"


def resume_command(state: LoopState) -> str:
    """The exact command that reopens a resumable loop, with limits that leave room."""
    if state.outcome not in RESUMABLE:
        return ""
    parts = ["/ralph-resume"]
    if state.outcome == "limit":
        parts.append(f"--max-iterations {state.max_iterations * 2}")
    if state.outcome == "timeout" and state.timeout_minutes:
        parts.append(f"--timeout-minutes {state.timeout_minutes}")
    return " ".join(parts)


def banner(state: LoopState, report_path: str) -> str:
    """The short message shown to the user when the loop ends."""
    lines = [state.end_message]
    command = resume_command(state)
    if command:
        lines.append(f"Resume: {command}")
    lines.append(f"Report: {report_path}")
    return "\n".join(lines)


def _verification_lines(results: list[CommandResult]) -> list[str]:
    if not results:
        return ["- none run"]
    lines = []
    for result in results:
        status = ("timed out" if result.timed_out
                  else f"exit {result.exit_code}" if result.exit_code is not None
                  else "did not start")
        mark = "green" if result.passed else "red"
        lines.append(f"- `{result.command}`: {mark} ({status}, {result.duration_seconds:.1f} s)")
        tail = "\n".join(result.output_tail.strip().splitlines()[-8:])
        if tail:
            fence = fence_for(tail)
            lines.append(f"  {fence}text\n" + "\n".join(f"  {line}" for line in tail.splitlines())
                         + f"\n  {fence}")
    return lines


def skipped_checks(state: LoopState) -> list[str]:
    """Verification commands that did not run green at the end of the loop."""
    green = {result.command for result in state.last_verification if result.passed}
    return [command for command in state.verify if command not in green]


def render_report(state: LoopState, files_changed: list[str]) -> str:
    ended = state.ended_at or state.updated_at
    lines = [
        f"# Ralph loop report: {TITLES.get(state.outcome or '', 'active')}",
        "",
        f"- Loop: `{state.loop_id}` (session `{state.session_id}`)",
        f"- Status: {state.outcome} - {state.end_message}",
        f"- Iterations: {len(state.iterations)} of at most {state.max_iterations}",
        f"- Duration: {_minutes(state.started_at, ended)} "
        f"({state.started_at:%Y-%m-%d %H:%M:%S} to {ended:%H:%M:%S} UTC)",
        f"- Completion promise: `<promise>{state.promise}</promise>`",
    ]
    if state.plan_file:
        lines.append(f"- Plan: `{state.plan_file}`")
    if state.resumes:
        lines.append(f"- Resumed {len(state.resumes)} time(s)")
    if state.forced_past:
        lines.append("- Started with --force past failing prompt checks: "
                     + ", ".join(state.forced_past))
    command = resume_command(state)
    if command:
        lines.append(f"- Resume with: `{command}`")
    lines += ["", "## Task", "", state.prompt, "", "## Verification evidence", ""]
    lines += _verification_lines(state.last_verification)
    skipped = skipped_checks(state)
    if skipped:
        lines += ["", "Not verified green at the end: " + ", ".join(f"`{c}`" for c in skipped)]
    if state.gate:
        lines += ["", "## Gate", "", "Gate: " + ", ".join(f"`{c}`" for c in state.gate)]
        if state.snapshot_commit:
            lines.append(f"- snapshot of the starting state (--allow-dirty): "
                         f"`{state.snapshot_commit}`")
        for record in state.iterations:
            lines.append(_gate_line(record))
        lines.append(f"- red streak at the end: {state.red_streak}; empty iterations: "
                     f"{state.empty_iterations}")
    lines += ["", "## Files changed", ""]
    lines += [f"- `{name}`" for name in files_changed] or ["- none"]
    lines += ["", "## Learnings", ""]
    lines += [f"- {learning}" for learning in state.learnings] or ["- none recorded"]
    if state.blocker:
        lines += ["", "## Blocker", "", state.blocker]
    lines += ["", "## Iterations", ""]
    lines += [_iteration_line(record) for record in state.iterations] or ["- none"]
    return "\n".join(lines) + "\n"


def _gate_line(record: IterationRecord) -> str:
    text = f"- iteration {record.number}: {record.gate_action or 'no gate run'}"
    if record.commit:
        text += f" `{record.commit}`"
    if record.restored or record.removed:
        text += f" (restored {len(record.restored)}, removed {len(record.removed)})"
    return text


def _iteration_line(record: IterationRecord) -> str:
    text = f"- {record.number}: {record.result}"
    if record.approach:
        text += f"; approach: {record.approach}"
    if record.verification:
        red = [result.command for result in record.verification if not result.passed]
        text += "; verification " + ("red: " + ", ".join(red) if red else "green")
    return text


def attempt_entry(record: IterationRecord) -> str:
    """The plan's `## Attempts` entry for one iteration."""
    lines = [f"### Iteration {record.number} ({record.ended_at:%Y-%m-%d %H:%M} UTC)",
             f"- Result: {record.result}"]
    for label, value in (("Approach", record.approach), ("Evidence", record.evidence),
                         ("Learning", record.learning), ("Next", record.next_action)):
        if value:
            lines.append(f"- {label}: {value}")
    for result in record.verification:
        status = "green" if result.passed else (
            "timed out" if result.timed_out else f"red (exit {result.exit_code})")
        lines.append(f"- Verifier: `{result.command}` {status}")
    return "\n".join(lines) + "\n"


def review_text(state: LoopState, files_changed: list[str]) -> str:
    """The plan's `## Review` at the end of the loop."""
    lines = [f"Loop `{state.loop_id}` ended: {state.outcome} - {state.end_message}", "",
             "Changes made:"]
    lines += [f"- `{name}`" for name in files_changed] or ["- none"]
    lines += ["", "Verification evidence:"]
    lines += [line for line in _verification_lines(state.last_verification)
              if not line.startswith("  ")]
    skipped = skipped_checks(state)
    lines += ["", "Skipped checks:"]
    lines += [f"- `{command}` (not green at the end)" for command in skipped] or ["- none"]
    lines += ["", "Remaining blockers:", f"- {state.blocker}" if state.blocker else "- none"]
    return "\n".join(lines) + "\n"
