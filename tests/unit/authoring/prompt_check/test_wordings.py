"""Wordings people write for each attribute, as the rules read them: one edit of the base
prompt (or a short prompt) at a time, each form with the twin that must still fail (or
pass), so a new writer's words pass and what is clearly missing still fails."""

from __future__ import annotations

import time

import pytest

from finesse.authoring.prompt_check.criteria import completion_conditions
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.validate import validate_prompt
from tests.unit.authoring.prompt_check.test_validate import (
    AFTER,
    BASE,
    FIRST,
    HOLDBACK,
    LIMIT,
    PHASES,
    RULE,
    SCOPE,
    SIGNAL,
    STUCK,
    edit,
    failing,
)

RULE_EDIT = "Do not output the promise unless every criterion is met."

# 10 zero-ambiguity


@pytest.mark.parametrize("rule", [
    "Not a moment earlier.", "Don't fudge it.", "This must be unequivocally true.",
    "Never on a hunch.", "Anything less is not done.", "If anything is red it isn't done.",
    "Only then.", "Don't output the promise before that.", "Otherwise keep iterating.",
    "No exceptions.", "Do not lie even if you think you should exit.",
    "Partial completion does not count.", "Never claim completion while a check is red.",
    "The promise is only valid when every box is ticked.", "Don't say it's done if it isn't.",
])
def test_a_cue_beside_a_signal_that_waits_for_everything_holds_it_back(rule: str) -> None:
    assert failing(edit(RULE_EDIT, rule)) == []


@pytest.mark.parametrize("rule", [
    "The promise is a statement of fact.", "Be honest.", "Then stop.",
    "Commit your work before you output it.", "Print it when the phases look finished.",
    "Use your judgement; if it mostly works, that's fine to call it done.",
])
def test_what_holds_nothing_back_still_fails(rule: str) -> None:
    assert failing(edit(RULE_EDIT, rule)) == ["zero-ambiguity"]


def test_the_cue_may_sit_in_the_signals_own_sentence_after_a_dash() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:",
                "Output <promise>DONE</promise> when ALL of the following are true — not a "
                "moment earlier:", edit(RULE_EDIT, ""))
    assert failing(text) == []


def test_done_equals_then_output_with_a_refusal_while_red() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:\n"
                "- `pytest -q` exits 0\n- `ruff check .` exits 0\n\n" + RULE_EDIT,
                "## Finishing\nDone = both phases' checks pass and `ruff check .` exits 0. "
                "Then output <promise>DONE</promise>. If anything is red it isn't done.")
    assert failing(text) == []


def test_a_refusal_in_the_same_sentence_is_no_permission_to_finish() -> None:
    text = edit(RULE_EDIT, "Even if you are fairly confident, do not print the promise until "
                      "every check passes.")
    assert failing(text) == []


# 8 cold-start

FIRST_EDIT = ("You are iterating on the `--verbose` flag. You have no memory of earlier "
              "iterations, so first check the current state: `git status`, "
              "`git log --oneline -5`, `pytest -q`.")


@pytest.mark.parametrize("opening", [
    "Every iteration starts from zero. Look at what exists before writing code: `ls cli/`.",
    "This is one pass of a loop; you won't recall earlier passes. Begin by running the test "
    "suite and reading NOTES.md.",
    "You're continuing work on the `--verbose` flag that may be partly done. Inspect the repo "
    "(tests, log) first.",
    "You are iterating on the `--verbose` flag.\n\nBefore anything else, run `pytest -q` and "
    "read the recent commits.",
    "## Start here (every iteration)\n\n- run `pytest -q`\n- read the recent commits\n"
    "- decide which phase is next",
    "You are iterating on the `--verbose` flag.\nBefore editing, run:\n\n```\npytest -q\n```",
    "Context: you're iterating on the `--verbose` flag and this prompt is all you know. Get "
    "your bearings from `pytest -q` output and recent commits before editing.",
])
def test_an_opening_that_looks_at_the_state_in_any_words_is_a_cold_start(opening: str) -> None:
    assert failing(edit(FIRST_EDIT, opening)) == []


@pytest.mark.parametrize("opening", [
    "Add a `--verbose` flag to the CLI. Run `pytest -q` to check it.",
    "You are iterating on the `--verbose` flag. Keep going until it is finished.",
    "Fix the memory leak in the CLI. Continue until `pytest -q` passes.",
])
def test_a_task_first_opening_is_still_no_cold_start(opening: str) -> None:
    assert failing(edit(FIRST_EDIT, opening)) == ["cold-start"]


