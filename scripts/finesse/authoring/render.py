"""Spec to loop prompt and promise file: pure text, no I/O.

The prompt is seed 000's template, its fixed lines word for word (the golden files under
tests/unit/authoring/golden/ pin them):

    You are iterating on <project>. Before doing anything, check the current
    state: run tests, read recent git log, identify what's done vs remaining.

    ## Subagent Instructions            (only when subagents are on; the seed's section)

    ## Requirements (in order)
    Phase N: <name>
      - <criterion>
      Verify: <command>
      [Subagent opportunity]: <what>, using <type> subagent. <why>.

    ## Rules                            (the seed's lines, the git rule from its table)

    ## Completion                       (the seed's lines and attribute 10's two sentences)

User text always sits inside a line this module starts, never at the start of one, so no
spec text can open a heading, a list or a phase of its own. The plan file is `plan.py`.
"""

from __future__ import annotations

import re

from finesse.authoring.spec import CommandCriterion, Criterion, GitConfig, Phase, Spec

COLD_START = ("You are iterating on {project}. Before doing anything, check the current\n"
              "state: run tests, read recent git log, identify what's done vs remaining.")

SUBAGENT_SECTION = """\
## Subagent Instructions

You may use the Task tool to spawn subagents for parallel work. Follow these guidelines:

### Available Subagent Types

- **Bash**: Run test suites, linting, and verification commands in parallel with continued work.
- **Explore**: Investigate unfamiliar code, research patterns, and trace execution flows.
- **general-purpose**: Perform file modifications on independent, non-overlapping file sets.

### Guardrails

- Run at most 2 concurrent subagents at a time.
- Subagents must NOT make git commits or push to remote repositories.
- Subagents must NOT modify files outside their assigned scope.
- Wait for all subagent results before marking a phase complete.
- If a subagent fails, retry once. If it fails again, do the work yourself.
- Provide clear, scoped instructions when spawning a subagent — include specific file paths \
and expected outcomes."""

# The git-rule table of seed 000 (skills/finesse/SKILL.md shows the same; a test holds them
# equal). Custom granularity: the user's words verbatim, then the push sentence.
NO_CHECKPOINTS = "Do NOT make git commits. Do NOT push to remote repositories."
PER_PHASE = ("After completing each phase and verifying it passes, create a git commit with "
             "a descriptive message referencing the completed phase.")
PER_CHANGE = ("After each logical unit of work, create a git commit with a descriptive "
              "message describing the change.")
PUSH = "Push commits to the remote repository after committing."
NO_PUSH = "Do NOT push to remote repositories."

RUN_AFTER_CHANGE = "Run `{command}` after every change. Fix failures before moving on."
NO_REWRITE = "Do NOT rewrite files from scratch. Make targeted edits."
KEEP_TESTS = "Do NOT delete existing tests to make a suite pass."
NO_ABSTRACTIONS = "Do NOT add unnecessary abstractions or extra files."
ONLY_MODIFY = "Only modify files in {paths}."
LEAVE_ALONE = "Do not modify anything in {paths}."  # attribute 7's own example
READ_ERRORS = "Read actual error messages before attempting fixes."
STUCK = "If stuck on the same error for {count}+ attempts, try an alternative approach."
BLOCKED = ("If unable to make progress after {count} iterations, document blockers and\n"
           "  output <promise>BLOCKED</promise>.")

COMPLETION = ("When ALL phases are complete and ALL verification commands pass cleanly,\n"
              "output <promise>{promise}</promise>. This must be unequivocally true.\n"
              "Do not output the completion promise unless every criterion is met. "
              "Do not lie even if you think you should exit.")

_NEGATION = re.compile(r"^(?:do\s+not|don['\u2019]t|never|must\s+not)\s+", re.IGNORECASE)
_GLOB = re.compile(r"[*?\[]")


