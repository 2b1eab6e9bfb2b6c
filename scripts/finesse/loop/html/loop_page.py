"""One loop's report as a page: the task and outcome at the top, the timeline, the spend
chart, each iteration with its verification or gate result, the checks run last, the
learnings, the files changed; judge mode's attempts with their verdicts. The facts are the
Markdown report's (`finesse.loop.final_report`), so the two never disagree."""

from __future__ import annotations

from finesse.loop.final_report import (
    EndFacts,
    changes_text,
    duration_text,
    options,
    status_word,
    title,
)
from finesse.loop.html.charts import checks_of, spend_chart, timeline
from finesse.loop.html.page import document, kind_of, legend, text
from finesse.models import IterationRecord, LoopState, judge_of
from finesse.recording import RESUMABLE, excerpt
from finesse.results import CommandResult
from finesse.schema import SchemaError
from finesse.spend import PRICES_DATED, receipt, totals
from finesse.support.files import shown_name

TASK_PREVIEW = 600
OUTPUT_CHARS = 4000


def _mode(state: LoopState) -> str:
    if state.judge is not None:
        return "judge mode"
    where = "headless (ralph run)" if state.headless is not None else "in a Claude Code session"
    return f"gate mode, {where}" if state.gate else where


def _facts(state: LoopState, facts: EndFacts) -> str:
    ended = state.ended_at or state.updated_at
    spent = totals(state)
    started = f"{state.started_at:%Y-%m-%d %H:%M:%S}"
    rows = [
        ("Status", f"{status_word(state)}: {state.end_message}"),
        ("Iterations", f"{len(state.iterations)} of at most {state.max_iterations}"),
        ("Duration",
         f"{duration_text(state.started_at, ended)} ({started} to {ended:%H:%M:%S} UTC)"),
        ("Mode", _mode(state)),
        ("Spend", f"{spent.billed_tokens:,} tokens (+{spent.cache_read:,} cache reads), "
                  f"${spent.cost:,.2f} estimated (prices dated {PRICES_DATED})"),
        ("Files modified", f"{len(facts.files)} ({changes_text(facts)})"),
        ("Loop", f"{state.loop_id} (session {state.session_id})"),
        ("Promise", f"<promise>{state.promise}</promise>"),
        ("State saved to", facts.state_file),
    ]
    if state.plan_file or state.notebook:
        rows.insert(4, ("Plan" if state.plan_file else "Notebook",
                        state.plan_file or state.notebook or ""))
    if state.outcome in RESUMABLE:
        rows.append(("Options", " | ".join(command for command, _ in options(state))))
    return '<dl class="facts">' + "".join(
        f"<dt>{text(name)}</dt><dd>{text(value)}</dd>" for name, value in rows) + "</dl>"


def _head(state: LoopState, facts: EndFacts, made_later: bool) -> str:
    kind = kind_of(state.outcome or "", "")
    preview = excerpt(state.prompt, TASK_PREVIEW) if len(state.prompt) > TASK_PREVIEW else (
        state.prompt)
    parts = [
        f'<h1>Ralph loop report <span class="badge k-{kind}" id="outcome">'
        f"{text(title(state))}</span></h1>",
        f'<p class="task" id="task">{text(preview)}</p>',
    ]
    if preview != state.prompt:
        parts.append(f"<details><summary>The whole task</summary><pre>{text(state.prompt)}"
                     "</pre></details>")
    if made_later:
        parts.append('<p class="muted">Written after the loop ended: the files changed are '
                     "as the project is now.</p>")
    parts.append(_facts(state, facts))
    if state.blocker:
        parts.append(f"<h2>Blocker</h2><pre>{text(state.blocker)}</pre>")
    return "\n".join(parts)


def _row(entry: IterationRecord, tokens: int, cost: float) -> str:
    kind = kind_of(entry.result, entry.gate_action)
    label = kind if kind in ("repair", "reverted") else entry.result  # what git did, then
    said = entry.approach or entry.reply_excerpt
    learned = f'<div class="muted">learning: {text(entry.learning)}</div>' if entry.learning else ""
    return (f'<tr id="iteration-{entry.number}"><td class="num">{entry.number}</td>'
            f'<td><span class="badge k-{kind}">{text(label)}</span></td>'
            f"<td>{text(checks_of(entry))}</td>"
            f'<td class="num">{tokens:,}</td><td class="num">${cost:,.2f}</td>'
            f'<td class="num">{duration_text(entry.started_at, entry.ended_at)}</td>'
            f"<td>{text(excerpt(said, 300))}{learned}</td></tr>")