@pytest.mark.parametrize("opening", [
    # Was a cold-start failure: the attribute is met, the layout is not (see cold_start.py).
    "The CLI needs a `--verbose` flag; the code is in `cli/main.py`.\n\nYou are iterating on "
    "it with no memory, so first run `pytest -q` and read `git log`.",
    "Dependency upgrade: click 7 to 8 for the CLI (`cli/`, Python 3.12)\n\nEvery iteration: "
    "you remember nothing. Run `pytest -q` and read `git log -5` to see what is done.",
    "**Project:** `cli`, Python 3.12.\n**Task:** a `--verbose` flag.\n\n## Before anything "
    "else\nEach iteration is a fresh start for you. Check where things stand: `pytest -q`.",
])
def test_task_lines_then_a_cold_start_meet_the_attribute_but_not_the_layout(
        opening: str) -> None:
    text = edit(FIRST_EDIT, opening)
    report = validate_prompt(text)
    assert failing(text) == []
    assert (report.passed, report.prompt_only.passed) == (False, False)


# 3 failure-instructions

STUCK_EDIT = ("If the same test fails 3 times, write what you tried in `NOTES.md` and "
              "change approach. If still stuck, output <promise>BLOCKED</promise>.")


@pytest.mark.parametrize("rule", [
    "If a fix doesn't work after a few tries, revert it and rethink the approach. If you're "
    "blocked, output <promise>BLOCKED</promise>.",
    "When you're stuck, re-read the full error output and try something else. If nothing "
    "works for 3 iterations, output <promise>BLOCKED</promise>.",
    "Going in circles? Stop, read the whole traceback, and attack the problem from a "
    "different angle. Hopelessly blocked → <promise>BLOCKED</promise>.",
    "Repeated failure on the same error means your approach is wrong: read the whole message "
    "and try an alternative. If that fails too, output <promise>BLOCKED</promise>.",
    "If you hit a wall, step back and reconsider. If you hit the same wall three iterations "
    "running, write up the blocker and output <promise>STUCK_EDIT</promise>.",
    "Same failure three times → different approach. Three iterations with no progress → "
    "write `BLOCKED.md` and exit.",
    "Don't retry the same fix more than twice — try a different one. If nothing works after "
    "4 iterations, document it and wait for a human.",
    "If the same test keeps failing, read the entire failure output and try an alternative "
    "approach. If you make no progress for 3 iterations, write down what blocks you and stop "
    "working.",
])
def test_ways_of_saying_what_to_do_when_stuck(rule: str) -> None:
    assert failing(edit(STUCK_EDIT, rule)) == []


@pytest.mark.parametrize("rule", [
    "If you get stuck, explain the problem clearly and stop.",
    "If the same test fails 3 times, write what you tried in `NOTES.md` and try a different "
    "approach.",
    "If you can't proceed, output <promise>BLOCKED</promise> and say why.",
    "If a test fails, fix it before moving on. If you're blocked, output "
    "<promise>BLOCKED</promise>.",
    "If the same test fails three times, stop changing code and try a different approach.",
])
def test_half_a_rule_for_being_stuck_still_fails(rule: str) -> None:
    assert failing(edit(STUCK_EDIT, rule)) == ["failure-instructions"]


# 1 binary-completion-criteria

CRITERION = "- `ruff check .` exits 0"
SIGNAL_EDIT = ("Output <promise>DONE</promise> when ALL of the following are true:\n"
               "- `pytest -q` exits 0\n- `ruff check .` exits 0\n")


@pytest.mark.parametrize("criterion", [
    "- mypy is clean", "- `ruff check .` clean", "- clippy is warning-free",
    "- the build compiles without warnings",
    "- quoted fields are parsed correctly — `pytest -k quoted` passes",
    "- behaves as expected with `--verbose --quiet` (`pytest -k conflict` passes)",
    "- README.md updated with a usage example", "- CHANGELOG entry added under Unreleased",
    "- Phases 1 and 2 complete",
])
def test_a_criterion_a_check_measures_is_binary(criterion: str) -> None:
    assert failing(edit(CRITERION, criterion)) == []


