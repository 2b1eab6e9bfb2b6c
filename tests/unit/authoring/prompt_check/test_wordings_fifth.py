"""Forms found in the fifth blind corpus (`corpus_blind5/MEASUREMENTS.md`), each written as a
general rule, with the twin that must still fail (or pass)."""

from __future__ import annotations

import pytest

from finesse.authoring.prompt_check.validate import validate_prompt
from tests.unit.authoring.prompt_check.test_validate import (
    AFTER,
    HOLDBACK,
    LIMIT,
    PHASES,
    RULE,
    SCOPE,
    SIGNAL,
    edit,
    failing,
)

# 6 guardrails

@pytest.mark.parametrize("rules", [
    "Ground rules:\n\u2022 No rewriting `cli/main.py` wholesale; make surgical changes.\n"
    "\u2022 Read the full failure first.",
    "Please don't pull in a new argument-parsing library.",
    "No:\n- `continue-on-error` to make jobs pass\n- removing test steps",
    "Don't:\n- add to the skip list to pass\n- introduce a new module",
])
def test_more_ways_to_forbid(rules: str) -> None:
    assert failing(edit(RULE, rules)) == []


def test_a_typographic_bullet_inside_code_stays_code() -> None:
    text = edit(RULE, "```\n\u2022 No rewriting anything\n```")
    assert failing(text) == ["guardrails"]


@pytest.mark.parametrize("invitation", [
    "If a module is easier to rewrite from scratch than to port, rewrite it.",
    "Honestly I don't care how you get there \u2014 rewrite the parser from scratch if that's "
    "easier.",
    "If a spec keeps fighting you, just delete it or mark it `skip`.",
    "Feel free to delete tests that fail after the change.",
])
def test_leave_to_do_what_the_guardrails_forbid_fails_whatever_else_is_said(
        invitation: str) -> None:
    text = edit(RULE, RULE + " " + invitation)
    assert failing(text) == ["guardrails"]
    assert "take out the permission" in next(
        r.fix for r in validate_prompt(text).attributes if r.key == "guardrails")


@pytest.mark.parametrize("refusal", [
    "Do NOT rewrite files from scratch. Make targeted edits.",
    "Make targeted edits rather than rewriting from scratch.",
    "Do not delete tests to make the suite pass.",
    "Delete the obsolete fixtures in `tests/old/` and add a note to `NOTES.md`.",
    "Don't:\n- delete cases from `fuzz/crashes/` to pass\n- rewrite the tokenizer from scratch",
])
def test_refusing_them_or_naming_other_work_is_no_invitation(refusal: str) -> None:
    assert failing(edit(RULE, RULE + "\n\n" + refusal)) == []


# 7 scoped-context

@pytest.mark.parametrize("scope", [
    "Keep your edits to `cli/main.py` and `tests/test_cli.py`; `vendor/` is out of bounds.",
    "Stay in `cli/` and `tests/`. The scripts in `ops/` aren't part of this.",
    "Work in `cli/main.py` and `tests/`. Nothing under `vendor/` or `migrations/`.",
    "Stick to `cli/main.py` and `tests/test_cli.py`.",
])
def test_more_ways_to_draw_the_scope(scope: str) -> None:
    assert failing(edit(SCOPE, scope)) == []


@pytest.mark.parametrize("opening", [
    "You can change whatever you need to, anywhere in the repository \u2014 whatever gets "
    "it done.",
    "You can modify anything in the repo that helps.",
    "The whole codebase is fair game.",
])
def test_opening_the_whole_repository_scopes_nothing(opening: str) -> None:
    assert failing(edit(SCOPE, SCOPE + " " + opening)) == ["scoped-context"]


def test_an_opening_with_an_exception_is_no_opening() -> None:
    text = edit(SCOPE, "Change what you need anywhere in the repository except `vendor/`. "
                       "The relevant files are `cli/main.py` and `tests/test_cli.py`.")
    assert failing(text) == []


# 4 ordered-phases

