"""What judge mode adds to what a loop leaves behind: seed 002's final status (what passes,
what fails, the smallest next actions) when the budget ends the loop, every attempt in the
report (worker JSON, judge JSON, the plugin's verifier runs, agent ids, durations), and a
few lines for the banner and `ralph status`. Pure text functions; "" for other loops."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from finesse.judging.records import Attempt
from finesse.models import LoopState
from finesse.support.evidence import fence_for

NEXT_ACTIONS = 5


def _seconds(start: datetime | None, end: datetime | None) -> str:
    if start is None or end is None:
        return "?"
    return f"{max(0.0, (end - start).total_seconds()):.0f} s"


def final_status(state: LoopState) -> str:
    """Seed 002's final status when the loop stops short of a pass: from the last judge's
    verdict and the plugin's own last verifier run."""
    judge = state.judge
    if judge is None:
        return ""
    green = [f"`{r.command}`" for r in state.last_verification if r.passed]
    red = [f"`{r.command}` " + ("timed out" if r.timed_out else f"exit {r.exit_code}")
           for r in state.last_verification if not r.passed]
    last = judge.last_verdict()
    verdict = (last.verdict or {}) if last is not None else {}
    blocking = [str(item) for item in verdict.get("blocking_issues", [])]
    actions = [str(item) for item in verdict.get("required_actions", [])][:NEXT_ACTIONS]
    if not actions and last is not None and last.focus:
        actions = [last.focus]
    if not state.last_verification:
        passes = "no verifier has run yet"
    else:
        passes = ", ".join(green) or "no verifier is green"
    lines = [
        f"Final status (judge mode, {len(judge.attempts)} attempt(s)):",
        f"- Passes: {passes}",
        "- Fails: " + ("; ".join(red + blocking) or "nothing the last judge or the verifiers "
                       "named"),
        "- Smallest next actions: " + ("; ".join(actions) or "spawn a worker and a judge"),
    ]
    if last is not None:
        lines.append(f"- Last judge (attempt {last.number}): pass "
                     f"{str(verdict.get('pass')).lower()}, score {verdict.get('score')}")
    return "\n".join(lines)


def judge_banner(state: LoopState) -> str:
    """Lines after the banner (each starting with a newline), or ""."""
    judge = state.judge
    if judge is None:
        return ""
    workers = [attempt.worker_id for attempt in judge.attempts if attempt.worker_id]
    lines = [f"Attempts: {len(judge.attempts)} ({len(set(workers))} distinct worker(s))"]
    if state.outcome != "success" and state.blocker.startswith("Final status"):
        lines.append(state.blocker)
    if judge.outside_changes:
        lines.append(f"Changed outside any worker: {len(judge.outside_changes)} file "
                     "change(s); see the report")
    return "".join(f"\n{line}" for line in lines)


def _json_block(value: object) -> list[str]:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    fence = fence_for(text)
    return [f"{fence}json", text, fence]


def _agent_lines(role: str, agent_id: str, started: datetime | None, ended: datetime | None,
                 problems: Sequence[str], answer: object | None) -> list[str]:
    """A worker's or a judge's part of an attempt: who ran how long (when one ran), its
    contract problems, its JSON."""
    lines = [f"- {role} `{agent_id}`, {_seconds(started, ended)}"] if agent_id else []
    lines += [f"  - contract problem: {problem}" for problem in problems]
    return lines + (_json_block(answer) if answer is not None else [])


def _attempt(attempt: Attempt) -> list[str]:
    lines = ["", f"### Attempt {attempt.number}: {attempt.result or 'open'}", ""]
    if attempt.note:
        lines.append(f"- Why: {attempt.note}")
    lines += _agent_lines("Worker", attempt.worker_id or "-", attempt.worker_started_at,
                          attempt.worker_ended_at, attempt.worker_problems, attempt.worker)
    if attempt.verification:
        lines.append("- The plugin's verifier run:")
        for result in attempt.verification:
            how = ("timed out" if result.timed_out else f"exit {result.exit_code}")
            lines.append(f"  - `{result.command}`: {'green' if result.passed else 'red'} "
                         f"({how}, {result.duration_seconds:.1f} s)")
    if attempt.protect_changed:
        lines.append("- Protected paths changed: " + ", ".join(
            f"`{name}`" for name in attempt.protect_changed))
    for why in attempt.void:
        lines.append(f"- A verdict did not count: {why}")
    lines += _agent_lines("Judge", attempt.judge_id, attempt.judge_started_at,
                          attempt.judge_ended_at, attempt.judge_problems, attempt.verdict)
    for change in attempt.outside_changes:
        lines.append(f"- Changed outside a worker: {change}")
    return lines


def judge_report(state: LoopState) -> str:
    """The report's judge-mode section, or ""."""
    judge = state.judge
    if judge is None:
        return ""
    lines = ["", "## Judge mode", "",
             "Acceptance criteria:", *[f"- {item}" for item in judge.criteria], "",
             "Verifiers: " + ", ".join(f"`{command}`" for command in state.verify)]
    if judge.protect:
        lines.append("Protected paths: " + ", ".join(f"`{path}`" for path in judge.protect))
    if judge.claims:
        lines.append(f"\nThe orchestrator claimed completion {judge.claims} time(s) on its "
                     "own word; only the judge's verdict counts.")
    lines += ["", "Changes outside any worker:"]
    lines += [f"- {change}" for change in judge.outside_changes] or ["- none seen"]
    for attempt in judge.attempts:
        lines += _attempt(attempt)
    return "\n".join(lines) + "\n"


def status_lines(state: LoopState) -> list[str]:
    """`ralph status`'s lines for a judge-mode loop: one per attempt."""
    judge = state.judge
    if judge is None:
        return []
    lines = ["judge mode: " + "; ".join(judge.criteria)]
    for attempt in judge.attempts:
        verdict = attempt.verdict or {}
        line = (f"  attempt {attempt.number}: {attempt.result or 'open'} - worker "
                f"{attempt.worker_id or '-'}")
        if attempt.judge_id:
            line += (f", judge {attempt.judge_id}: pass {str(verdict.get('pass')).lower()}, "
                     f"score {verdict.get('score')}")
        lines.append(line)
    return lines