@pytest.mark.parametrize("criterion", [
    "- the README reads well", "- `pytest -q` passes and the code is idiomatic",
    "- `pytest -q` passes; the code is clean", "- the output is clean", "- it works correctly",
    "- the CLI feels snappy",
])
def test_a_quality_no_check_measures_still_fails(criterion: str) -> None:
    assert failing(edit(CRITERION, criterion)) == ["binary-completion-criteria"]


@pytest.mark.parametrize("signal", [
    "## Completion\n- All phases verified\n- `ruff check .` clean\n"
    "- Then output <promise>DONE</promise>\n",
    "Output <promise>DONE</promise> after you have confirmed everything in the Completion "
    "section.\n",
    "Output <promise>DONE</promise> when the work is finished and verified.\n",
])
def test_a_condition_that_points_at_the_checks(signal: str) -> None:
    assert failing(edit(SIGNAL_EDIT, signal)) == []


@pytest.mark.parametrize("phase", [
    "Phase 2: clean up the debug printing code. Test: `pytest tests/test_cli.py -q`",
    "Phase 2: polish the help text. Run `pytest tests/test_cli.py -q` to confirm.",
    "Phase 2: make the debug output readable. Gate: `pytest tests/test_cli.py -q`",
])
def test_a_phase_checked_by_a_command_under_any_label(phase: str) -> None:
    text = edit("Phase 2: print debug lines when it is set. Verify: `pytest tests/test_cli.py -q`",
                phase)
    assert failing(text) == []


# 4 ordered-phases

PHASES_EDIT = ("Phase 1: parse the flag. Verify: `pytest tests/test_cli.py -q -k parse`\n"
               "Phase 2: print debug lines when it is set. Verify: `pytest tests/test_cli.py -q`\n")


@pytest.mark.parametrize("phases", [
    "## What to build\n1. Parse the flag.\n2. Print debug lines.\n\n"
    "Verify each with `pytest -q`.\n",
    "**Work plan**\n\n**1. Parse** — parse the flag; `pytest -q -k parse` exits 0.\n"
    "**2. Print** — print debug lines; `pytest -q` exits 0.\n",
    "What I want, in order:\nFirst, parse the flag (`pytest -q -k parse`).\n\n"
    "Then, print debug lines (`pytest -q`).\n\nFinally, document it in the README.\n",
    "### A. Parse\nParse the flag. Verify: `pytest -q -k parse`\n\n"
    "### B. Print\nPrint debug lines. Verify: `pytest -q`\n",
    "Phase I: parse the flag. Verify: `pytest -q -k parse`\n"
    "Phase II: print debug lines. Verify: `pytest -q`\n",
    "Task 1: parse the flag. Verify: `pytest -q -k parse`\n"
    "Task 2: print debug lines. Verify: `pytest -q`\n",
    "Phase 0: reproduce. Verify: `pytest -q -k repro`\n"
    "Phase 1: parse the flag. Verify: `pytest -q -k parse`\n",
    "Order of work: parse the flag → print debug lines → document it. Verify each with "
    "`pytest -q`.\n",
    "Do these one at a time, top to bottom:\n- parse the flag (`pytest -q -k parse`)\n"
    "- print debug lines (`pytest -q`)\n",
    "Start with parsing the flag (`pytest -q -k parse`). Once that passes, move on to "
    "printing debug lines (`pytest -q`).\n",
    "(1) parse the flag. Verify: `pytest -q -k parse`\n"
    "(2) print debug lines. Verify: `pytest -q`\n",
])
def test_ordered_work_in_any_layout_is_ordered_phases(phases: str) -> None:
    assert failing(edit(PHASES_EDIT, phases)) == []


@pytest.mark.parametrize("not_phases", [
    "## Tasks\n- parse the flag\n- print debug lines\n- document it\n\n## Notes\n",
    "Parse the flag and print debug lines when it is set; when that works, document it.\n",
    "Things to do (any order):\n1. parse the flag\n2. print debug lines\n",
    "## Rules\n1. Never add dependencies.\n2. Do not touch `vendor/`.\n\n## Work\n"
    "- parse the flag\n- print debug lines\n",
])
def test_unordered_work_still_has_no_phases(not_phases: str) -> None:
    assert "ordered-phases" in failing(edit(PHASES_EDIT, not_phases))


# 5 verification-commands

