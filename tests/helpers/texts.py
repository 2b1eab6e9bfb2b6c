"""Text the loop shows the model, as the tests expect it word for word."""

from __future__ import annotations

# The protocol's notes after the task in every prompt of a loop without a plan, verification
# commands or a gate.
NOTES = (
    "If you cannot go on, end with a line `RESULT: BLOCKED` followed by what blocks you "
    "and what the user must do; that ends the loop as blocked, whatever else the reply "
    "says.\n"
    "End your reply with four lines: `Approach: ...`, `Evidence: ...`, `Learning: ...`, "
    "`Next: ...`."
)
# What the additional context of a starting loop opens with.
START_TEXT = (
    "A Ralph loop is running in this session (finesse plugin). You will be given the same task "
    "again each time you stop, until you output the completion promise or the iteration cap is "
    "reached.\n\n"
)
# What the next prompt says after gate mode reverted an iteration.
REVERTED_NOTE = ("Your last attempt was reverted: the gate was still red after the repair. "
                 "Start this iteration from the reverted tree.")


def stopped_banner(message: str, loop_id: str, options: list[str], *,
                   failure: str | None = None, learnings: int = 0) -> str:
    """The banner of a resumable stop (seed 004's short form): the message, the last
    failure, the learnings, the options, where the state is saved, the report."""
    lines = [message]
    if failure is not None:
        lines.append(f"Last failure: {failure}")
    if learnings:
        lines.append(f"Learnings accumulated: {learnings}")
    lines += ["Options: " + " | ".join([*options, "/ralph-resume", "/ralph-abort"]),
              f"State saved to: .claude/ralph/history/{loop_id}.json",
              f"Report: .claude/ralph/reports/{loop_id}.md"]
    return "\n".join(lines)

# What a loop without any verifier is told at its start, after the first line.
UNVERIFIED_START = (
    "No verification command: completion will rest on Claude's word and be reported as "
    "unverified. Add --verify CMD (or --plan with ## Verification Commands) to have it checked."
)
# The end of an unverified success's message.
UNVERIFIED_END = " (unverified: no verification command, so it rests on the agent's word)."
