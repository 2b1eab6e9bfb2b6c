"""The text the model is given at each iteration: the header, the same task, the protocol's
notes, the previous learnings (seed 004: every iteration after the first starts from what
the last ones learned), and what the last iteration left to fix or repair."""

from __future__ import annotations

from pathlib import Path

from finesse.models import LoopState
from finesse.results import CommandResult
from finesse.state.paths import StatePaths
from finesse.support.evidence import failure_excerpt
from finesse.support.files import shown_name

# Seed 004's per-iteration block: the last learning, and a few before it, bounded.
EARLIER_LEARNINGS = 5
LEARNING_CHARS = 300


def learnings_block(state: LoopState) -> str:
    """`Previous learnings: ...` and up to five earlier ones; "" before any was recorded."""
    if not state.learnings:
        return ""

    def short(text: str) -> str:
        flat = " ".join(text.split())
        return flat if len(flat) <= LEARNING_CHARS else flat[: LEARNING_CHARS - 1] + "…"

    *earlier, last = state.learnings
    lines = [f"Previous learnings: {short(last)}"]
    if earlier:
        lines.append("Earlier learnings:")
        lines += [f"- {short(text)}" for text in earlier[-EARLIER_LEARNINGS:]]
    return "\n".join(lines)


RECORD_REQUEST = (
    "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
    "`Next: ...`."
)


def iteration_header(state: LoopState) -> str:
    effort = f" (effort: {state.effort})" if state.effort else ""
    return (
        f"Ralph iteration {state.iteration}/{state.max_iterations}: output "
        f"<promise>{state.promise}</promise> only when it is completely true{effort}"
    )


def loop_done_path(state: LoopState) -> str:
    """Where the agent writes `done` to end its loop, relative to the project root."""
    paths = StatePaths(Path(state.project_root))
    return str(paths.loop_done_file(state.session_id).relative_to(paths.root))


def protocol_notes(state: LoopState) -> str:
    """What follows the task in every prompt: where the plan is, how to end, what to record."""
    lines = []
    if state.plan_file:
        lines.append(f"The plan is {state.plan_file}: re-read it now; your attempts are "
                     "recorded under its `## Attempts`.")
    elif state.notebook:
        lines.append(f"Your attempts are recorded under `## Attempts` in {state.notebook}.")
    if state.verify:
        shown = ", ".join(f"`{command}`" for command in state.verify)
        lines.append(f"When you claim completion, the plugin runs {shown} itself and rejects "
                     "the claim if any fails.")
    if state.gate is not None:
        shown = ", ".join(f"`{command}`" for command in state.gate.commands)
        lines.append(f"Gate mode: after every iteration the plugin runs {shown}. Green commits "
                     "your changes; red gives you one repair; still red reverts them.")
        lines.append(f"When the whole task is done, write `done` to {loop_done_path(state)} "
                     "to end the loop.")
    lines.append("If you cannot go on, end with a line `RESULT: BLOCKED` followed by what "
                 "blocks you and what the user must do; that ends the loop as blocked, whatever "
                 "else the reply says.")
    lines.append(RECORD_REQUEST)
    return "\n".join(lines)


def loop_prompt(state: LoopState, feedback: str = "") -> str:
    """The prompt of each iteration: the header, the same task, then the protocol notes and
    what the last iteration left to fix."""
    learned = learnings_block(state)
    parts = [iteration_header(state), *([learned] if learned else []), state.prompt, "---",
             protocol_notes(state)]
    if feedback:
        parts.append(feedback)
    return "\n\n".join(parts)


def repair_prompt(state: LoopState, results: list[CommandResult]) -> str:
    """Gate mode, after a red gate: the fix instruction replaces the standing prompt."""
    return "\n\n".join([
        iteration_header(state),
        "Repair: the gate failed after your last iteration. Fix exactly this failure and "
        "nothing else; the gate runs again when you stop, and if it is still red, the "
        "iteration's changes are reverted.",
        failure_excerpt(results),
        "---",
        protocol_notes(state),
    ])


def reverted_note(untouched: list[str]) -> str:
    """Gate mode, after a revert: start again from the reverted tree. A submodule the revert
    left as it was (`untouched`) is named: the tree is not all back."""
    note = ("Your last attempt was reverted: the gate was still red after the repair. Start "
            "this iteration from the reverted tree.")
    if not untouched:
        return note
    names = ", ".join(f"`{shown_name(name)}`" for name in untouched)
    if len(untouched) == 1:
        return (f"{note} Not reverted: the submodule {names} keeps the iteration's changes "
                "inside it; check it before you go on.")
    return (f"{note} Not reverted: the submodules {names} keep the iteration's changes inside "
            "them; check them before you go on.")