AFTER_CHANGE = "Run `pytest -q` after every change."


@pytest.mark.parametrize("rule", [
    "Between edits, run `pytest -q`; a red run gets fixed before the next edit.",
    "after_every_change: run `pytest -q` and fix failures",
    "After you change anything, run `pytest -q` and fix failures before moving on.",
    "Run `pytest -q` before moving on to anything else; fix failures first.",
    "Keep `pytest -q` green as you go: run it after every small step.",
    "Run `pytest -q` after each logical unit of work.",
    "## Verification loop\n1. Make one small change.\n2. Run `pytest -q`.\n"
    "3. If it fails, fix it before the next change.",
    "The inner loop is: edit, run `pytest -q`, fix, repeat.",
    "Every code change must be followed by a `pytest -q` run.",
    "Per change: `pytest -q`.",
    "Don't stack up changes: run `pytest -q` after each one.",
])
def test_ways_of_saying_when_to_run_the_checks(rule: str) -> None:
    assert failing(edit(AFTER_CHANGE, rule)) == []


@pytest.mark.parametrize("rule", [
    "Run each phase's Verify command when you finish the phase.",
    "Work carefully and check frequently that nothing broke.",
    "If the tests fail, fix them before moving on.",
    "Edit carefully, then check the output by eye.",
])
def test_a_cadence_without_a_command_or_a_command_without_one_still_fails(rule: str) -> None:
    assert failing(edit(AFTER_CHANGE, rule)) == ["verification-commands"]


# 6 guardrails, 7 scoped-context, 9 iteration-limit

@pytest.mark.parametrize("rule", [
    "Prohibited: adding dependencies, deleting tests.", "Tests must not be deleted to get green.",
    "Adding dependencies is forbidden.", "Refrain from adding dependencies.",
    "## Don'ts\n- add dependencies\n- delete tests",
])
def test_ways_of_forbidding(rule: str) -> None:
    assert failing(edit("Do not add dependencies.", rule)) == []


@pytest.mark.parametrize("rule", ["This may not be needed.", "Prefer small commits. Fix the "
                                  "code, not the assertions."])
def test_what_forbids_nothing(rule: str) -> None:
    assert failing(edit("Do not add dependencies.", rule)) == ["guardrails"]


@pytest.mark.parametrize("scope", [
    "Boundaries: edit `cli/` and `tests/`. `vendor/` is third-party — hands off.",
    "Work in `cli/` and `tests/`. Nothing outside those two directories should change.",
    "Files in play: `cli/main.py`, `tests/test_cli.py`. Untouchable: `vendor/`.",
    "Work in `cli/` and `tests/`. Everything else is frozen.",
    "Scope is `cli/` and `tests/`; `vendor/` and `docs/` are not part of this task.",
])
def test_ways_of_putting_paths_off_limits(scope: str) -> None:
    text = edit("In scope: `cli/main.py`, `tests/test_cli.py`. Out of scope: `vendor/`.", scope)
    assert failing(text) == []


@pytest.mark.parametrize("limit", [
    "Iteration ceiling: 10.", "Iterations: 10", "Hard stop at iteration 12.",
    "You get 12 passes.", "Twelve iterations, no more.", "12-iteration budget.",
    "If you reach the 12th iteration, stop.", "Limit yourself to 12 iterations.",
])
def test_loose_wordings_of_a_cap(limit: str) -> None:
    assert failing(edit("Max iterations: 10", limit)) == []


def test_as_many_passes_as_needed_beside_an_explicit_cap_lifts_nothing() -> None:
    text = edit("Do not add dependencies.", "Do not add dependencies. Take as many passes as "
                                            "you need on phase 2.")
    assert failing(text) == []


def test_a_prompt_quoted_whole_reads_as_the_prompt() -> None:
    quoted = "\n".join(f"> {line}" if line else ">" for line in BASE.split("\n"))
    assert failing(quoted) == []


@pytest.mark.parametrize("fence", ["```", "```yaml", "~~~~", "   ```text"])
def test_a_prompt_fenced_whole_reads_as_the_prompt(fence: str) -> None:
    # As a quoted one does: someone pasted it in a code block. The numbering stays.
    closing = fence.strip()[0] * (4 if "~~~~" in fence else 3)
    assert failing(f"{fence}\n{BASE}\n{closing}\n") == []
    assert failing(f"\n{fence}\n{BASE}{closing}\n\n") == []


