"""What the retro reads from a plan and its prompt, in memory."""
from __future__ import annotations

import pytest

from finesse.authoring.retro.plan import (
    PhaseCommand,
    baseline_commit,
    phase_commands,
    unresolved_warnings,
)

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("plan", [
    f'---\nprompt_file: "finesse-plans/x.md"\nbaseline_commit: "{SHA}"\n---\n# Plan\n',
    f"# Plan\n\nbaseline_commit: {SHA}\n",
    f"# Plan\n\n- **baseline_commit**: {SHA}\n- **git_config**: per phase\n",
    f"# Plan\n\n**Baseline commit:** `{SHA}`\n",
    f"```\nbaseline_commit: 1111111\n```\n\n* baseline_commit: '{SHA}'\n",
])
def test_the_baseline_commit_is_read_in_each_supported_form(plan: str) -> None:
    assert baseline_commit(plan) == SHA


@pytest.mark.parametrize("plan", [
    '---\nbaseline_commit: "none (not a git repository)"\n---\n',
    "# Plan\n\nNo baseline here.\n",
    "```yaml\nbaseline_commit: abc1234\n```\n",
])
def test_no_baseline_commit_when_there_is_no_sha_outside_code(plan: str) -> None:
    assert baseline_commit(plan) is None


@pytest.mark.parametrize(("plan", "warnings"), [
    ("## Validation Results\n\nall pass\n\n## Unresolved Warnings\n\n- high budget\n- no e2e\n"
     "  test yet\n\n## Later\n\n- not a warning\n", ["high budget", "no e2e test yet"]),
    ("## Unresolved Warnings\n\nNone.\n", []),
    ("## Unresolved Warnings\n\n### Budget\n\nthe window is tight\n", ["### Budget",
                                                                     "the window is tight"]),
    ("- **Unresolved Warnings**: none\n- **baseline_commit**: abc1234\n", []),
    ("**Unresolved warnings:**\n- one\n- two\n\nSomething else.\n", ["one", "two"]),
    ("## Summary\n\nNothing about warnings.\n", None),
])
def test_unresolved_warnings_are_the_items_of_their_section(
        plan: str, warnings: list[str] | None) -> None:
    assert unresolved_warnings(plan) == warnings


def test_each_phase_gets_its_verify_command_from_a_code_span_or_a_fence() -> None:
    prompt = """\
# Loop

You are iterating on it. Check the current state first.

### Phase 1: Parse
Verify: ``grep -c '`' notes.md``

### Phase 2: **Fence**
Verify:

```sh
make a
make b
```

### Phase 3: Talk
Verify by reading the diff.

4. not a phase
"""
    assert phase_commands(prompt) == [
        PhaseCommand(1, "Parse", "grep -c '`' notes.md"),
        PhaseCommand(2, "Fence", "make a\nmake b"),
        PhaseCommand(3, "Talk", None),
    ]


