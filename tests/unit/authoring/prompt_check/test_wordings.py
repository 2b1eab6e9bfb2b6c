"""Wordings no corpus had, one edit of the base prompt at a time: each attribute keys on a
few signals rather than on phrases, so a new writer's words for it pass, and what is
clearly missing still fails."""

from __future__ import annotations

import time

import pytest

from finesse.authoring.prompt_check.validate import validate_prompt
from tests.unit.authoring.prompt_check.test_validate import BASE, edit, failing

RULE = "Do not output the promise unless every criterion is met."

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
    assert failing(edit(RULE, rule)) == []


@pytest.mark.parametrize("rule", [
    "The promise is a statement of fact.", "Be honest.", "Then stop.",
    "Commit your work before you output it.", "Print it when the phases look finished.",
    "Use your judgement; if it mostly works, that's fine to call it done.",
])
def test_what_holds_nothing_back_still_fails(rule: str) -> None:
    assert failing(edit(RULE, rule)) == ["zero-ambiguity"]


def test_the_cue_may_sit_in_the_signals_own_sentence_after_a_dash() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:",
                "Output <promise>DONE</promise> when ALL of the following are true — not a "
                "moment earlier:", edit(RULE, ""))
    assert failing(text) == []


def test_done_equals_then_output_with_a_refusal_while_red() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:\n"
                "- `pytest -q` exits 0\n- `ruff check .` exits 0\n\n" + RULE,
                "## Finishing\nDone = both phases' checks pass and `ruff check .` exits 0. "
                "Then output <promise>DONE</promise>. If anything is red it isn't done.")
    assert failing(text) == []


def test_a_refusal_in_the_same_sentence_is_no_permission_to_finish() -> None:
    text = edit(RULE, "Even if you are fairly confident, do not print the promise until "
                      "every check passes.")
    assert failing(text) == []


# 8 cold-start

FIRST = ("You are iterating on the `--verbose` flag. You have no memory of earlier iterations, "
         "so first check the current state: `git status`, `git log --oneline -5`, `pytest -q`.")


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
    assert failing(edit(FIRST, opening)) == []


@pytest.mark.parametrize("opening", [
    "Add a `--verbose` flag to the CLI. Run `pytest -q` to check it.",
    "You are iterating on the `--verbose` flag. Keep going until it is finished.",
    "Fix the memory leak in the CLI. Continue until `pytest -q` passes.",
])
def test_a_task_first_opening_is_still_no_cold_start(opening: str) -> None:
    assert failing(edit(FIRST, opening)) == ["cold-start"]


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
    text = edit(FIRST, opening)
    report = validate_prompt(text)
    assert failing(text) == []
    assert (report.passed, report.prompt_only.passed) == (False, False)


# 3 failure-instructions

STUCK = ("If the same test fails 3 times, write what you tried in `NOTES.md` and change "
         "approach. If still stuck, output <promise>BLOCKED</promise>.")


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
    "running, write up the blocker and output <promise>STUCK</promise>.",
    "Same failure three times → different approach. Three iterations with no progress → "
    "write `BLOCKED.md` and exit.",
    "Don't retry the same fix more than twice — try a different one. If nothing works after "
    "4 iterations, document it and wait for a human.",
    "If the same test keeps failing, read the entire failure output and try an alternative "
    "approach. If you make no progress for 3 iterations, write down what blocks you and stop "
    "working.",
])
def test_ways_of_saying_what_to_do_when_stuck(rule: str) -> None:
    assert failing(edit(STUCK, rule)) == []


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
    assert failing(edit(STUCK, rule)) == ["failure-instructions"]


# 1 binary-completion-criteria

CRITERION = "- `ruff check .` exits 0"
SIGNAL = ("Output <promise>DONE</promise> when ALL of the following are true:\n"
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
    assert failing(edit(SIGNAL, signal)) == []


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

PHASES = ("Phase 1: parse the flag. Verify: `pytest tests/test_cli.py -q -k parse`\n"
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
    assert failing(edit(PHASES, phases)) == []


@pytest.mark.parametrize("not_phases", [
    "## Tasks\n- parse the flag\n- print debug lines\n- document it\n\n## Notes\n",
    "Parse the flag and print debug lines when it is set; when that works, document it.\n",
    "Things to do (any order):\n1. parse the flag\n2. print debug lines\n",
    "## Rules\n1. Never add dependencies.\n2. Do not touch `vendor/`.\n\n## Work\n"
    "- parse the flag\n- print debug lines\n",
])
def test_unordered_work_still_has_no_phases(not_phases: str) -> None:
    assert "ordered-phases" in failing(edit(PHASES, not_phases))


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
    (PHASES, "# Plan (in order)\n\n## Parse the flag\nVerify: `pytest -q -k parse`\n\n"
             "## Print debug lines\nVerify: `pytest -q`\n\n# Rules\n"),
    (PHASES, "## Phase: parse\nVerify: `pytest -q -k parse`\n\n## Phase: print\n"
             "Verify: `pytest -q`\n\n## Rules\n"),
    (PHASES, "1st: parse the flag. Verify: `pytest -q -k parse`\n"
             "2nd: print debug lines. Verify: `pytest -q`\n"),
    (PHASES, "Phases: (1) parse the flag (`pytest -q -k parse`), (2) print debug lines "
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
    text = edit(STUCK, "If you're stuck for three iterations in a row, note the blocker in "
                       "`NOTES.md` and output <promise>BLOCKED</promise>.")
    assert failing(text) == ["failure-instructions"]


def test_emitting_when_you_think_it_works_is_leave_to_finish() -> None:
    text = edit(RULE, f"{RULE} Output it when you think it's basically working.")
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
    text = edit("Do not add dependencies.\n\n", "", edit(RULE, "Don't output it a moment "
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
    text = edit(FIRST, opening)
    assert "cold-start" in failing(text)


def test_items_under_a_do_not_key_are_guardrails() -> None:
    text = edit("Do not add dependencies.", "do_not:\n  - add dependencies\n  - delete tests")
    assert failing(text) == []