def test_a_fence_closed_before_the_end_is_code_as_ever() -> None:
    # Only a fence that wraps everything is unwrapped: one closed early holds code, and the
    # prose after it is read as it stands.
    fenced = f"```\n{BASE}\n```\nsome words after the code\n```\nmore code\n```\n"
    assert {"completion-signal", "cold-start", "ordered-phases"} <= set(failing(fenced))


@pytest.mark.parametrize(("old", "new"), [
    ("Phase 1: parse the flag. Verify: `pytest tests/test_cli.py -q -k parse`\n"
     "Phase 2: print debug lines when it is set. Verify: `pytest tests/test_cli.py -q`\n",
     "Work breakdown, to be done in sequence:\n\n(a) parse the flag. `pytest -q -k parse` "
     "passes.\n(b) print debug lines. `pytest -q` passes.\n"),
    ("Phase 1: parse the flag. Verify: `pytest tests/test_cli.py -q -k parse`\n"
     "Phase 2: print debug lines when it is set. Verify: `pytest tests/test_cli.py -q`\n",
     "| Phase | What | Verify |\n|---|---|---|\n| one | parse the flag | `pytest -q -k parse` |\n"
     "| two | print debug lines | `pytest -q` |\n"),
    ("Phase 1: parse", "→ Phase 1: parse"),
    ("Run `pytest -q` after every change.", "Always re-run `pytest -q` after editing any .py "
                                            "file."),
    ("Out of scope: `vendor/`.", "`vendor/` is vendored code; please leave it be."),
    ("In scope: `cli/main.py`, `tests/test_cli.py`. Out of scope: `vendor/`.",
     "Allowed: `cli/main.py`, `tests/test_cli.py`. Not allowed: anything else."),
    ("Do not output the promise unless every criterion is met.", "And not before."),
])
def test_more_layouts_and_wordings(old: str, new: str) -> None:
    assert failing(edit(old, new)) == []


@pytest.mark.parametrize(("old", "new"), [
    (PHASES_EDIT, "# Plan (in order)\n\n## Parse the flag\nVerify: `pytest -q -k parse`\n\n"
             "## Print debug lines\nVerify: `pytest -q`\n\n# Rules\n"),
    (PHASES_EDIT, "## Phase: parse\nVerify: `pytest -q -k parse`\n\n## Phase: print\n"
             "Verify: `pytest -q`\n\n## Rules\n"),
    (PHASES_EDIT, "1st: parse the flag. Verify: `pytest -q -k parse`\n"
             "2nd: print debug lines. Verify: `pytest -q`\n"),
    (PHASES_EDIT, "Phases: (1) parse the flag (`pytest -q -k parse`), (2) print debug lines "
             "(`pytest -q`), (3) document it.\n"),
    (AFTER_CHANGE, "After every change, run the tests. The command is `pytest -q`."),
    ("Do not add dependencies.", "Be careful not to add dependencies."),
    ("Do not add dependencies.", "Also, never add dependencies."),
])
def test_yet_more_layouts_and_wordings(old: str, new: str) -> None:
    assert failing(edit(old, new)) == []


def test_a_cadence_with_a_path_in_the_next_rule_names_no_command() -> None:
    text = edit(AFTER_CHANGE, "Check your work after each change in whatever way you like. "
                              "Only modify `cli/main.py`.")
    assert failing(text) == ["verification-commands"]


def test_the_rule_for_giving_up_is_not_also_the_rule_for_changing_course() -> None:
    text = edit(STUCK_EDIT, "If you're stuck for three iterations in a row, note the blocker in "
                       "`NOTES.md` and output <promise>BLOCKED</promise>.")
    assert failing(text) == ["failure-instructions"]


def test_emitting_when_you_think_it_works_is_leave_to_finish() -> None:
    text = edit(RULE_EDIT, f"{RULE_EDIT} Output it when you think it's basically working.")
    assert failing(text) == ["zero-ambiguity"]


@pytest.mark.parametrize(("old", "new"), [
    (AFTER_CHANGE, "Run these after every change:\n\n```\npytest -q\nruff check .\n```"),
    ("Max iterations: 10", "Max iterations: 10. The property tests run up to 200 iterations "
                           "each."),
    (CRITERION, "- No regressions in the full suite"),
    ("You are iterating on the `--verbose` flag. You have no memory of earlier iterations, so",
     "You are a senior Python engineer working autonomously.\n\nYou have no memory of earlier "
     "iterations, so"),
])
def test_commands_in_a_block_iterations_of_other_things_and_a_persona_line(
        old: str, new: str) -> None:
    assert failing(edit(old, new)) == []


