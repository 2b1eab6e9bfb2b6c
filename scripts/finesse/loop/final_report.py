"""What a loop leaves behind when it ends: the Markdown report and the short banner shown to
the user, in the shapes seed 004 gives ("On Success": task, status, iterations, duration,
the verification commands and their output, files modified and total changes; "On Limit
Reached": iterations completed, last attempt, last failure, learnings accumulated, the
options and where the state is saved). Pure text functions."""

from __future__ import annotations

from datetime import datetime

from finesse.models import Gate, IterationRecord, LoopState
from finesse.record import Record
from finesse.recording import RESUMABLE, controls, excerpt
from finesse.results import CommandResult
from finesse.spend import PRICES_DATED, dollars, raised_budgets, receipt
from finesse.support.evidence import fence_for
from finesse.support.files import shown_name
from finesse.support.git import LineChanges

TITLES = {
    "success": "success", "limit": "limit reached", "blocked": "blocked",
    "quiesced": "quiesced", "timeout": "timed out", "cancelled": "cancelled",
    "aborted": "aborted", "failure": "failure", "error": "error", "budget": "budget spent",
    "quota": "usage limit",
}
STATUS = {"limit": "MAX_ITERATIONS", "timeout": "TIMEOUT"}
OUTPUT_LINES = 8


class EndFacts(Record):
    """What the loop changed, measured when it ended."""

    files: list[str]  # changed since the loop started (its notebook aside)
    lines: LineChanges | None  # None: not a git repository, or no starting commit
    is_repository: bool
    state_file: str  # where the ended loop's state is archived, from the project root
    scope: str  # the project directory the loop worked in


def title(state: LoopState) -> str:
    base = TITLES.get(state.outcome or "", "active")
    if state.outcome == "success":
        return f"{base} ({'verified' if state.verified else 'unverified'})"
    return base


def status_word(state: LoopState) -> str:
    if state.outcome == "success":
        return "SUCCESS" if state.verified else "SUCCESS (UNVERIFIED)"
    return STATUS.get(state.outcome or "", (state.outcome or "active").upper())


def duration_text(start: datetime, end: datetime) -> str:
    """`12 min 05 s`: how long a loop or an iteration ran, as the reports show it."""
    seconds = max(0, int((end - start).total_seconds()))
    return f"{seconds // 60} min {seconds % 60:02d} s"


def resume_command(state: LoopState) -> str:
    """The exact command that reopens a resumable loop, with limits that leave room."""
    if state.outcome not in RESUMABLE:
        return ""
    parts = [controls(state)[0]]
    if state.outcome == "limit":
        parts.append(f"--max-iterations {state.max_iterations * 2}")
    if state.outcome == "timeout" and state.timeout_minutes:
        parts.append(f"--timeout-minutes {state.timeout_minutes}")
    if state.outcome == "budget":
        parts.extend(raised_budgets(state))
    return " ".join(parts)


def options(state: LoopState) -> list[tuple[str, str]]:
    """What the user can do after a resumable stop (seed 004's three options): (command,
    what it does), the plain resume once."""
    raised = resume_command(state)
    resume, abort = controls(state)
    found = [(raised, "with room to go on")] if raised != resume else []
    return [*found, (resume, "continue from here"),
            (abort, "give it up: it can no longer be resumed")]


def changes_text(facts: EndFacts) -> str:
    if not facts.is_repository or facts.lines is None:
        return "not counted (not a git repository, or no commit to count from)"
    binary = f", {facts.lines.binary} binary file(s)" if facts.lines.binary else ""
    return f"+{facts.lines.added}, -{facts.lines.removed}{binary}"


def last_attempt(state: LoopState) -> str:
    """What was tried last: the latest `Approach:` line, else the last reply's start."""
    for entry in reversed(state.iterations):
        if entry.approach:
            return f"iteration {entry.number}: {entry.approach}"
    if state.iterations and state.iterations[-1].reply_excerpt:
        return f"iteration {state.iterations[-1].number}: {state.iterations[-1].reply_excerpt}"
    return ""


def last_failure(state: LoopState) -> CommandResult | None:
    red = [result for result in state.last_verification if not result.passed]
    if red:
        return red[0]
    for entry in reversed(state.iterations):
        gate_red = [result for result in entry.gate if not result.passed]
        if gate_red:
            return gate_red[0]
    return None


