"""What judge mode says to each role. The plugin owns the prompts: a worker and a judge get
theirs at SubagentStart (seed 002's templates), whatever the orchestrator wrote in its Agent
call; the orchestrator gets the next step at every stop. Pure text functions.

Everything but the task, its criteria and its verifier commands (the user's own words, given
whole) is bounded: the last judge report, the failure history, the worker's JSON and the
verifier output are excerpts.
"""

from __future__ import annotations

import json
from typing import Any

from finesse.judging.records import JUDGE_TYPE, WORKER_TYPE, Attempt, JudgeState
from finesse.models import LoopState
from finesse.recording import excerpt
from finesse.results import CommandResult

REPORT_CHARS = 2000  # the last judge report in a worker prompt
HISTORY_AFTER = 3  # failed attempts before a failure history is given
HISTORY_BULLETS = 5
BULLET_CHARS = 240
WORKER_JSON_CHARS = 6000
FIELD_CHARS = 600  # one string of the worker's JSON, in the judge prompt
OUTPUT_CHARS = 1200  # one verifier's output, in the judge prompt

WORKER_CONTRACT = """{
  "summary": "1-3 sentences of what changed",
  "changes": ["path: what changed"],
  "verifier_runs": [{"cmd": "the exact command", "status": "pass", "output_excerpt": "..."}],
  "remaining_known_failures": ["..."],
  "next_suggestions": ["..."]
}"""
# Seed 002's judge rules, word for word.
JUDGE_RULES = (
    "- Only pass: true if all acceptance criteria are met and verifier evidence supports it.\n"
    "- Never \"assume\" success; cite evidence (test output, file checks, command results).\n"
    "- Prefer minimal, actionable required_actions.")
JUDGE_CONTRACT = """{
  "pass": false,
  "score": 0,
  "blocking_issues": ["..."],
  "non_blocking_issues": ["..."],
  "required_actions": ["..."],
  "evidence": ["..."],
  "next_iteration_focus": "single sentence"
}"""


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items) or "- (none)"


def _commands(commands: list[str]) -> str:
    return "\n".join(f"- `{command}`" for command in commands)


def _task(state: LoopState) -> str:
    return f"<ralph-task>\n{state.prompt}\n</ralph-task>"


def verdict_lines(attempt: Attempt, limit: int = REPORT_CHARS) -> str:
    """A judge's verdict as a few lines, at most `limit` characters."""
    verdict = attempt.verdict or {}
    parts = [f"pass: {str(verdict.get('pass')).lower()}, score {verdict.get('score')}"]
    for key in ("blocking_issues", "required_actions", "non_blocking_issues", "evidence"):
        items = [excerpt(str(item), BULLET_CHARS) for item in verdict.get(key, [])]
        if items:
            parts.append(f"{key}: " + "; ".join(items))
    parts.append(f"next_iteration_focus: {excerpt(attempt.focus, BULLET_CHARS)}")
    text = "\n".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failed(judge: JudgeState) -> list[Attempt]:
    return [attempt for attempt in judge.attempts
            if attempt.result not in ("", "passed", "success")]


def failure_history(judge: JudgeState) -> list[str]:
    """Seed 002: when failures repeat, a 3-5 bullet history, the newest last; [] before
    HISTORY_AFTER attempts have failed."""
    gone = failed(judge)
    if len(gone) < HISTORY_AFTER:
        return []
    return [excerpt(f"Attempt {attempt.number}: {attempt.result}: {attempt.note}", BULLET_CHARS)
            for attempt in gone[-HISTORY_BULLETS:]]


def next_focus(judge: JudgeState) -> str:
    """The single "next attempt" focus: the last failed attempt's judge focus, else why it
    failed."""
    gone = failed(judge)
    if not gone:
        return ""
    last = gone[-1]
    return excerpt(last.focus or last.note, BULLET_CHARS * 2)


def worker_prompt(state: LoopState, judge: JudgeState) -> str:
    """Seed 002's worker prompt for attempt `state.iteration`."""
    parts = [
        f"You are the worker of attempt {state.iteration}/{state.max_iterations} of a Ralph "
        "loop in judge mode (finesse plugin). You make the changes and run the verifiers; "
        "only a separate judge can pass the work: your own claim never ends the loop.",
        "## Task (fixed, verbatim)\n" + _task(state),
        "## Acceptance criteria\n" + _bullets(judge.criteria),
        "## Verifiers (run these exact commands; the plugin runs them itself after you stop)\n"
        + _commands(state.verify),
    ]
    if judge.protect:
        parts.append("## Do not change\n" + "\n".join(f"- `{path}`" for path in judge.protect)
                     + "\nA change under these paths fails the attempt, whatever the judge "
                     "says.")
    last = judge.last_verdict()
    if last is not None and not last.passed:
        parts.append(f"## Last judge report (attempt {last.number})\n{verdict_lines(last)}")
    history = failure_history(judge)
    if history:
        parts.append("## Failure history\n" + "\n".join(f"- {line}" for line in history))
    focus = next_focus(judge)
    if focus:
        parts.append(f"## Next attempt focus\n{focus}")
    parts.append(
        "## Your reply\nMake the smallest set of changes that meets every criterion, run "
        "every verifier, then end with only this JSON (no prose around it; a ```json fence is "
        "accepted), with exactly these fields:\n" + WORKER_CONTRACT + "\n`status` is "
        '"pass" or "fail". If you cannot run a verifier, leave it out of `verifier_runs` and '
        "say in `remaining_known_failures`: \"`<the command>` not run: <exactly why>; "
        'evidence used instead: <what>".')
    return "\n\n".join(parts)