def test_a_persona_line_then_the_task_is_still_no_cold_start() -> None:
    text = edit("You are iterating on the `--verbose` flag. You have no memory of earlier "
                "iterations, so first check the current state: `git status`, "
                "`git log --oneline -5`, `pytest -q`.",
                "You are a senior Python engineer.\n\nAdd a `--verbose` flag to the CLI.")
    assert failing(text) == ["cold-start"]


@pytest.mark.parametrize("text", [
    "a " * 30_000, "\u2192 " * 20_000, "then, " * 5_000, "1) 2) " * 5_000, ": " * 20_000,
])
def test_one_long_sentence_takes_linear_time(text: str) -> None:
    # The chain patterns are searched only where their marks are; searched on every long
    # sentence, a lazy group retried from each position took minutes.
    started = time.monotonic()
    failing(text)
    assert time.monotonic() - started < 5


def test_the_cold_start_is_no_after_change_rule_and_no_plan() -> None:
    opening = ("You are iterating on the `--verbose` flag with no memory, so get your bearings "
               "first: run `pytest -q`, and keep `NOTES.md` updated as you go.")
    text = edit("Run `pytest -q` after every change.\n\n", "", edit(
        "You are iterating on the `--verbose` flag. You have no memory of earlier iterations, "
        "so first check the current state: `git status`, `git log --oneline -5`, `pytest -q`.",
        opening))
    assert failing(text) == ["verification-commands"]


def test_a_plan_paragraph_first_is_still_a_plan_when_the_cold_start_is_missing() -> None:
    text = edit("You are iterating on the `--verbose` flag. You have no memory of earlier "
                "iterations, so first check the current state: `git status`, "
                "`git log --oneline -5`, `pytest -q`.",
                "First, parse the flag (`pytest -q -k parse`). Then print debug lines "
                "(`pytest -q`). Finally, document it in the README.")
    assert failing(text) == ["cold-start"]


@pytest.mark.parametrize("rule", [
    "Some things I really don't want: new dependencies, global state.",
])
def test_what_the_writer_does_not_want_is_a_guardrail(rule: str) -> None:
    assert failing(edit("Do not add dependencies.", rule)) == []


def test_dont_output_it_early_is_the_promise_rule_not_a_guardrail() -> None:
    text = edit("Do not add dependencies.\n\n", "", edit(RULE_EDIT, "Don't output it a moment "
                                                                "before that."))
    assert failing(text) == ["guardrails"]


@pytest.mark.parametrize("opening", [
    # A task first that mentions the loop and, far from it, tells the agent to check
    # something: no cold start.
    "The `--verbose` flag is used by two tools that read and rewrite config files. The goal "
    "of this loop is to add it to the CLI. The output should help with debugging. Both "
    "modes need tests. If you believe a case is wrong, check it against the spec text in "
    "`docs/spec.md`.",
    "The task is to make `cli/main.py` print debug lines; this part is done when "
    "`pytest -q` passes, which checks that no debug line is left when the flag is off.",
])
def test_a_background_or_task_paragraph_first_is_no_cold_start(opening: str) -> None:
    text = edit(FIRST_EDIT, opening)
    assert "cold-start" in failing(text)


def test_items_under_a_do_not_key_are_guardrails() -> None:
    text = edit("Do not add dependencies.", "do_not:\n  - add dependencies\n  - delete tests")
    assert failing(text) == []


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


def test_steps_told_after_the_cold_start_in_a_one_paragraph_prompt() -> None:
    text = edit(FIRST, FIRST + " The goal is a `--verbose` flag. Do the work in this order. "
                "First, parse the flag in `cli/main.py`; `pytest -q -k parse` should pass. "
                "Second, print one line per step; `pytest -q -k print` covers that. Once "
                "those two are in, `ruff check .` has to be clean. Run `pytest -q` after "
                "every edit.")
    text = edit(PHASES + "\n", "", text)
    assert "ordered-phases" not in failing(text)