def banner(state: LoopState, facts: EndFacts, report_path: str) -> str:
    """The short message shown to the user when the loop ends: the same facts as the
    report, in a few lines."""
    lines = [state.end_message]
    if state.outcome == "success":
        lines.append(f"Files modified: {len(facts.files)} ({changes_text(facts)})")
    elif state.outcome in RESUMABLE:
        failure = last_failure(state)
        if failure is not None:
            lines.append(f"Last failure: `{failure.command}` {_how(failure)}")
        if state.learnings:
            lines.append(f"Learnings accumulated: {len(state.learnings)}")
        lines.append("Options: " + " | ".join(command for command, _ in options(state)))
        lines.append(f"State saved to: {facts.state_file}")
    lines.append(f"Report: {report_path}")
    return "\n".join(lines)


def _how(result: CommandResult) -> str:
    if result.timed_out:
        return f"timed out after {result.duration_seconds:.0f} s"
    return "did not start" if result.exit_code is None else f"exit {result.exit_code}"


def verification_lines(results: list[CommandResult], *, output: bool = True) -> list[str]:
    """Seed 004's `$ command` then its output, for each command run last."""
    if not results:
        return ["- none run"]
    lines = []
    for result in results:
        mark = "green" if result.passed else "red"
        took = "" if result.timed_out else f", {result.duration_seconds:.1f} s"
        lines.append(f"- `{result.command}`: {mark} ({_how(result)}{took})")
        tail = "\n".join(result.output_tail.strip().splitlines()[-OUTPUT_LINES:])
        if output and tail:
            fence = fence_for(f"$ {result.command}\n{tail}")
            lines.append(f"  {fence}text\n  $ {result.command}\n"
                         + "\n".join(f"  {line}" for line in tail.splitlines())
                         + f"\n  {fence}")
    return lines


def skipped_checks(state: LoopState) -> list[str]:
    """Verification commands that did not run green at the end of the loop."""
    green = {result.command for result in state.last_verification if result.passed}
    return [command for command in state.verify if command not in green]


def _head(state: LoopState, facts: EndFacts) -> list[str]:
    ended = state.ended_at or state.updated_at
    made = len(state.iterations)
    lines = [
        f"# Ralph loop report: {title(state)}",
        "",
        f"- Task: {excerpt(state.prompt, 200)}",
        f"- Status: {status_word(state)} - {state.end_message}",
        (f"- Iterations completed: {made} (cap {state.max_iterations})"
         if state.outcome in RESUMABLE else
         f"- Iterations: {made} of at most {state.max_iterations}"),
        f"- Duration: {duration_text(state.started_at, ended)} "
        f"({state.started_at:%Y-%m-%d %H:%M:%S} to {ended:%H:%M:%S} UTC)",
        f"- Loop: `{state.loop_id}` (session `{state.session_id}`)",
        f"- Completion promise: `<promise>{state.promise}</promise>`",
        f"- Scope: {shown_name(facts.scope)} (the project directory; nothing outside it is "
        "touched)",
    ]
    if state.plan_file:
        lines.append(f"- Plan: `{state.plan_file}`")
    elif state.notebook:
        lines.append(f"- Notebook: `{state.notebook}` (attempts and review recorded there)")
    if state.headless is not None:
        lines.append(f"- Run headless (`ralph run`): a fresh `{state.headless.claude} -p` per "
                     f"iteration{f', model {state.headless.model}' if state.headless.model else ''}"
                     f"{f', effort {state.effort}' if state.effort else ''}")
    if state.resumes:
        lines.append(f"- Resumed {len(state.resumes)} time(s)")
    if state.forced_past:
        lines.append("- Started with --force past failing prompt checks: "
                     + ", ".join(state.forced_past))
    lines.append(f"- State saved to: `{facts.state_file}`")
    return lines


