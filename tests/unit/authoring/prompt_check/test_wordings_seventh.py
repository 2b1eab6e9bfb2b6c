"""Forms found in the seventh blind corpus (`corpus_blind7/MEASUREMENTS.md`): prompts written
away from the seed's template. Each is a general rule, with the twin that must still fail."""

from __future__ import annotations

import pytest

from finesse.authoring.prompt_check.validate import validate_prompt
from tests.unit.authoring.prompt_check.test_validate import (
    BASE,
    FIRST,
    HOLDBACK,
    LIMIT,
    PHASES,
    RULE,
    SIGNAL,
    STUCK,
    edit,
    failing,
)


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