def test_a_give_up_tag_after_a_clause_about_being_blocked_is_no_completion_signal() -> None:
    text = edit(STUCK, "If the same test fails 3 times, change approach. If you've gone 4 loops "
                       "without getting anywhere, write what's blocking into NOTES.md and "
                       "print <promise>STUCK</promise>.")
    assert failing(text) == []
    assert failing(edit(SIGNAL + "\n\n" + HOLDBACK, "", text)) == [
        "completion-signal", "zero-ambiguity"]


@pytest.mark.parametrize("limit", [
    "Budget: 14 runs.", "Expected to converge well inside **8 runs**; that is the hard limit.",
    "ATTEMPT LIMIT\n15.",
])
def test_a_loop_may_count_runs_and_attempts(limit: str) -> None:
    assert failing(edit(LIMIT, limit)) == []


def test_a_run_limit_over_25_still_fails() -> None:
    assert failing(edit(LIMIT, "Budget: 40 runs.")) == ["iteration-limit"]


@pytest.mark.parametrize("opening", [
    "Runbook: add a `--verbose` flag to the CLI of the `widgets` service, with tests, docs and "
    "a changelog entry (Python 3.12)\n\nYou have no memory of earlier runs. "
    "Follow this runbook from step 0 every time.\n\n0. Orient. Run `pytest -q` and "
    "`git log --oneline -5`; note which steps are already done.",
    "SPECIFICATION: THE VERBOSE FLAG\n\n1. Applicability\n\n1.1 This document is executed by "
    "an agent that retains no state between iterations.\n\n1.2 At the beginning of every "
    "iteration the agent MUST establish the current state: run `pytest -q` and determine "
    "which deliverables are satisfied.",
    "# loop prompt, read it every iteration, you have no memory of the last one\n\n"
    "project: cli (Python 3.12)\n\non_start:\n  - run: pytest -q\n"
    "  - run: git log --oneline -5\n  - then: decide which "
    "phases already pass",
])
def test_more_cold_starts_after_a_title(opening: str) -> None:
    assert failing(edit(FIRST, opening)) == []


def test_a_label_over_work_is_no_cold_start() -> None:
    text = edit(FIRST, "# loop prompt\n\nsteps:\n  - add the flag\n  - print lines")
    assert "cold-start" in failing(text)


def test_naming_the_leniency_to_refuse_it_is_no_leniency() -> None:
    text = edit(HOLDBACK, "Don't output the promise if any check is red or wasn't run this "
                          "iteration. "
                          "Being \"pretty sure\" isn't enough; run them.")
    assert failing(text) == []
    assert failing(edit(HOLDBACK, "If you're pretty sure it works, output it.")) == [
        "zero-ambiguity"]


def test_scenarios_are_phases() -> None:
    text = edit(PHASES, "Scenario 1: parse the flag\n  Check: `pytest -q -k parse`\n\n"
                        "Scenario 2: print lines\n  Check: `pytest -q -k print`")
    assert failing(text) == []


def test_refusing_done_while_a_named_check_does_not_hold() -> None:
    text = edit(SIGNAL + "\n\n" + HOLDBACK,
                "When both checks pass in the same iteration, you're done. Don't call it done "
                "on a run from a previous iteration; if `pytest -q` isn't green right now, "
                "you're not done. Then output <promise>DONE</promise>.")
    assert "zero-ambiguity" not in failing(text)


@pytest.mark.parametrize(("given", "rule"), [
    ("Verify: xcodebuild test -only-testing:AppTests/APIClientTests",
     "Run the APIClientTests and ServicesTests targets after every change."),
])
def test_a_rule_may_name_given_targets(given: str, rule: str) -> None:
    text = edit("Verify: `pytest tests/test_cli.py -q`\n", given + "\n")
    assert failing(edit("Run `pytest -q` after every change.", rule, text)) == []


def test_a_yaml_style_after_every_change_key_over_run_keys() -> None:
    text = edit("Run `pytest -q` after every change.",
                "after_every_change:\n  - run: pytest -q && ruff check .\n  - if_red: fix it")
    assert failing(text) == []


def test_a_criterion_saying_nothing_is_left_is_no_guardrail() -> None:
    text = edit(RULE, "")
    text = edit("- `ruff check .` exits 0", "- No remaining callers of `old_print` in `cli/`",
                text)
    assert "guardrails" in failing(text)


