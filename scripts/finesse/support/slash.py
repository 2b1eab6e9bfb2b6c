"""The slash commands the plugin's UserPromptSubmit hook answers itself, and the shape of a typed
command line. Standard library `re` only, in syntax Python 3.6 still compiles: the launcher
imports this under an old `python3` to tell our command (which it refuses in one line when no
suitable interpreter is found) from any other prompt (which it leaves alone).
"""

import re

# By bare name; each may also be typed namespaced, `/finesse:NAME`.
COMMANDS = (
    "ralph-loop", "cancel-ralph", "ralph-abort", "ralph-status", "ralph-help", "ralph-resume",
    "finesse-execute",
)
# Group 1: the name; group 2: everything after it.
COMMAND_LINE = re.compile(r"\A\s*/(?:finesse:)?([a-z][a-z-]*)(?=\s|\Z)(.*)\Z", re.DOTALL)


def command_name(prompt: str) -> "str | None":
    """The name of our command at the start of a typed prompt, or None for anything else."""
    found = COMMAND_LINE.match(prompt)
    if found is None or found.group(1) not in COMMANDS:
        return None
    return found.group(1)
