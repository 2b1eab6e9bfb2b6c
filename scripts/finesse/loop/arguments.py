"""Every argument of `/ralph-loop` (and of `ralph start` and `ralph run`, which take the same
grammar), with what it means. The parser (`finesse.loop.grammar`) takes its flags from this
table and docs/reference.md is written from it (tools/gen_reference.py), so the two cannot
differ: a flag the parser reads and the table lacks does not exist."""

from __future__ import annotations

from typing import NamedTuple


class Argument(NamedTuple):
    flag: str  # "--max-iterations"; "" for the prompt's words
    value: str  # what follows the flag, e.g. "N"; "" for a switch
    meaning: str


PROMPT_WORDS = Argument(
    "", "PROMPT", "the task, quoted or not; any characters, at most 1 MiB. `--` ends the options.")

LOOP_ARGUMENTS: tuple[Argument, ...] = (
    PROMPT_WORDS,
    Argument("--max-iterations", "N",
             "cap on replies, 1 to 1000 (decimal, `08` is 8); default 8 (judge mode: 100 "
             "attempts); above 25 the loop starts with a warning"),
    Argument("--completion-promise", "TEXT",
             "the promise text; default `RALPH_LOOP_STOP`; whitespace is collapsed"),
    Argument("--prompt-file", "PATH", "read the task from a file (relative to the project root)"),
    Argument("--completion-promise-file", "PATH", "read the promise from a file"),
    Argument("--verify", "CMD",
             "a verification command, repeatable; run by the plugin whenever Claude claims "
             "completion"),
    Argument("--plan", "PATH",
             "a written plan (`tasks/todo.md`); its Verification Commands are added to "
             "`--verify`; the prompt may then be left out"),
    Argument("--no-plan", "", "never write the loop's attempts into a `tasks/todo.md` it finds"),
    Argument("--quiesce-after", "N",
             "end the loop (resumable) after N iterations in a row with no tool call and no "
             "change to the project; 1 to 7, default 2"),
    Argument("--timeout-minutes", "N",
             "end the loop (resumable) once N minutes have passed since it started"),
    Argument("--gate", "CMD",
             "gate mode: run CMD after every iteration, commit on green, undo a red step; "
             "repeatable"),
    Argument("--allow-dirty", "",
             "gate mode on an uncommitted tree: it is committed first as a snapshot"),
    Argument("--effort", "LEVEL",
             "low, medium, high, xhigh or max: recorded, and stated in the prompt header"),
    Argument("--max-tokens", "N",
             "end the loop (resumable, `budget`) once it has used N tokens (input, cache "
             "creation and output)"),
    Argument("--max-cost", "USD",
             "end the loop (resumable, `budget`) once its estimated cost reaches USD dollars"),
    Argument("--stop-at-quota", "PERCENT",
             "end the loop (resumable, `quota`) once the plan's five-hour or weekly window is "
             "PERCENT used (needs `ralph statusline` in a session)"),
    Argument("--judge", "",
             "judge mode: the session orchestrates, a fresh worker subagent makes each attempt, "
             "a read-only judge subagent alone passes it; default cap 100 attempts"),
    Argument("--criteria", "TEXT",
             "judge mode: one acceptance criterion, repeatable (a plan's `## Acceptance "
             "Criteria` items count too); at least one is required"),
    Argument("--protect", "PATH",
             "judge mode: a path no attempt may change (it must exist in the project), "
             "repeatable"),
    Argument("--notify", "desktop|URL",
             "when the loop ends, tell the desktop (else ring the terminal bell) or POST a JSON "
             "summary to an http(s) URL (a Slack or Discord webhook shows its `text`); "
             "repeatable"),
    Argument("--notify-cmd", "CMD",
             "when the loop ends, run CMD (split like a shell's, never run by one) with the "
             "report's JSON on stdin; repeatable"),
)

# `/finesse:finesse-execute` takes the loop's arguments (with --prompt-file required) and this.
EXECUTE_ARGUMENTS: tuple[Argument, ...] = (
    Argument("--force", "",
             "run the prompt even though `finesse validate` rejects it; the loop's report "
             "records which checks were skipped"),
)

# What `/ralph-resume` (and `ralph resume`) may change when a loop is reopened.
RESUME_FLAGS = ("--max-iterations", "--timeout-minutes", "--max-tokens", "--max-cost",
                "--stop-at-quota")
