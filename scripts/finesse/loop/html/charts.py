"""The pictures of a loop's report: the timeline (one mark per iteration, coloured by its
result, `data-iteration="N"`, its checks in the tooltip) and the spend chart (tokens per
iteration as bars, the cumulative estimated cost as a line), inline SVG drawn from numbers
only, so no text from the loop reaches the SVG but through `page.text`."""

from __future__ import annotations

from finesse.loop.html.page import kind_of, text
from finesse.models import IterationRecord, LoopState
from finesse.results import CommandResult
from finesse.spend import receipt

WIDTH, HEIGHT = 900, 260
LEFT, RIGHT, TOP, BOTTOM = 64, 64, 16, 32


def checks_of(entry: IterationRecord) -> str:
    """The iteration's verification and gate result, in words."""
    parts = []
    if entry.verification:
        parts.append("verification " + _results(entry.verification))
    if entry.gate or entry.gate_action:
        gate = f"gate {_results(entry.gate)}" if entry.gate else "gate"
        action = entry.gate_action + (f" {entry.commit[:12]}" if entry.commit else "")
        parts.append(f"{gate}, {action}" if action else gate)
    return "; ".join(parts) or "no check run"


def _results(results: list[CommandResult]) -> str:
    red = [result for result in results if not result.passed]
    if not red:
        return "green"
    return "red: " + ", ".join(
        f"{result.command} ({'timed out' if result.timed_out else f'exit {result.exit_code}'})"
        for result in red)


def timeline(state: LoopState) -> str:
    """One mark per iteration, each a link to its row in the table below."""
    if not state.iterations:
        return '<p class="muted">No iteration was recorded.</p>'
    marks = []
    for entry in state.iterations:
        kind = kind_of(entry.result, entry.gate_action)
        tip = f"iteration {entry.number}: {entry.result}; {checks_of(entry)}"
        marks.append(f'<a class="mark k-{kind}" data-iteration="{entry.number}" '
                     f'data-result="{text(entry.result)}" href="#iteration-{entry.number}" '
                     f'title="{text(tip)}">{entry.number}</a>')
    return f'<div class="timeline" id="timeline">{"".join(marks)}</div>'


def _tokens(count: float) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    return f"{count / 1000:.0f}k" if count >= 10_000 else f"{count:,.0f}"


def spend_chart(state: LoopState) -> str:
    """Tokens per iteration as bars (left axis) and the estimated cost so far as a line
    (right axis); a sentence when no usage was read."""
    rows = receipt(state).rows
    if not rows or not any(part.billed_tokens or part.cost for _, part in rows):
        return '<p class="muted">No token usage was read for this loop.</p>'
    most = max(part.billed_tokens for _, part in rows) or 1
    running, costs = 0.0, []
    for _, part in rows:
        running += part.cost
        costs.append(running)
    dearest = costs[-1] or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = plot_w / len(rows)
    bar_w = max(1.0, min(40.0, step * 0.7))
    shapes = []
    for fraction in (0.0, 0.5, 1.0):
        y = TOP + plot_h * (1 - fraction)
        shapes.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" '
                      f'y2="{y:.1f}"/>')
        shapes.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
                      f"{_tokens(most * fraction)}</text>")
        shapes.append(f'<text x="{WIDTH - RIGHT + 6}" y="{y + 4:.1f}">'
                      f"${dearest * fraction:,.2f}</text>")
    points = []
    for index, ((entry, part), spent) in enumerate(zip(rows, costs, strict=True)):
        middle = LEFT + step * (index + 0.5)
        height = plot_h * part.billed_tokens / most
        shapes.append(f'<rect class="bar" x="{middle - bar_w / 2:.1f}" '
                      f'y="{TOP + plot_h - height:.1f}" width="{bar_w:.1f}" '
                      f'height="{height:.1f}"><title>iteration {entry.number}: '
                      f"{part.billed_tokens:,} tokens, ${part.cost:,.2f} estimated</title></rect>")
        y = TOP + plot_h * (1 - spent / dearest)
        points.append(f"{middle:.1f},{y:.1f}")
        if len(rows) <= 60 or index % max(1, len(rows) // 30) == 0:
            shapes.append(f'<text x="{middle:.1f}" y="{HEIGHT - BOTTOM + 16}" '
                          f'text-anchor="middle">{entry.number}</text>')
    shapes.append(f'<polyline class="cost" points="{" ".join(points)}"/>')
    shapes += [f'<circle class="dot" cx="{point.split(",")[0]}" cy="{point.split(",")[1]}" '
               f'r="3"/>' for point in points] if len(points) <= 60 else []
    shapes.append(f'<text x="{LEFT}" y="{HEIGHT - 2}">tokens per iteration (bars)</text>')
    shapes.append(f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 2}" text-anchor="end">'
                  "estimated cost so far (line)</text>")
    return (f'<svg class="chart" id="spend-chart" viewBox="0 0 {WIDTH} {HEIGHT}" '
            'role="img" aria-label="tokens per iteration and cumulative estimated cost">'
            f'{"".join(shapes)}</svg>')