def _trimmed(value: Any) -> Any:
    if isinstance(value, str):
        return excerpt(value, FIELD_CHARS)
    if isinstance(value, list):
        return [_trimmed(item) for item in value[:20]]
    if isinstance(value, dict):
        return {key: _trimmed(item) for key, item in value.items()}
    return value


def worker_json(attempt: Attempt) -> str:
    text = json.dumps(_trimmed(attempt.worker or {}), indent=2, ensure_ascii=False)
    return text if len(text) <= WORKER_JSON_CHARS else text[: WORKER_JSON_CHARS - 1] + "…"


def results_text(results: list[CommandResult]) -> str:
    """Each verifier the plugin ran: green or red, and the end of a red one's output."""
    if not results:
        return "- none run"
    lines = []
    for result in results:
        how = ("timed out" if result.timed_out else "did not start" if result.exit_code is None
               else f"exit {result.exit_code}")
        lines.append(f"- `{result.command}`: {'green' if result.passed else 'red'} ({how})")
        tail = result.output_tail.strip()[-OUTPUT_CHARS:]
        if tail and not result.passed:
            lines.append("```text\n" + tail.replace("```", "'''") + "\n```")
    return "\n".join(lines)


def judge_prompt(state: LoopState, judge: JudgeState, attempt: Attempt) -> str:
    """Seed 002's judge prompt for the current attempt's worker result."""
    parts = [
        f"You are the judge of attempt {attempt.number}/{state.max_iterations} of a Ralph "
        "loop in judge mode (finesse plugin). You are strict and read-only: read files and "
        "search as you need, never write, edit or fix anything (the plugin denies it, and a "
        "change to the working tree while you judge voids your verdict).",
        "## Task (verbatim)\n" + _task(state),
        "## Acceptance criteria\n" + _bullets(judge.criteria),
        "## Verifiers\n" + _commands(state.verify),
        "## The worker's result\n```json\n" + worker_json(attempt) + "\n```",
        "## The plugin's own verifier run, after the worker stopped\n"
        + results_text(attempt.verification),
    ]
    if judge.protect:
        parts.append("## Protected paths (must not change)\n" + _commands(judge.protect))
    parts.append(
        "## How to judge\n" + JUDGE_RULES + "\n- Also, a red verifier above means `pass: false`."
        "\n\n## Your reply\nOnly this JSON (a ```json fence "
        "is accepted), with exactly these fields; `score` is 0 to 100:\n" + JUDGE_CONTRACT)
    return "\n\n".join(parts)


def agent_call(kind: str, attempt: int) -> str:
    """How the orchestrator starts a worker or the judge."""
    agent = WORKER_TYPE if kind == "worker" else JUDGE_TYPE
    return (f'call the Agent tool with subagent_type "{agent}", run_in_background false, '
            f'description "attempt {attempt} {kind}" and a one-line prompt (the plugin gives '
            f"the {kind} its full instructions)")


def orchestrator_context(state: LoopState, judge: JudgeState) -> str:
    """What the orchestrator is told when the loop starts (or is re-stated)."""
    protect = ("\nProtected paths (no attempt may change them): "
               + ", ".join(f"`{path}`" for path in judge.protect)) if judge.protect else ""
    return (
        "A Ralph loop in judge mode is running in this session (finesse plugin). You are its "
        "orchestrator: you never do the work yourself. A fresh finesse:ralph-worker subagent "
        "makes each attempt; a read-only finesse:ralph-judge subagent alone can pass it. The "
        "plugin's hooks give both their instructions, run the verifiers and decide when the "
        "loop ends: your word and the completion promise do not end it.\n\n"
        f"Attempt {state.iteration}/{state.max_iterations}.\n\nThe task, verbatim:\n"
        f"{_task(state)}\n\nAcceptance criteria:\n{_bullets(judge.criteria)}\n\n"
        f"Verifiers:\n{_commands(state.verify)}{protect}\n\n"
        f"Now: {agent_call('worker', state.iteration)}. When it returns, "
        f"{agent_call('judge', state.iteration)}. Then end your turn with a short progress "
        "note; every stop is answered with the next step. Never edit files yourself, never "
        "reuse a worker after a judge failure (no SendMessage to it), and if an agent runs "
        "in the background, end your turn and wait for its notification.")