def render_report(state: LoopState, facts: EndFacts) -> str:
    lines = _head(state, facts)
    lines += ["", "## Task", "", state.prompt, "", "## Verification", ""]
    if state.verify:
        # A stop short of success shows the failing output once, under Last failure.
        lines += verification_lines(state.last_verification,
                                    output=state.outcome not in RESUMABLE)
        skipped = skipped_checks(state)
        if skipped:
            lines += ["", "Not verified green at the end: "
                      + ", ".join(f"`{c}`" for c in skipped)]
    else:
        lines.append("No verification command: completion rests on the agent's word. Add "
                     "`--verify CMD` (or a plan's `## Verification Commands`) to have the "
                     "plugin check it.")
    if state.outcome == "success":
        lines += ["", "## Summary", "", f"- Files modified: {len(facts.files)}",
                  f"- Total changes: {changes_text(facts)} (since the loop started)"]
    if state.outcome in RESUMABLE:
        lines += _limit_sections(state)
    if state.gate is not None:
        lines += _gate_section(state, state.gate)
    lines += spend_section(state)
    lines += ["", "## Files changed", ""]
    lines += [f"- `{shown_name(name)}`" for name in facts.files] or ["- none"]
    lines += ["", "## Learnings accumulated", ""]
    lines += [f"- {learning}" for learning in state.learnings] or ["- none recorded"]
    if state.blocker:
        lines += ["", "## Blocker", "", state.blocker]
    lines += ["", "## Iterations", ""]
    lines += [_iteration_line(entry) for entry in state.iterations] or ["- none"]
    return "\n".join(lines) + "\n"


def _limit_sections(state: LoopState) -> list[str]:
    """Seed 004's "On Limit Reached": what was tried last, what failed, what was learned,
    and what the user can do now."""
    lines = ["", "## Last attempt", "", last_attempt(state) or "(none recorded)", "",
             "## Last failure", ""]
    failure = last_failure(state)
    lines += verification_lines([failure]) if failure is not None else ["(none recorded)"]
    lines += ["", "## Options", ""]
    lines += [f"- `{command}` ({what})" for command, what in options(state)]
    if state.outcome == "limit":
        lines += ["", "Blocked in seed 001's sense: the cap ended the loop before a verified "
                  "result; the notebook's Review records the evidence and what to do."]
    return lines


def spend_section(state: LoopState) -> list[str]:
    """The receipts: tokens and estimated cost per iteration, the total, what it cost to
    reach green and what rejected claims cost. Nothing when no usage was read."""
    if not any(entry.usage for entry in state.iterations):
        return []
    spent = receipt(state)
    lines = ["", "## Spend (estimated)", "",
             "| iteration | result | tokens | cache reads | estimated cost |",
             "| --- | --- | ---: | ---: | ---: |"]
    lines += [f"| {entry.number} | {entry.result} | {part.billed_tokens:,} | "
              f"{part.cache_read:,} | ${part.cost:,.2f} |" for entry, part in spent.rows]
    whole = spent.total
    lines += [f"| total | | {whole.billed_tokens:,} | {whole.cache_read:,} | "
              f"${whole.cost:,.2f} |", ""]
    if spent.to_green is not None:
        lines.append(f"- Cost to reach green: {dollars(spent.to_green)}")
    lines.append(f"- Spent on rejected completion claims: {dollars(spent.rejected_cost)} "
                 f"({spent.rejected} claim(s))")
    if whole.partial:
        lines.append("- Some iterations wrote more than could be read: their usage is partial")
    lines.append(f"- Prices: dollars per million tokens, dated {PRICES_DATED}; tokens count "
                 "input, cache creation and output, cache reads apart")
    return lines


def _gate_section(state: LoopState, gate: Gate) -> list[str]:
    lines = ["", "## Gate", "", "Gate: " + ", ".join(f"`{c}`" for c in gate.commands)]
    if gate.snapshot_commit:
        lines.append(f"- snapshot of the starting state (--allow-dirty): "
                     f"`{gate.snapshot_commit}`")
    lines += [_gate_line(entry) for entry in state.iterations]
    lines.append(f"- red streak at the end: {gate.red_streak}; empty iterations: "
                 f"{gate.empty_iterations}")
    return lines


def _gate_line(entry: IterationRecord) -> str:
    text = f"- iteration {entry.number}: {entry.gate_action or 'no gate run'}"
    if entry.commit:
        text += f" `{entry.commit}`"
    if entry.restored or entry.removed:
        text += f" (restored {len(entry.restored)}, removed {len(entry.removed)})"
    if entry.untouched:
        text += (" - not reverted inside (submodules: check them by hand): "
                 + ", ".join(f"`{shown_name(name)}`" for name in entry.untouched))
    return text


def _iteration_line(entry: IterationRecord) -> str:
    text = f"- {entry.number}: {entry.result}"
    if entry.approach:
        text += f"; approach: {entry.approach}"
    if entry.verification:
        red = [result.command for result in entry.verification if not result.passed]
        text += "; verification " + ("red: " + ", ".join(red) if red else "green")
    return text