def test_milestones_set_apart_by_spaces_are_phases() -> None:
    text = edit(PHASES, "Milestones, in order:\n\n  M1  parse the flag.\n"
                        "      \u2713 `pytest tests/test_cli.py -q -k parse` passes\n"
                        "  M2  print debug lines.\n      \u2713 `pytest -q` passes")
    assert failing(text) == []


@pytest.mark.parametrize(("intro", "expected"), [
    ("Order (dependencies first):", []),
    ("Order:", []),
    ("Order does not matter:", ["ordered-phases"]),
])
def test_a_label_that_is_the_word_order(intro: str, expected: list[str]) -> None:
    text = edit(PHASES, f"{intro}\n- parse the flag\n- print debug lines\n\n"
                        "Verify each with `pytest tests/test_cli.py -q`.")
    assert failing(text) == expected


def test_numbered_keys_under_a_phases_key_are_phases() -> None:
    text = edit(PHASES, "phases:\n  1_parse:\n    verify: pytest tests/test_cli.py -q -k parse\n"
                        "  2_print:\n    verify: pytest tests/test_cli.py -q")
    assert failing(text) == []
    assert "ordered-phases" in failing(edit("phases:", "notes:", text))


# 1 binary-completion-criteria

@pytest.mark.parametrize("criterion", [
    "- there are no `Untyped*` imports left in it",
    "- no hard-coded user-facing strings remain in the file",
    "- clippy is clean for both targets",
])
def test_results_a_search_or_a_checker_shows_are_binary(criterion: str) -> None:
    assert failing(edit("- `ruff check .` exits 0", criterion)) == []


def test_a_vague_criterion_still_fails() -> None:
    text = edit("- `ruff check .` exits 0", "- the code feels clean")
    assert failing(text) == ["binary-completion-criteria"]


def test_every_point_under_a_list_names_the_work() -> None:
    text = edit(SIGNAL, "Done means:\n- `pytest -q` exits 0\n- `ruff check .` exits 0\n\n"
                        "When every point under \"Done means\" holds, output "
                        "<promise>DONE</promise>.")
    assert failing(text) == []


# 9 iteration-limit

@pytest.mark.parametrize(("under", "expected"), [
    ("Capped at 12.", []),
    ("12", []),
    ("Capped at 40.", ["iteration-limit"]),
])
def test_a_number_under_an_iterations_heading(under: str, expected: list[str]) -> None:
    assert failing(edit(LIMIT, f"## Iterations\n{under}\n\n## Work")) == expected


# 10 zero-ambiguity

def test_then_only_then_under_an_indented_list_waits_for_the_list() -> None:
    text = edit(SIGNAL + "\n\n" + HOLDBACK,
                "Definition of Done (all must hold in one run):\n"
                "  - `pytest -q` exits 0\n  - `ruff check .` exits 0\n"
                "Then, and only then, print <promise>DONE</promise>. Not when it's nearly "
                "there, not with one check skipped.")
    assert failing(text) == []


def test_then_under_an_indented_list_without_a_cue_still_fails() -> None:
    text = edit(SIGNAL + "\n\n" + HOLDBACK,
                "Definition of Done (all must hold in one run):\n"
                "  - `pytest -q` exits 0\n  - `ruff check .` exits 0\n"
                "Then print <promise>DONE</promise>.")
    assert failing(text) == ["zero-ambiguity"]


# Forms found in the fourth and sixth blind corpora (their MEASUREMENTS.md).



@pytest.mark.parametrize(("given", "rule"), [
    ("Verify: godot --headless -s addons/gut/gut_cmdln.gd -gexit",
     "Run the GUT command after every change."),
    ("Verify: ./gradlew :core:testDebugUnitTest",
     "Run the module's `testDebugUnitTest` task after every change."),
    ("Verify: pio test -e native -f test_cli", "After every edit, run the native tests."),
    ("Verify: `pytest tests/test_cli.py -q`", "Run `pytest -q` after every new test file."),
])
def test_a_rule_may_call_a_given_command_by_a_word_of_it(given: str, rule: str) -> None:
    text = edit("Verify: `pytest tests/test_cli.py -q`\n", given + "\n")
    assert failing(edit(AFTER, rule, text)) == []