def test_steps_numbered_with_a_number_sign() -> None:
    text = edit(PHASES, "#1 parse the flag\n   chk: pytest -q -k parse\n"
                        "#2 print lines\n   chk: pytest -q -k print")
    assert "ordered-phases" not in failing(text)


def test_any_gate_unrun_or_red() -> None:
    text = edit(SIGNAL + "\n\n" + HOLDBACK,
                "When both checks pass in the same run, output <promise>DONE</promise>. Never "
                "output it while `pytest -q` is non-zero or any gate is unrun or red this "
                "attempt.")
    assert failing(text) == []


def test_prohibitions_after_a_colon() -> None:
    text = edit(RULE, "Please resist a few temptations: don't rewrite `cli/main.py` from "
                      "scratch when editing it will do, and don't add wrapper classes.")
    assert failing(text) == []


def test_the_bar_introduces_criteria() -> None:
    text = edit(SIGNAL, "For each page, the bar is:\n\n- It reads well to a newcomer.\n"
                        "- The tone matches the rest of the site.\n\n"
                        "When all items are done and the pages meet the bar above, output "
                        "<promise>DONE</promise>.")
    assert "binary-completion-criteria" in failing(text)


def test_once_the_part_works_moves_on() -> None:
    text = edit(PHASES, "The first thing to build is the parser in `cli/parse.py`; `pytest -q "
                        "-k parse` should pass.\n\nOnce the parser works, move on to printing "
                        "in `cli/print.py`; `pytest -q -k print` covers it.\n\nFinally the "
                        "whole suite has to be clean.")
    assert "ordered-phases" not in failing(text)
    assert validate_prompt(BASE).passed


def test_a_lower_case_line_under_an_indented_list_goes_on_with_its_last_item() -> None:
    # Found as a regression on the eighth blind corpus: the rule that ends an indented item
    # at a less indented line ("Then, and only then, ...") cut this lazy continuation off.
    opening = ("You're iterating on the `--verbose` flag. Zero memory between iterations. At "
               "the start of every iteration:\n  1. `make check`\n  2. `pytest -q tests/`\n"
               "  3. read `MIGRATION_LOG.md`\nand from that decide which of the phases below is "
               "next.")
    assert failing(edit(FIRST, opening)) == []


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


def test_re_enabling_a_skipped_test_is_no_leave_to_skip_it() -> None:
    text = edit(PHASES, PHASES + "\nPhase 3: the existing test `test_quiet` (currently "
                "`it.skip`) is re-enabled and `npm test quiet` passes.")
    assert failing(text) == []
    assert failing(edit(RULE, RULE + " If the quiet test keeps failing, just skip it.")) == [
        "guardrails"]


def test_run_it_after_every_change_points_at_the_command_before() -> None:
    text = edit(AFTER, "`make check` runs pytest and ruff. Run it after every change.")
    assert failing(text) == []
    assert "verification-commands" in failing(
        edit(AFTER, "The checks live in CI. Run it after every change."))


def test_if_it_is_not_true_do_not_write_it() -> None:
    text = edit(SIGNAL + "\n\n" + HOLDBACK,
                "When both phases are done and `pytest -q` passes, end with "
                "<promise>DONE</promise>. That line is a claim that every check passed in "
                "this run. If it isn't true, don't write it.")
    assert failing(text) == []


def test_a_role_that_lints_clean_is_a_checked_result() -> None:
    assert failing(edit("- `ruff check .` exits 0", "- The code lints clean.")) == []


@pytest.mark.parametrize("limit", ["Max 10 go-rounds.", "You get 12 restarts at most."])
def test_more_names_for_a_turn_of_the_loop(limit: str) -> None:
    assert failing(edit(LIMIT, limit)) == []


def test_stays_as_is_is_out_of_scope() -> None:
    text = edit(SCOPE, "Work in `cli/main.py` and `tests/`; the shared `vendor/` module stays "
                       "as is.")
    assert failing(text) == []


def test_the_last_listed_step_ends_where_the_list_does() -> None:
    text = edit(PHASES, "The work, in order:\n1. parse the flag; `pytest -q -k parse` passes\n"
                        "2. print debug lines\n   (one per step)")
    last = Prompt(text, None).phases.found[-1]
    assert [line.text for line in last.region if line.text.strip()] == [
        "2. print debug lines", "   (one per step)"]