def render_prompt(spec: Spec) -> str:
    parts = [COLD_START.format(project=spec.project.name.rstrip("."))]
    if spec.subagents:
        parts.append(SUBAGENT_SECTION)
    parts.append(_requirements(spec))
    parts.append(_rules(spec))
    parts.append("## Completion\n" + COMPLETION.format(promise=spec.promise))
    return "\n\n".join(parts) + "\n"


def render_promise(spec: Spec) -> str:
    """The promise file: the promise and one newline, as a text file ends."""
    return spec.promise + "\n"


def git_rule(git: GitConfig) -> str:
    """The one rule seed 000's git table puts in `## Rules` for these answers."""
    if not git.checkpointing:
        return NO_CHECKPOINTS
    commit = {"per-phase": PER_PHASE, "per-change": PER_CHANGE}.get(
        git.granularity or "", _sentence(git.custom or ""))
    return f"{commit} {PUSH if git.push else NO_PUSH}"


def guardrail(text: str) -> str:
    """A spec guardrail as a "Do NOT" rule: "never add deps" -> "Do NOT add deps."."""
    rest = _NEGATION.sub("", text, count=1)
    if rest[:1].isupper() and not rest[1:2].isupper():
        rest = rest[0].lower() + rest[1:]
    return f"Do NOT {_sentence(rest)}"


def scope_path(path: str) -> str:
    """A path as the prompt shows it: one without a slash is anchored at the project root
    (`Makefile` -> `./Makefile`), a glob without one matches anywhere (`*.sql` ->
    `**/*.sql`), so that every entry reads as a path."""
    if "/" in path:
        return path
    return f"**/{path}" if _GLOB.search(path) else f"./{path}"


def paths(items: list[str]) -> str:
    """`a/`, `b/` and `c/`."""
    shown = [f"`{scope_path(item)}`" for item in items]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def subagent_annotation(phase: Phase) -> str | None:
    """`[Subagent opportunity]: <what>, using <type> subagent. <why>.` (seed 000)."""
    note = phase.subagent
    if note is None:
        return None
    what = _capital(note.what.rstrip(" .,;:"))
    return (f"[Subagent opportunity]: {what}, using {note.type} subagent. "
            f"{_sentence(_capital(note.why))}")


def criterion_text(criterion: Criterion) -> str:
    if isinstance(criterion, CommandCriterion):
        return f"`{criterion.command}` {criterion.expect}"
    return criterion


def _requirements(spec: Spec) -> str:
    blocks = []
    for number, phase in enumerate(spec.phases, 1):
        lines = [f"Phase {number}: {phase.name.rstrip(' :;,')}",
                 *(f"  - {criterion_text(c)}" for c in phase.criteria),
                 f"  Verify: {phase.verify}"]
        annotation = subagent_annotation(phase) if spec.subagents else None
        if annotation:
            lines.append(f"  {annotation}")
        blocks.append("\n".join(lines))
    return "## Requirements (in order)\n" + "\n\n".join(blocks)


def _rules(spec: Spec) -> str:
    scope = spec.scope
    rules = [
        RUN_AFTER_CHANGE.format(command=spec.test_command),
        NO_REWRITE,
        KEEP_TESTS,
        git_rule(spec.git),
        NO_ABSTRACTIONS,
        *(guardrail(text) for text in spec.guardrails),
        ONLY_MODIFY.format(paths=paths(scope.in_scope)),
        *([LEAVE_ALONE.format(paths=paths(scope.out_of_scope).replace(" and ", " or "))]
          if scope.out_of_scope else []),
        READ_ERRORS,
        STUCK.format(count=spec.stuck_threshold),
        BLOCKED.format(count=spec.stall_limit),
    ]
    return "## Rules\n" + "\n".join(f"- {rule}" for rule in rules)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _sentence(text: str) -> str:
    text = text.rstrip(" ,;:")
    return text if text.endswith((".", "!", "?")) else text + "."
