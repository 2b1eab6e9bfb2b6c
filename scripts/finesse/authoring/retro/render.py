"""The retro as Markdown: `<name>-retro.md`. Pure text."""

from __future__ import annotations

from finesse.authoring.retro.model import LoopEntry, PhaseCheck, Retro
from finesse.support.evidence import code_span, fence_for


def render_retro(retro: Retro) -> str:
    passed = sum(1 for phase in retro.phases if phase.result == "pass")
    ours = sum(1 for loop in retro.loops if loop.match == "prompt")
    warnings = retro.unresolved_warnings
    counted = "no section in the plan" if warnings is None else str(len(warnings))
    files = [f"- {c.status} {code_span(c.path)}" for c in retro.files_changed] or ["None."]
    if retro.uncommitted:
        files += ["", "Not committed:", "", *(f"- {code_span(name)}" for name in retro.uncommitted)]
    sections = [
        (f"# Retro: {retro.name}", [
            f"- **Plan**: {code_span(retro.plan)}",
            f"- **Prompt**: {code_span(retro.prompt) if retro.prompt else 'missing'}",
            f"- **Baseline commit**: {code_span(retro.baseline_commit)}",
            f"- **HEAD**: {code_span(retro.head_commit)}"]),
        ("## Summary", [
            f"- Commits since the baseline: {len(retro.commits)}",
            f"- Files changed: {len(retro.files_changed)} in those commits, "
            f"{len(retro.uncommitted)} not committed",
            f"- Verify commands: {passed} of {len(retro.phases)} phases pass",
            f"- Loops: {ours} of this plan, {len(retro.loops) - ours} others since the baseline",
            f"- Unresolved warnings: {counted}"]),
        ("## Commits since the baseline",
         [f"- {code_span(c.sha[:12])} {c.subject}" for c in retro.commits] or ["None."]),
        ("## Files changed", files),
        ("## Verify commands", _phase_lines(retro.phases) or ["No phase to verify."]),
        ("## Loops", _loop_lines(retro.loops)
         or ["No loop of this plan, and none since the baseline."]),
        ("## Unresolved warnings",
         ["The plan has no Unresolved Warnings section."] if warnings is None
         else [f"- {warning}" for warning in warnings] or ["None."]),
    ]
    if retro.notes:
        sections.append(("## Notes", [f"- {note}" for note in retro.notes]))
    return "\n\n".join("\n".join([title, "", *body]) for title, body in sections) + "\n"


def _phase_lines(phases: list[PhaseCheck]) -> list[str]:
    blocks = []
    for phase in phases:
        title = f": {phase.title}" if phase.title else ""
        block = [f"### Phase {phase.phase}{title} ({phase.result})", ""]
        if phase.command is None:
            blocks.append([*block, "The phase names no Verify command."])
            continue
        how = {"pass": "exited 0", "fail": f"exited {phase.exit_code}",
               "timed out": "timed out", "not started": "could not start"}[phase.result]
        block.append(f"{code_span(phase.command)} {how} in {phase.duration_seconds:.1f} s.")
        if phase.output_tail.strip():
            block += ["", *_fenced(phase.output_tail.rstrip("\n"), "text")]
        blocks.append(block)
    return _joined(blocks)


def _loop_lines(loops: list[LoopEntry]) -> list[str]:
    blocks = []
    for loop in loops:
        after = f" after {loop.iterations} iterations" if loop.iterations is not None else ""
        block = [f"### {code_span(loop.loop_id)}: {loop.outcome or 'no history entry'}{after}", "",
                 "- Matched: by its prompt, this plan's" if loop.match == "prompt" else
                 "- Matched: by time only (it ended after the baseline commit)"]
        if loop.started_at or loop.ended_at:
            block.append(f"- Ran: {loop.started_at or '?'} to {loop.ended_at or '?'}")
        if loop.end_message:
            block.append(f"- End message: {' '.join(loop.end_message.split())}")
        block.append(f"- Report: {code_span(loop.report)}" if loop.report else "- Report: none")
        if loop.report_text:
            block += ["", *_fenced(loop.report_text.rstrip("\n"), "markdown")]
        blocks.append(block)
    return _joined(blocks)


def _joined(blocks: list[list[str]]) -> list[str]:
    return [line for index, block in enumerate(blocks) for line in ([""] if index else []) + block]


def _fenced(text: str, language: str) -> list[str]:
    """`text` in a fence longer than any backtick run in it, so it stays code."""
    fence = fence_for(text)
    return [f"{fence}{language}", text, fence]
