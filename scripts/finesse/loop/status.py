"""What is said about a running loop: the context the model is given when it starts (or is
re-stated after a compaction or resume), and the lines of /ralph-status and `ralph status`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from finesse.judging.prompts import orchestrator_context
from finesse.judging.report_sections import status_lines
from finesse.models import LoopState, judge_of
from finesse.prompts import iteration_header, protocol_notes
from finesse.recording import excerpt
from finesse.spend import dollars, totals
from finesse.support.claude_settings import statusline_configured


def start_context(state: LoopState) -> str:
    """What the model is told when a loop starts: the task, verbatim, under the header."""
    if state.judge is not None:
        return orchestrator_context(state, judge_of(state))
    return (
        "A Ralph loop is running in this session (finesse plugin). You will be given the same "
        "task again each time you stop, until you output the completion promise or the "
        "iteration cap is reached.\n\n"
        f"{iteration_header(state)}\n\n"
        "The task, verbatim:\n"
        "<ralph-task>\n"
        f"{state.prompt}\n"
        "</ralph-task>\n\n"
        f"{protocol_notes(state)}"
    )


def _budgets(state: LoopState) -> list[str]:
    spent = totals(state)
    found = []
    if state.budgets.max_tokens is not None:
        found.append(f"{spent.billed_tokens:,} of {state.budgets.max_tokens:,} tokens")
    if state.budgets.max_cost is not None:
        found.append(f"${spent.cost:,.2f} of ${state.budgets.max_cost:,.2f} (estimated)")
    if state.budgets.stop_at_quota is not None:
        found.append(f"stops at {state.budgets.stop_at_quota}% of the five-hour or weekly window")
    return found


def describe(state: LoopState, now: datetime, *, history: bool = False) -> str:
    """A few lines about one active loop, for /ralph-status and `ralph status`."""
    minutes = int((now - state.started_at).total_seconds() // 60)
    lines = [
        f"Ralph loop {state.loop_id}: iteration {state.iteration}/{state.max_iterations}, "
        f"promise <promise>{state.promise}</promise>, running {minutes} min "
        f"({'headless run (ralph run)' if state.headless else 'session'} {state.session_id})",
        f"task: {excerpt(state.prompt, 120)}",
    ]
    if state.verify:
        lines.append("verify: " + "; ".join(state.verify))
    if state.last_reply_excerpt:
        lines.append(f"last reply: {excerpt(state.last_reply_excerpt, 160)}")
    spent = totals(state)
    if spent.billed_tokens or spent.cost:
        lines.append(f"spend: {spent.billed_tokens:,} tokens (+{spent.cache_read:,} cache "
                     f"reads), {dollars(spent.cost)}")
    budgets = _budgets(state)
    if budgets:
        lines.append("budget: " + "; ".join(budgets))
    lines += status_lines(state)
    if history and state.judge is None:
        for record in state.iterations:
            line = f"  iteration {record.number}: {record.result}"
            if record.approach:
                line += f" - {excerpt(record.approach, 100)}"
            red = [result.command for result in record.verification if not result.passed]
            if record.verification:
                line += f" [verify {'red: ' + ', '.join(red) if red else 'green'}]"
            lines.append(line)
    return "\n".join(lines)


def start_notes(state: LoopState, warnings: list[str], forced: list[str]) -> list[str]:
    """What the user is told when a loop starts: its bounds, how done will be judged, where
    its attempts are recorded, and any warning."""
    notes = [
        f"Ralph loop started: up to {state.max_iterations} iterations, ends on "
        f"<promise>{state.promise}</promise>. /ralph-status to watch, /cancel-ralph to stop."
    ]
    if state.judge is not None:
        notes = [f"Ralph loop started in judge mode: up to {state.max_iterations} attempts, "
                 "each a fresh ralph-worker; only the read-only ralph-judge can pass it, "
                 "checked by " + ", ".join(f"`{c}`" for c in state.verify) + " (run by the "
                 "plugin). /ralph-status to watch, /cancel-ralph to stop."]
    elif state.verify:
        notes.append("Completion is verified: " + ", ".join(f"`{c}`" for c in state.verify)
                     + " must pass when Claude claims it.")
    elif state.gate is not None:
        notes.append("Completion is checked by the gate: " + ", ".join(
            f"`{c}`" for c in state.gate.commands) + " must be green.")
    else:
        notes.append("No verification command: completion will rest on Claude's word and be "
                     "reported as unverified. Add --verify CMD (or --plan with "
                     "## Verification Commands) to have it checked.")
    if state.notebook and not state.plan_file:
        notes.append(f"Attempts and the review are recorded in {state.notebook} "
                     "(--no-plan to leave it alone).")
    if state.budgets.stop_at_quota is not None and not statusline_configured(
            Path(state.project_root), Path.home()):
        notes.append("warning: --stop-at-quota needs the figures Claude Code gives its status "
                     "line, and no settings file runs `ralph statusline`: run `ralph "
                     "statusline --install` (or the stop will never fire)")
    if state.budgets.max_cost is not None:
        notes.append(f"--max-cost ${state.budgets.max_cost:,.2f}: costs are estimated from token "
                     "prices, not billed amounts")
    notes.extend(f"warning: {warning}" for warning in warnings)
    if forced:
        notes.append(f"warning: started with --force past failing checks: {', '.join(forced)}")
    return notes
