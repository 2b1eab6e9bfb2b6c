"""A sub-workflow of a decomposed plan as `ralph run` arguments: the one translation both
runners of a plan use, `ralph run --graph` (each loop in a worktree of this machine,
`finesse.headless.subworkflow`) and `ralph ci` (each loop in a job of a GitHub Actions
workflow, `finesse.headless.ci`), so that a plan means the same loops wherever it runs.

A sub-workflow's loop is started with `/finesse-execute`'s arguments, parsed by the same
grammar as every loop: its prompt and promise files, its `--max-iterations` from the graph,
its plan's verification (the plan's `## Verification Commands`, else the `Verify:` command of
each of its prompt's phases) and gate (`## Gate`), then the options given for the whole plan
(budgets, `--effort`, more `--verify` ...), which `check_plan_words` checks first.
`--no-plan` keeps a `tasks/todo.md` of the project out of it: parallel sub-workflows writing
their attempts there would conflict at the merge.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from finesse.authoring.retro.plan import phase_commands
from finesse.authoring.workflows.folder import GraphWorkflow
from finesse.errors import UsageError
from finesse.headless.runner import JUDGE_REFUSED
from finesse.loop.grammar import LoopArgs, parse_loop_args
from finesse.loop.todo.sections import gate_commands, verification_commands
from finesse.support.files import read_text

# Flags of the plan itself: the options given for the whole plan may not give them.
PLAN_FLAGS = ("--prompt-file", "--completion-promise", "--completion-promise-file",
              "--max-iterations", "--plan")


def plan_checks(workflow: GraphWorkflow) -> tuple[list[str], list[str]]:
    """The verification and gate commands of a sub-workflow's plan."""
    plan = read_text(workflow.plan, subject=f"plan {workflow.plan}")
    verify = verification_commands(plan)
    if not verify:
        prompt = read_text(workflow.prompt, subject=f"prompt {workflow.prompt}")
        verify = [found.command for found in phase_commands(prompt) if found.command]
    return list(dict.fromkeys(verify)), gate_commands(plan)


def loop_words(workflow: GraphWorkflow, extra: Sequence[str], *,
               relative_to: Path | None = None) -> tuple[str, ...]:
    """The loop's arguments, as words. The prompt and promise files are named by their
    absolute paths, or relative to `relative_to` (with `/`) for a runner that checks the
    project out somewhere else."""
    def named(path: Path) -> str:
        if relative_to is None:
            return str(path.resolve())
        return str(PurePosixPath(*path.resolve().relative_to(relative_to.resolve()).parts))

    verify, gate = plan_checks(workflow)
    words = ["--prompt-file", named(workflow.prompt),
             "--completion-promise-file", named(workflow.promise),
             "--max-iterations", str(workflow.max_iterations), "--no-plan"]
    for command in verify:
        words += ["--verify", command]
    for command in gate:
        words += ["--gate", command]
    return (*words, *extra)


def check_plan_words(words: Sequence[str], *, runner: str) -> LoopArgs:
    """The loop options given for a whole plan (to `runner`: `--graph`, `ralph ci`) apply to
    every sub-workflow; the plan's own (prompt, promise, cap, plan) and prompt words are
    refused, the rest is checked by the loop grammar as `/finesse-execute` would check it.
    The parsed options, for what a runner derives from them."""
    flags = [word.split("=", 1)[0] for word in words if word.startswith("--")]
    given = [flag for flag in flags if flag in PLAN_FLAGS]
    if given:
        raise UsageError(f"{runner} takes each sub-workflow's {given[0]} from its plan: drop it")
    try:
        parsed = parse_loop_args(shlex.join(["--prompt-file", "plan", *words]),
                                 command="finesse-execute")
    except UsageError as err:
        if str(err).startswith("/finesse-execute runs a prompt file"):
            raise UsageError(f"{runner} runs the plan's own prompts: drop the prompt words "
                             f"({' '.join(w for w in words if not w.startswith('-'))[:60]})"
                             ) from None
        raise
    if parsed.judge:
        raise UsageError(JUDGE_REFUSED)
    return parsed
