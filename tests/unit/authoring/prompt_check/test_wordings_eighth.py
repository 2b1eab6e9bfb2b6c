"""Forms found in the eighth blind corpus (`corpus_blind8/MEASUREMENTS.md`). Each is a general
rule, with the twin that must still fail."""

from __future__ import annotations

import pytest

from finesse.authoring.prompt_check.criteria import completion_conditions
from finesse.authoring.prompt_check.reading import Prompt
from tests.unit.authoring.prompt_check.test_validate import (
    AFTER,
    HOLDBACK,
    PHASES,
    SCOPE,
    SIGNAL,
    edit,
    failing,
)


@pytest.mark.parametrize("signal", [
    "Both phases green in one iteration: output <promise>DONE</promise>. Only then.",
    "On completion of phases 1 and 2, with every command above passing in the same iteration, "
    "output <promise>DONE</promise>. Never output this unless it is entirely true.",
    "**Done:** both phase checks pass in one iteration, then output <promise>DONE</promise>. "
    "It has to be true.",
    "Done: phases 1-2 pass in the same iteration, then output <promise>DONE</promise>. Only "
    "when literally true.",
])
def test_conditions_before_the_output(signal: str) -> None:
    assert failing(edit(SIGNAL + "\n\n" + HOLDBACK, signal)) == []


def test_a_label_alone_before_the_output_is_no_condition() -> None:
    prompt = Prompt("Done: print <promise>DONE</promise> once both checks pass.", None)
    assert [text for text, _ in completion_conditions(prompt)] == ["both checks pass"]
    prompt = Prompt("Both checks green: print <promise>DONE</promise>.", None)
    assert [text for text, _ in completion_conditions(prompt)] == ["Both checks green"]


def test_every_bullet_up_there() -> None:
    text = edit(SIGNAL, "Done when:\n- `pytest -q` exits 0\n- `ruff check .` exits 0\n\n"
                        "when every bullet up there is true, output <promise>DONE</promise>.")
    assert failing(text) == []


@pytest.mark.parametrize("rule", [
    "Rerun the build command from part one after every edit.",
    "Build the project you're working on after every change; if it fails, fix it first.",
    "After each edit, rerun the test you changed before moving on.",
])
def test_a_rule_may_point_at_the_check_of_the_part_in_hand(rule: str) -> None:
    assert failing(edit(AFTER, rule)) == []


def test_the_check_of_the_part_in_hand_needs_phases_with_checks() -> None:
    text = edit(PHASES, "Phase 1: parse the flag.\nPhase 2: print debug lines.")
    assert "verification-commands" in failing(
        edit(AFTER, "Build the project you're working on after every change.", text))


def test_a_called_command_with_parentheses() -> None:
    text = edit("Verify: `pytest tests/test_cli.py -q`\n",
                "Verify: julia --project -e 'using Pkg; Pkg.test()'\n")
    assert failing(edit(AFTER, "Test after every modification with the Pkg.test() command.",
                        text)) == []


@pytest.mark.parametrize("holdback", [
    "Do not print it because it seems nearly done; every check must actually have passed.",
    "Don't output it on one lucky run; every row's command must have passed in that iteration.",
])
def test_every_check_must_have_passed(holdback: str) -> None:
    text = edit(SIGNAL + "\n\n" + HOLDBACK, "When both checks pass, output "
                "<promise>DONE</promise>. " + holdback)
    assert failing(text) == []


@pytest.mark.parametrize("scope", [
    "Relevant bits: `cli/main.py`, `tests/`. Please don't go near `vendor/`.",
    "**What you may touch:** `cli/main.py`, `tests/`. **What you may not:** anything in "
    "`vendor/`.",
    "Scope: `cli/main.py`, tests/. Not in scope: the vendored code (vendor/) and setup.cfg.",
    "Scope: `cli/main.py`, `tests/`. Leave src/Contoso.Billing.Legacy and Directory.Build.props "
    "alone.",
])
def test_more_ways_to_leave_paths_alone(scope: str) -> None:
    assert failing(edit(SCOPE, scope)) == []


def test_not_being_able_to_progress_is_no_scope() -> None:
    text = edit(SCOPE, "Work in `cli/main.py`. If you cannot make progress, note it in "
                       "`BLOCKERS.md`.")
    assert failing(text) == ["scoped-context"]


def test_bold_labelled_paragraphs_under_an_in_order_intro_are_phases() -> None:
    text = edit(PHASES, "Fix them in this order (highest severity first):\n\n"
                        "**H-01, the parser.** Proof: `pytest -q -k parse` passes.\n\n"
                        "**M-01, the printer.** Proof: `pytest -q -k print` passes.")
    assert "ordered-phases" not in failing(text)
    assert "ordered-phases" in failing(edit("in this order (highest severity first)",
                                            "in any order", text))