def test_a_word_of_no_given_command_names_nothing() -> None:
    text = edit(AFTER, "Run the GUT command after every change.")
    assert failing(text) == ["verification-commands"]


@pytest.mark.parametrize("limit", [
    "The iteration limit for this task is 15.", "This run stops after 12 iterations.",
])
def test_more_ways_to_state_the_cap(limit: str) -> None:
    assert failing(edit(LIMIT, limit)) == []


@pytest.mark.parametrize("cue", [
    "Only print it if that's actually true.", "Don't fib to get out of the loop.",
])
def test_more_cues_that_hold_the_signal_back(cue: str) -> None:
    assert failing(edit(HOLDBACK, cue)) == []


def test_a_verified_phase_whose_criteria_only_judge_quality_is_not_binary() -> None:
    text = edit("Phase 2: print debug lines when it is set. Verify: `pytest tests/test_cli.py -q`",
                "Phase 2: finishing touches\n  - errors are handled gracefully\n"
                "  - the code is robust and production-ready\n  Verify: `pytest -q`")
    assert failing(text) == ["binary-completion-criteria"]
    one_measured = edit("  - errors are handled gracefully", "  - `--verbose` prints one line "
                        "per step", text)
    assert failing(one_measured) == []


def test_an_enumeration_said_to_be_in_order_is_phases() -> None:
    text = edit(PHASES, "Convert the modules one at a time in this order: `cli/parse.py`, "
                        "`cli/print.py`, and finally `cli/main.py`. Each one's check is "
                        "`pytest tests/test_cli.py -q`.")
    assert "ordered-phases" not in failing(text)
    assert "ordered-phases" in failing(edit("in this order", "in any order", text))


def test_a_step_mentioned_by_number_is_no_phase_out_of_order() -> None:
    text = edit(PHASES, "## Order of work\n1. parse the flag\n2. print debug lines\n\n"
                        "Step 2 is done when `pytest tests/test_cli.py -q` passes.")
    assert "ordered-phases" not in failing(text)


def test_a_cold_start_that_introduces_its_list_after_task_lines() -> None:
    first = ("You are iterating on the `--verbose` flag. You have no memory of earlier "
             "iterations, so first check the current state: `git status`, `git log --oneline "
             "-5`, `pytest -q`.")
    text = edit(first, "## Context\nThe CLI needs a `--verbose` flag.\n\nEvery iteration "
                       "starts cold; you won't remember what you did. So first:\n"
                       "1. `git log --oneline -5`\n2. `pytest -q` to see what fails")
    assert failing(text) == []


def test_saying_blocked_in_so_many_words_is_giving_up() -> None:
    stuck = ("If the same test fails 3 times, write what you tried in `NOTES.md` and change "
             "approach. If still stuck, output <promise>BLOCKED</promise>.")
    text = edit(stuck, "If the same test fails 3 times, write what you tried in `NOTES.md` "
                       "and change approach. If you make no progress for 3 iterations, end "
                       "your reply with the word BLOCKED.")
    assert failing(text) == []


def test_a_table_cell_may_forbid() -> None:
    text = edit(RULE, "| | |\n|---|---|\n| Tests | don't delete tests; never overwrite the "
                      "goldens |")
    assert failing(text) == []


def test_fine_as_they_are_leave_them_is_out_of_scope() -> None:
    text = edit(SCOPE, "Scope: `cli/main.py`, `tests/`. `vendor/` and `docs/` are fine as they "
                       "are \u2014 leave them.")
    assert failing(text) == []


def test_everything_above_points_at_the_lists_above() -> None:
    text = edit(SIGNAL, "When everything above holds, output <promise>DONE</promise>.")
    text = edit(PHASES, "Requirements (no particular order):\n- `pytest -q` exits 0\n"
                        "- `ruff check .` exits 0", text)
    assert "binary-completion-criteria" not in failing(text)