def _iterations(state: LoopState) -> str:
    rows = [_row(entry, part.billed_tokens, part.cost) for entry, part in receipt(state).rows]
    if not rows:
        return ""
    return ("<table><thead><tr><th class=\"num\">#</th><th>result</th><th>verification or "
            "gate</th><th class=\"num\">tokens</th><th class=\"num\">est. cost</th>"
            "<th class=\"num\">time</th><th>approach</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def _command(result: CommandResult) -> str:
    how = ("timed out" if result.timed_out else "did not start" if result.exit_code is None
           else f"exit {result.exit_code}")
    mark = "green" if result.passed else "red"
    tail = result.output_tail[-OUTPUT_CHARS:].strip()
    shown = f"<pre>$ {text(result.command)}\n{text(tail)}</pre>" if tail else ""
    return (f'<li><code>{text(result.command)}</code>: <span class="badge '
            f'k-{"success" if result.passed else "blocked"}">{mark}</span> {text(how)}'
            f"{shown}</li>")


def _verification(state: LoopState) -> str:
    if not state.verify and not state.gate:
        return ('<p class="muted">No verification command: completion rested on the agent\'s '
                "word.</p>")
    commands = [f"<li><code>{text(command)}</code></li>" for command in state.verify]
    ran = [_command(result) for result in state.last_verification]
    parts = []
    if commands:
        parts.append("<p>Verification commands:</p><ul>" + "".join(commands) + "</ul>")
    if state.gate is not None:
        parts.append("<p>Gate: " + ", ".join(f"<code>{text(c)}</code>"
                                             for c in state.gate.commands) + "</p>")
    if ran:
        parts.append("<p>Run last:</p><ul>" + "".join(ran) + "</ul>")
    return "".join(parts)


def _list(items: list[str], empty: str, *, names: bool = False) -> str:
    if not items:
        return f'<p class="muted">{text(empty)}</p>'
    shown = [f"<li><code>{text(shown_name(item))}</code></li>" if names else
             f"<li>{text(item)}</li>" for item in items]
    return "<ul>" + "".join(shown) + "</ul>"


def _judge(state: LoopState) -> str:
    if state.judge is None:
        return ""
    try:
        attempts = judge_of(state).attempts
    except SchemaError:
        return ""
    rows = []
    for attempt in attempts:
        verdict = attempt.verdict or {}
        score = verdict.get("score", "")
        summary = (attempt.worker or {}).get("summary", "")
        rows.append(f"<tr><td class=\"num\">{attempt.number}</td>"
                    f"<td>{text(attempt.result or 'open')}</td>"
                    f"<td>{text('pass' if attempt.passed else 'fail' if attempt.verdict else '-')}"
                    f"</td><td class=\"num\">{text(score)}</td>"
                    f"<td>{text(excerpt(str(summary), 200))}</td></tr>")
    return ("<h2>Judge mode's attempts</h2><table><thead><tr><th class=\"num\">#</th>"
            "<th>result</th><th>verdict</th><th class=\"num\">score</th><th>worker's summary"
            "</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def render_html(state: LoopState, facts: EndFacts, *, made_later: bool = False) -> str:
    """The page of an ended loop, self-contained: nothing in it loads anything."""
    body = [
        _head(state, facts, made_later),
        "<h2>Timeline</h2>", legend(), timeline(state),
        "<h2>Tokens and estimated cost</h2>", spend_chart(state),
        "<h2>Iterations</h2>", _iterations(state) or '<p class="muted">none</p>',
        "<h2>Verification</h2>", _verification(state),
        _judge(state),
        "<h2>Learnings</h2>", _list(state.learnings, "none recorded"),
        "<h2>Files changed</h2>", _list(facts.files, "none", names=True),
        "<h2>The task</h2>", f"<pre>{text(state.prompt)}</pre>",
    ]
    return document(f"Ralph loop {state.loop_id}: {title(state)}", "\n".join(body))
