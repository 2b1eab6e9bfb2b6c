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
