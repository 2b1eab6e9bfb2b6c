"""validate_prompt, in memory: one complete prompt, then one edit at a time per attribute."""

from __future__ import annotations

import pytest

from finesse.authoring.prompt_check.validate import AttributeResult, validate_prompt
from tests.unit.authoring.prompt_check.test_validate import (
    AFTER,
    BASE,
    FIRST,
    RULE,
    SCOPE,
    STUCK,
    edit,
    failing,
    result,
)

# 1 binary-completion-criteria

@pytest.mark.parametrize(("vague", "word"), [
    ("clean", "clean"), ("good", "good"), ("properly structured", "properly"),
    ("well-written", "well-written"), ("nice", "nice"), ("robust", "robust"),
    ("as appropriate", "as appropriate"),
])
def test_a_vague_word_in_a_criterion_fails_and_names_the_line(vague: str, word: str) -> None:
    text = edit("- `ruff check .` exits 0", f"- the code is {vague}")
    assert result(text, "binary-completion-criteria") == AttributeResult(
        id=1, key="binary-completion-criteria", passed=False,
        evidence=f"line 18: - the code is {vague}",
        fix=f"replace '{word}' with a command and its expected result, e.g. "
            "'`ruff check .` exits 0'",
    )
    assert failing(text) == ["binary-completion-criteria"]


def test_a_vague_word_inside_a_command_is_fine() -> None:
    assert failing(edit("`ruff check .` exits 0", "`grep -c clean log.txt` prints 0")) == []


def test_a_criterion_no_command_can_check_fails() -> None:
    text = edit("- `ruff check .` exits 0", "- Users can log in with the new flag")
    assert result(text, "binary-completion-criteria") == AttributeResult(
        id=1, key="binary-completion-criteria", passed=False,
        evidence="line 18: - Users can log in with the new flag",
        fix="make this criterion a command with an expected result, e.g. '`pytest -q` exits 0'",
    )
    assert failing(text) == ["binary-completion-criteria"]


@pytest.mark.parametrize("criterion", [
    "All tests pass", "Coverage > 80%", "No linter errors", "API returns 200 for GET /users",
])
def test_the_seeds_yes_examples_are_binary_without_naming_a_command(criterion: str) -> None:
    assert failing(edit("- `ruff check .` exits 0", f"- {criterion}")) == []


@pytest.mark.parametrize(("criterion", "word"), [
    ("Code is clean", "clean"), ("Make it good", "good"), ("Properly structured", "Properly"),
])
def test_the_seeds_no_examples_are_not_binary(criterion: str, word: str) -> None:
    text = edit("- `ruff check .` exits 0", f"- {criterion}")
    assert result(text, "binary-completion-criteria").fix == (
        f"replace '{word}' with a command and its expected result, e.g. "
        "'`ruff check .` exits 0'")


def test_an_exit_status_counts_as_a_command() -> None:
    assert failing(edit("- `ruff check .` exits 0", "- the nightly build exits 0")) == []


def test_a_single_inline_criterion_with_a_command_passes() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:\n"
                "- `pytest -q` exits 0\n- `ruff check .` exits 0\n",
                "Output <promise>DONE</promise> when `pytest -q` and `ruff check .` exit 0.\n")
    assert failing(text) == []


def test_a_signal_without_criteria_fails_on_its_line() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:\n"
                "- `pytest -q` exits 0\n- `ruff check .` exits 0\n",
                "Output <promise>DONE</promise> when you are done.\n")
    assert result(text, "binary-completion-criteria") == AttributeResult(
        id=1, key="binary-completion-criteria", passed=False,
        evidence="line 16: Output <promise>DONE</promise> when you are done.",
        fix="say what must be true: 'when ALL of the following are true:' and a list of "
            "checks, e.g. '- `pytest -q` exits 0'",
    )
    assert failing(text) == ["binary-completion-criteria"]


def test_a_signal_that_points_at_the_verified_phases_is_binary() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:\n"
                "- `pytest -q` exits 0\n- `ruff check .` exits 0\n",
                "When ALL phases are complete and ALL verification commands pass cleanly,\n"
                "output <promise>DONE</promise>.\n")
    assert failing(text) == []


def test_a_vague_phase_is_binary_when_its_verify_line_names_a_command() -> None:
    text = edit("Phase 2: print debug lines when it is set.",
                "Phase 2: the debug output is clean.")
    assert failing(text) == []
    prose = edit("Verify: `pytest tests/test_cli.py -q`\n", "Verify: read it through.\n", text)
    assert result(prose, "binary-completion-criteria") == AttributeResult(
        id=1, key="binary-completion-criteria", passed=False,
        evidence="line 8: Phase 2: the debug output is clean. Verify: read it through.",
        fix="replace 'clean' with a command and its expected result, or give phase 2 a "
            "'Verify: `<command>`' line",
    )


KEYED_PHASES = ("phases:\n  phase_1:\n    criteria:\n      - the flag reaches the config object\n"
                "      - `--verbose` is in the help text\n    verify: pytest -q -k parse\n"
                "  phase_2:\n    criteria:\n      - debug lines go to stderr\n"
                "      - nothing is printed without the flag\n    verify: pytest -q\n\n")


def test_criteria_inside_a_phase_its_command_checks_are_binary() -> None:
    text = edit(SIGNAL, "Output <promise>DONE</promise> when ALL phases are complete.\n",
                edit(PHASES, KEYED_PHASES))
    assert failing(text) == []
    unchecked = text.replace("    verify: pytest -q -k parse\n", "")
    assert result(unchecked, "binary-completion-criteria").evidence == (
        "line 10: - the flag reaches the config object")


def test_the_criteria_a_signal_introduces_under_the_last_phase_are_still_judged() -> None:
    text = edit(PHASES, "### Phase 1: parse\nVerify: `pytest -q -k parse`\n\n"
                        "### Phase 2: print\nVerify: `pytest -q`\n\n")
    assert failing(text) == []
    vague = edit("- `ruff check .` exits 0", "- the output looks right", text)
    assert failing(vague) == ["binary-completion-criteria"]


def test_a_phase_named_vaguely_over_binary_criteria_is_judged_by_its_criteria() -> None:
    named = ("Phase 1: Polish the parser\n  - All tests pass\n  - Zero lint warnings\n"
             "Phase 2: print debug lines when it is set. Verify: `pytest tests/test_cli.py -q`\n")
    text = edit("Phase 1: parse the flag. Verify: `pytest tests/test_cli.py -q -k parse`\n",
                named)
    assert failing(text) == []
    vague = edit("  - Zero lint warnings\n", "  - The parser looks polished\n", text)
    assert result(vague, "binary-completion-criteria").evidence == (
        "line 9: - The parser looks polished")
    alone = edit("  - All tests pass\n  - Zero lint warnings\n", "", text)
    assert result(alone, "binary-completion-criteria").evidence == (
        "line 7: Phase 1: Polish the parser")


SIGNAL = ("Output <promise>DONE</promise> when ALL of the following are true:\n"
          "- `pytest -q` exits 0\n- `ruff check .` exits 0\n")


@pytest.mark.parametrize("signal", [
    "Done → print <promise>DONE</promise> only when all 2 phases verify in one iteration.\n",
    "All of these, in one iteration:\n- `pytest -q` exits 0\n- `ruff check .` exits 0\n\n"
    "Then, and only then, output <promise>DONE</promise>.\n",
    "| Check | Command | Expected |\n|---|---|---|\n| Tests | `pytest -q` | exit 0 |\n\n"
    "Output <promise>DONE</promise> when every row in the table shows its expected result.\n",
    "Output <promise>DONE</promise> when both phases pass and all checks are clean.\n",
    "Output <promise>DONE</promise> once `pytest -q` and `ruff check .` are both clean.\n",
    "Acceptance criteria:\n- [ ] `pytest -q` exits 0\n- [ ] `ruff check .` exits 0\n\n"
    "Output <promise>DONE</promise> only when every acceptance box is ticked.\n",
    "| Name | Command |\n|---|---|\n| tidy | `ruff check .` |\n\n"
    "Output <promise>DONE</promise> when both phases pass and tidy is clean.\n",
    "Done means both phases' Verify commands exit 0 in the same iteration. Only then output "
    "<promise>DONE</promise>.\n",
    "`pytest -q` and `ruff check .` exit 0. And only then output <promise>DONE</promise>.\n",
])
def test_ways_of_pointing_the_signal_at_the_checks(signal: str) -> None:
    assert failing(edit(SIGNAL, signal)) == []


@pytest.mark.parametrize("condition", [
    "when everything above passes", "when the definition of done holds",
])
def test_a_condition_may_point_at_the_criteria_in_words(condition: str) -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:",
                "Definition of done:")
    text = edit("Do not output the promise unless every criterion is met.",
                f"Output <promise>DONE</promise> {condition}. Do not output the promise "
                "unless every criterion is met.", text)
    assert failing(text) == []


def test_how_sure_the_agent_is_is_not_a_quality_word() -> None:
    # Finishing on a hunch is attribute 10's concern, not attribute 1's.
    text = edit(SIGNAL, "When you are reasonably confident both phases are complete, output "
                        "<promise>DONE</promise>.\n")
    assert failing(text) == ["zero-ambiguity"]


def test_done_equals_says_what_finished_means_without_a_signal() -> None:
    done = ("Done = every Verify above passes in one iteration. Never call it done with "
            "anything red.\n")
    text = edit(SIGNAL + "\nDo not output the promise unless every criterion is met.\n", done)
    assert failing(text) == ["completion-signal"]
    vague = edit("every Verify above passes in one iteration", "the code is clean", text)
    assert failing(vague) == ["binary-completion-criteria", "completion-signal"]


def test_a_list_item_ending_in_a_colon_introduces_its_sub_items_not_its_siblings() -> None:
    # Found by test_render's property test: a criterion "`pytest` criteria:" in a phase.
    text = edit("Phase 2: print debug lines when it is set.",
                "Phase 2: print debug lines when it is set.\n- `pytest -q` criteria:\n- add")
    assert failing(text) == []


# 2 completion-signal

def test_a_plain_token_is_a_signal_by_the_seed_and_a_failure_for_a_loop_that_wants_a_tag() -> None:
    """"Say DONE when ALL of the following are true" states exactly what to output and when
    (loops that grep for a token run on it); the loop whose --completion-promise is DONE
    ends only on <promise>DONE</promise>, and says so."""
    text = edit("Output <promise>DONE</promise> when ALL", "Say DONE when ALL")
    assert result(text, "completion-signal") == AttributeResult(
        id=2, key="completion-signal", passed=True,
        evidence="line 16: Say DONE when ALL of the following are true:", fix="")
    assert result(text, "completion-signal", promise="DONE") == AttributeResult(
        id=2, key="completion-signal", passed=False,
        evidence="line 16: Say DONE when ALL of the following are true:",
        fix="the loop (--completion-promise DONE) detects only <promise>DONE</promise> in the "
            "reply, not a plain DONE: wrap it as <promise>DONE</promise>",
    )


def test_no_promise_tag_and_no_token_fails_without_a_line() -> None:
    text = edit("Output <promise>DONE</promise> when ALL", "Finish when ALL")
    assert result(text, "completion-signal") == AttributeResult(
        id=2, key="completion-signal", passed=False, evidence=None,
        fix="add 'Output <promise>DONE</promise> when ALL of the following are true:' above "
            "the criteria",
    )


def test_a_tag_only_declared_is_not_an_instruction() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:",
                "Completion promise: <promise>DONE</promise>\n\nCriteria:")
    assert result(text, "completion-signal").evidence == (
        "line 16: Completion promise: <promise>DONE</promise>")
    assert failing(text) == ["completion-signal"]


def test_a_tag_on_its_own_line_below_the_instruction_counts() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:\n"
                "- `pytest -q` exits 0\n- `ruff check .` exits 0\n",
                "Success criteria:\n- `pytest -q` exits 0\n- `ruff check .` exits 0\n\n"
                "When every criterion holds, output exactly:\n\n<promise>DONE</promise>\n")
    assert failing(text) == []


def test_an_arrow_into_the_tag_is_an_instruction() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:",
                "All of the following pass in one iteration → <promise>DONE</promise>:")
    assert failing(text) == []
    blocked = edit("If still stuck, output <promise>BLOCKED</promise>.",
                   "Still stuck → <promise>BLOCKED</promise>.", text)
    assert failing(blocked) == []


def test_the_final_messages_content_on_a_condition_is_an_instruction() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:",
                "Your final message must be exactly <promise>DONE</promise>, and only when "
                "all of the following are true:")
    assert failing(text) == []
    unconditional = edit(", and only when all of the following are true:", ".\n\nCriteria:",
                         text)
    assert "completion-signal" in failing(unconditional)


@pytest.mark.parametrize("pointer", ["At that point", "At this point", "Only at that point"])
def test_at_that_point_points_the_signal_at_the_sentence_before(pointer: str) -> None:
    text = edit(SIGNAL, "The task is done when `pytest -q` and `ruff check .` exit 0 in one "
                        f"run. {pointer} output <promise>DONE</promise>.\n")
    assert failing(text) == []
    vague = edit("`pytest -q` and `ruff check .` exit 0", "the code is clean", text)
    assert failing(vague) == ["binary-completion-criteria"]


def test_blocked_is_not_a_completion_signal() -> None:
    text = edit("Output <promise>DONE</promise> when ALL", "Stop when ALL")
    assert failing(text) == ["completion-signal"]


def test_two_different_completion_promises_fail() -> None:
    text = edit("Do not output the promise unless",
                "Output <promise>FINISHED</promise> once you are sure. Do not output the "
                "promise unless")
    assert result(text, "completion-signal").fix == (
        "use one completion promise, not 2: DONE, FINISHED")


@pytest.mark.parametrize("promise", ["DONE", "  DONE\n", "DONE\n"])
def test_the_promise_given_matches_once_trimmed(promise: str) -> None:
    assert failing(BASE, promise=promise) == []


def test_the_promise_given_must_be_the_prompts() -> None:
    assert result(BASE, "completion-signal", promise="SHIPPED") == AttributeResult(
        id=2, key="completion-signal", passed=False,
        evidence="line 16: Output <promise>DONE</promise> when ALL of the following are true:",
        fix="the loop (--completion-promise SHIPPED) ends only on <promise>SHIPPED</promise>, "
            "not <promise>DONE</promise>: promise <promise>SHIPPED</promise> or run the loop "
            "with --completion-promise DONE",
    )


def test_with_the_loops_promise_a_prompt_without_a_tag_is_told_the_tag_to_add() -> None:
    text = edit("Output <promise>DONE</promise> when ALL", "When ALL")
    assert result(text, "completion-signal", promise="SHIPPED") == AttributeResult(
        id=2, key="completion-signal", passed=False, evidence=None,
        fix="add 'Output <promise>SHIPPED</promise> when ALL of the following are true:' "
            "above the criteria")


@pytest.mark.parametrize("token", ["RALPH_COMPLETE", "`RALPH_COMPLETE`", "the word DONE"])
def test_a_plain_completion_token_is_named_wrapped_in_the_fix(token: str) -> None:
    text = edit("Output <promise>DONE</promise> when ALL", f"Output {token} when ALL")
    bare = token.split()[-1].strip("`")
    assert result(text, "completion-signal", promise=bare) == AttributeResult(
        id=2, key="completion-signal", passed=False,
        evidence=f"line 16: Output {token} when ALL of the following are true:",
        fix=f"the loop (--completion-promise {bare}) detects only <promise>{bare}</promise> in "
            f"the reply, not a plain {bare}: wrap it as <promise>{bare}</promise>")


def test_a_token_alone_on_the_line_under_the_instruction_is_read() -> None:
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:\n"
                "- `pytest -q` exits 0\n- `ruff check .` exits 0",
                "When `pytest -q` exits 0, print this line:\n\n    TASK_COMPLETE")
    assert result(text, "completion-signal").evidence == "line 18: TASK_COMPLETE"


@pytest.mark.parametrize(("cap", "passed"), [(12, True), (25, True), (26, False)])
def test_the_loops_cap_is_the_iteration_limit(cap: int, passed: bool) -> None:
    without = edit("Max iterations: 10\n", "")
    assert "iteration-limit" in failing(without)
    report = validate_prompt(without, max_iterations=cap)
    verdict = next(r for r in report.attributes if r.key == "iteration-limit")
    assert (verdict.passed, verdict.evidence) == (passed, f"the loop's flag --max-iterations {cap}")


def test_a_cap_in_the_prompt_is_still_the_evidence_under_the_loops_cap() -> None:
    report = validate_prompt(BASE, max_iterations=12)
    assert next(r for r in report.attributes if r.key == "iteration-limit").evidence == (
        "line 3: Max iterations: 10")


# 3 failure-instructions

def test_a_repeat_rule_without_blocked_fails_on_the_rule() -> None:
    text = edit(" If still stuck, output <promise>BLOCKED</promise>.", "")
    assert result(text, "failure-instructions").evidence == (
        "line 14: If the same test fails 3 times, write what you tried in `NOTES.md` and "
        "change approach.")
    assert failing(text) == ["failure-instructions"]


def test_blocked_without_a_repeat_rule_fails_on_blocked() -> None:
    text = edit("If the same test fails 3 times, write what you tried in `NOTES.md` and "
                "change approach. If still stuck", "If you cannot go on")
    assert result(text, "failure-instructions").evidence == (
        "line 14: If you cannot go on, output <promise>BLOCKED</promise>.")
    assert failing(text) == ["failure-instructions"]


@pytest.mark.parametrize("rule", [
    "fails 3+ times", "fails twice in a row", "fails on three consecutive iterations",
    "keeps failing after three attempts", "shows 3 identical failures",
    "survives three genuinely different fix attempts", "still fails after 3 fixes",
])
def test_ways_of_saying_the_same_error_again(rule: str) -> None:
    assert failing(edit("fails 3 times", rule)) == []


def test_changing_course_when_stuck_without_a_count_counts() -> None:
    text = edit("If the same test fails 3 times, write what you tried in `NOTES.md` and "
                "change approach.", "If you get stuck, step back and try a different approach.")
    assert failing(text) == []
    no_course = edit("If you get stuck, step back and try a different approach.",
                     "If you get stuck, explain the problem.", text)
    assert failing(no_course) == ["failure-instructions"]


@pytest.mark.parametrize("give_up", [
    "After 3 iterations with zero progress, write it up in `NOTES.md` and stop.",
    "Nothing moving after 3 iterations: write the blocker down and stop.",
])
def test_ways_of_saying_when_to_give_up(give_up: str) -> None:
    assert failing(edit("If still stuck, output <promise>BLOCKED</promise>.", give_up)) == []


@pytest.mark.parametrize(("stuck", "line"), [
    ("If you can't get tests to pass after multiple attempts, git stash with a message "
     "noting the issue and exit.",
     "line 14: If you can't get tests to pass after multiple attempts, git stash with a "
     "message noting the issue and exit."),
    ("- If blocked: write the blocker into `NOTES.md` and end your turn.\n- Do not repeat "
     "the same attempt every iteration: pick a different eligible task instead.",
     "line 15: - Do not repeat the same attempt every iteration: pick a different eligible "
     "task instead."),
])
def test_setting_a_failed_attempt_aside_and_stopping_is_a_failure_instruction(
        stuck: str, line: str) -> None:
    text = edit(STUCK, stuck)
    assert result(text, "failure-instructions") == AttributeResult(
        id=3, key="failure-instructions", passed=True, evidence=line, fix="")
    assert failing(text) == []


# 4 ordered-phases

def test_a_skipped_phase_number_fails_on_that_line() -> None:
    text = edit("Phase 2:", "Phase 3:")
    assert result(text, "ordered-phases") == AttributeResult(
        id=4, key="ordered-phases", passed=False,
        evidence="line 8: Phase 3: print debug lines when it is set. Verify: "
                 "`pytest tests/test_cli.py -q`",
        fix="number the phases 1, 2, 3... in order: this is phase 3 after phase 1",
    )


def test_unordered_bullets_are_not_phases() -> None:
    text = edit("Phase 1: parse", "- parse").replace("Phase 2: print", "- print")
    assert failing(text) == ["ordered-phases"]


def test_a_numbered_list_under_a_steps_heading_is_ordered_phases() -> None:
    text = edit("Phase 1: parse", "## Steps\n1. parse").replace("Phase 2: print", "2. print")
    assert failing(text) == []


def test_markdown_auto_numbering_counts_as_ordered() -> None:
    text = edit("Phase 1: parse", "## Steps\n1. parse").replace("Phase 2: print", "1. print")
    assert failing(text) == []


def test_a_numbered_list_under_an_unrelated_heading_is_not_phases() -> None:
    text = edit("Phase 1: parse", "## Notes\n1. parse").replace("Phase 2: print", "2. print")
    assert failing(text) == ["ordered-phases"]


PHASES = ("Phase 1: parse the flag. Verify: `pytest tests/test_cli.py -q -k parse`\n"
          "Phase 2: print debug lines when it is set. Verify: `pytest tests/test_cli.py -q`\n")


@pytest.mark.parametrize("phases", [
    "## Milestones\n\n**M1 — Parse.** Parse the flag.\n- Verify: `pytest -q -k parse`\n\n"
    "**M2 — Print.** Print debug lines.\n- Verify: `pytest -q`\n\n## Rules\n",
    "| # | Phase | Verify |\n|---|---|---|\n| 1 | parse the flag | `pytest -q -k parse` |\n"
    "| 2 | print debug lines | `pytest -q` |\n",
    "## Phases\n\n| Phase | Work | Done when |\n|---|---|---|\n| 1 | parse | `pytest -q` "
    "passes |\n| 2 | print | `pytest -q` passes |\n\n## Rules\n",
    "1. Parse the flag.\n   Verify: `pytest -q -k parse`\n2. Print debug lines.\n"
    "   Verify: `pytest -q`\n",
    "1. `pytest -q -k parse` → all ok.\n2. `pytest -q` → all ok, and step 1 still passes.\n",
    "## Phases\n\n### 1. Parse\nParse the flag. Verify: `pytest -q -k parse`\n\n"
    "### 2. Print\nPrint debug lines. Verify: `pytest -q`\n\n## Rules\n",
    # Outline numbering before the phase: "1.1 Phase 1 — ...", criteria "1.1.1 ...".
    "1. Phases (in order)\n\n1.1 Phase 1 — Parse\n  1.1.1 The flag is parsed.\n"
    "  1.1.2 Verify: `pytest -q -k parse`\n\n1.2 Phase 2 — Print\n"
    "  1.2.1 Debug lines are printed.\n  1.2.2 Verify: `pytest -q`\n\n",
    # Phases as YAML-style keys: "phase_1_parse:".
    "phases:\n  phase_1_parse:\n    deliverable: the flag is parsed\n"
    "    verify: pytest -q -k parse\n  phase_2_print:\n    deliverable: debug lines\n"
    "    verify: pytest -q\n\n",
])
def test_ways_of_writing_ordered_phases(phases: str) -> None:
    # The base prompt's cold start says "check the current state"; the bare numbered list
    # without checks also needs the prompt to speak of its steps.
    assert failing(edit(PHASES, phases)) == []


@pytest.mark.parametrize("not_phases", [
    "## Rules\n1. Run `pytest -q` after every change. Verify: `pytest -q`\n"
    "2. Keep `ruff check .` clean. Verify: `ruff check .`\n",
    "1. parse the flag\n2. print debug lines\n",
    "## Requirements (no particular order)\n\n| # | Requirement |\n|---|---|\n"
    "| 1 | parse the flag |\n| 2 | print debug lines |\n",
])
def test_numbered_things_that_are_not_phases(not_phases: str) -> None:
    assert "ordered-phases" in failing(edit(PHASES, not_phases))


@pytest.mark.parametrize("phases", [
    "Build the parser, then the printer, then the CLI.\n",
    "- First, parse the flag.\n- Then print debug lines.\n- Finally, document it.\n",
    "## Requirements (in order)\n- parse the flag\n- print debug lines\n\n## Rules\n",
])
def test_ways_of_telling_the_order_in_words(phases: str) -> None:
    assert failing(edit(PHASES, phases)) == []


@pytest.mark.parametrize("not_phases", [
    "If stuck, read the error, then rerun the test, then try again.\n",
    "## Requirements\n- parse the flag\n- print debug lines\n\n## Rules\n",
    "## Requirements (in no particular order)\n- parse the flag\n- print debug lines\n",
])
def test_words_that_do_not_order_the_work(not_phases: str) -> None:
    assert "ordered-phases" in failing(edit(PHASES, not_phases))


def test_a_bare_numbered_list_is_the_plan_when_the_prompt_speaks_of_its_steps() -> None:
    text = edit(PHASES, "1. parse the flag\n2. print debug lines\n").replace(
        "`pytest -q`.", "`pytest -q`; resume at the first step not done.", 1)
    assert failing(text) == []


def test_phase_lines_inside_code_do_not_count() -> None:
    text = edit("Phase 1: parse", "- parse").replace("Phase 2: print", "- print")
    text += "\n```\nPhase 1: example\nPhase 2: example\n```\n"
    assert failing(text) == ["ordered-phases"]


@pytest.mark.parametrize(("steps", "line"), [
    ("1. Decide which task to work on next.\n2. Work only on that task.\n"
     "3. Make a git commit of that task.", "line 7: 1. Decide which task to work on next."),
    ("1. Follow `PLAN.md` and choose the most important item to address.\n"
     "2. After implementing it, run the tests for that unit of code.",
     "line 7: 1. Follow `PLAN.md` and choose the most important item to address."),
])
def test_the_procedure_of_each_iteration_is_ordered_work(steps: str, line: str) -> None:
    text = edit(PHASES, steps)
    assert result(text, "ordered-phases") == AttributeResult(
        id=4, key="ordered-phases", passed=True, evidence=line, fix="")


def test_the_steps_of_each_iteration_are_not_the_completion_criteria() -> None:
    # "3. Run the tests" is how to work; with no completion condition and no list of
    # criteria, nothing says when the whole task is done.
    steps = ("1. Pick the next unchecked item.\n2. Implement it.\n3. Run the tests: they "
             "pass.\n4. Commit.")
    text = edit(SIGNAL, "Output <promise>DONE</promise> at the end.").replace(PHASES, steps)
    assert result(text, "binary-completion-criteria").passed is False
    assert result(text, "ordered-phases").passed is True


# 5 verification-commands

def test_the_run_after_every_change_rule_bakes_verification_in() -> None:
    # The seed's attribute 5: "After each change, run npm test and npm run lint."
    without_verify = edit(" Verify: `pytest tests/test_cli.py -q`\n", "\n")
    assert result(without_verify, "verification-commands") == AttributeResult(
        id=5, key="verification-commands", passed=True,
        evidence="line 10: Run `pytest -q` after every change.", fix="")


def test_an_after_change_rule_must_name_the_command() -> None:
    text = edit("Run `pytest -q` after every change.", "Run the tests after every change.")
    assert failing(text) == ["verification-commands"]
    vague = edit("Run `pytest -q` after every change.", "Check it works after every change.")
    assert failing(vague) == ["verification-commands"]
    make_sure = edit("Run `pytest -q` after every change.",
                     "After every change, make sure nothing broke; find out why if it did.")
    assert failing(make_sure) == ["verification-commands"]
    named_elsewhere = edit("Run `pytest -q` after every change.",
                           "Run the Verify command of the current phase after every change.")
    assert failing(named_elsewhere) == []


@pytest.mark.parametrize("rule", [
    "After each change, run `pytest -q` and `ruff check .`.",
    "**Check after each change:** `pytest -q`; fix failures before moving on.",
    "After every change\n- `pytest -q`: fix failures before moving on.",
    "Every change\n- Run `pytest -q`; fix failures before moving on.",
])
def test_ways_of_writing_the_after_change_rule(rule: str) -> None:
    assert failing(edit("Run `pytest -q` after every change.", rule)) == []


@pytest.mark.parametrize("rule", [
    "`pytest -q` after each module you touch.",
    "Run `pytest -q` after each batch of edits.",
    "`Rscript -e 'devtools::test()'` after each change.",
    "After each edit: the Verify command for the phase you're on.",
    "After every change, run the command for the phase you're in.",
    "After every edit: both commands above.",
    "Whenever you change code, run `pytest -q`.",
    "After changing any file, run `pytest -q`.",
])
def test_more_ways_of_writing_the_after_change_rule(rule: str) -> None:
    assert failing(edit("Run `pytest -q` after every change.", rule)) == []


def test_a_program_named_in_prose_is_the_command_given_elsewhere() -> None:
    text = edit("`pytest -q`.", "`latexmk -pdf main.tex`.").replace(
        "Run `pytest -q` after every change.", "Rebuild with latexmk after every change.")
    assert failing(text) == []
    assert failing(edit("`latexmk -pdf main.tex`", "`make pdf`", text)) == [
        "verification-commands"]


def test_a_rule_may_name_the_commands_by_the_names_the_prompt_gives_them() -> None:
    table = ("| Name | Command |\n|---|---|\n| test | `uv run pytest -q` |\n"
             "| lint | `uv run ruff check .` |\n\n")
    text = edit("Run `pytest -q` after every change.",
                table + "Run **test** and **lint** after every change.")
    assert failing(text) == []
    assert failing(text.replace("| test |", "| unit |").replace("| lint |", "| style |")) == [
        "verification-commands"]


def test_a_rule_under_a_heading_that_gives_the_commands_refers_to_them() -> None:
    checks = "## Checks\n\n    pytest -q\n    ruff check .\n\nRun the first one after every change."
    assert failing(edit("Run `pytest -q` after every change.", checks)) == []
    prose = "## Checks\n\nRun the first one after every change."
    assert failing(edit("Run `pytest -q` after every change.", prose)) == [
        "verification-commands"]


def test_a_verify_line_may_name_a_command_from_the_prompts_table() -> None:
    table = ("| Name | Command |\n|---|---|\n| parse tests | `pytest -q -k parse` |\n"
             "| all tests | `pytest -q` |\n\n")
    text = edit("Phase 1: parse the flag. Verify: `pytest tests/test_cli.py -q -k parse`\n"
                "Phase 2: print debug lines when it is set. Verify: `pytest tests/test_cli.py -q`",
                table + "Phase 1: parse the flag. Verify: parse tests.\n"
                "Phase 2: print debug lines when it is set. Verify: all tests.").replace(
        "Run `pytest -q` after every change.",
        "After every change, run the command for the phase you're in.")
    assert failing(text) == []


def test_no_run_after_every_change_fails() -> None:
    text = edit("Run `pytest -q` after every change.\n\n", "")
    assert result(text, "verification-commands").fix == (
        "add 'Run `<test command>` after every change.'")
    assert failing(text) == ["verification-commands"]


@pytest.mark.parametrize("verify", ["**Verify**: ", "Verification: ", "Check with "])
def test_ways_of_writing_verify(verify: str) -> None:
    text = edit("Verify: `pytest tests/test_cli.py -q`\n", f"{verify}`pytest -q`\n")
    assert failing(text) == []


@pytest.mark.parametrize(("steps", "line"), [
    ("1. Read `PLAN.md` and implement the next item.\n2. Ensure all tests and linting pass "
     "with `pytest -q && ruff check .`, then update `PLAN.md`.",
     "line 11: 2. Ensure all tests and linting pass with `pytest -q && ruff check .`, then "
     "update `PLAN.md`."),
    ("1. Implement the next item.\n2. Run the task's verification gate. Typical gates:\n"
     "   - `pytest -q`\n   - `ruff check .`",
     "line 11: 2. Run the task's verification gate. Typical gates:"),
])
def test_a_checking_step_after_the_step_that_changes_is_a_verification_command(
        steps: str, line: str) -> None:
    text = edit(AFTER, steps)
    assert result(text, "verification-commands") == AttributeResult(
        id=5, key="verification-commands", passed=True, evidence=line, fix="")


def test_a_gate_step_whose_sub_items_give_no_command_is_no_verification_command() -> None:
    text = edit(AFTER, "1. Implement the next item.\n2. Run the task's verification gate. "
                       "Typical gates:\n   - the build\n   - the unit suite")
    assert result(text, "verification-commands").passed is False


# 6 guardrails

def test_the_promise_rule_alone_is_not_a_guardrail() -> None:
    text = edit("Do not add dependencies.\n\n", "")
    assert result(text, "guardrails") == AttributeResult(
        id=6, key="guardrails", passed=False, evidence=None,
        fix="add explicit rules such as '- Do not delete or skip failing tests.'",
    )


@pytest.mark.parametrize("rule", [
    "Never add dependencies.", "- Don\u2019t add dependencies.", "**Rules.** Don't add any.",
    "You must not add dependencies.", "No new dependencies.", "- Avoid adding dependencies.",
])
def test_ways_of_writing_a_guardrail(rule: str) -> None:
    assert failing(edit("Do not add dependencies.", rule)) == []


@pytest.mark.parametrize("not_a_rule", [
    "You do not need a database.", "No memory carries over.", "Do nothing fancy.",
    "Nevertheless, keep going.",
])
def test_a_negation_that_is_not_a_rule_is_not_a_guardrail(not_a_rule: str) -> None:
    assert failing(edit("Do not add dependencies.", not_a_rule)) == ["guardrails"]


@pytest.mark.parametrize("urged", [
    "CRITICAL: Do NOT rush.", "Don't take any shortcuts.", "Never end a response without one.",
])
def test_a_rule_that_only_urges_care_or_shapes_the_reply_is_no_guardrail(urged: str) -> None:
    text = edit(RULE, urged)
    assert result(text, "guardrails") == AttributeResult(
        id=6, key="guardrails", passed=False, evidence=None,
        fix="add explicit rules such as '- Do not delete or skip failing tests.'")
    assert result(edit(RULE, f"{urged} {RULE}"), "guardrails").passed is True


# 7 scoped-context

def test_no_out_of_scope_path_fails_on_the_in_scope_line() -> None:
    text = edit(" Out of scope: `vendor/`.", "")
    assert result(text, "scoped-context") == AttributeResult(
        id=7, key="scoped-context", passed=False,
        evidence="line 5: In scope: `cli/main.py`, `tests/test_cli.py`.",
        fix="say which paths to leave alone, e.g. 'Out of scope: `migrations/`, `vendor/`'",
    )


def test_commands_are_not_paths() -> None:
    text = edit("In scope: `cli/main.py`, `tests/test_cli.py`. Out of scope: `vendor/`.\n\n",
                "").replace("`NOTES.md`", "the notes")
    assert result(text, "scoped-context").evidence is None
    assert failing(text) == ["scoped-context"]


def test_leaving_everything_else_alone_is_out_of_scope() -> None:
    text = edit("In scope: `cli/main.py`, `tests/test_cli.py`. Out of scope: `vendor/`.",
                "Only touch `cli/main.py` and `tests/test_cli.py`; leave everything else alone.")
    assert failing(text) == []


def test_paths_only_then_never_paths() -> None:
    text = edit("In scope: `cli/main.py`, `tests/test_cli.py`. Out of scope: `vendor/`.",
                "Scope: `cli/main.py`, `tests/test_cli.py` only; never `vendor/`.")
    assert failing(text) == []
    only = edit("Scope: `cli/main.py`, `tests/test_cli.py` only; never `vendor/`.",
                "Scope: `cli/main.py`, `tests/test_cli.py` only.", text)
    assert failing(only) == []
    named = edit("Scope: `cli/main.py`, `tests/test_cli.py` only; never `vendor/`.",
                 "Scope: `cli/main.py`, `tests/test_cli.py`.", text)
    assert failing(named) == ["scoped-context"]


@pytest.mark.parametrize("leave", [
    "Leave `vendor/` exactly as it is.", "Please leave `vendor/` as they are.",
    "`vendor/` is shared, so leave it as it stands.", "Keep `vendor/` unchanged.",
    "Leave `vendor/` intact.",
])
def test_ways_of_leaving_a_path_as_it_is(leave: str) -> None:
    text = edit("Out of scope: `vendor/`.", leave)
    assert failing(text) == []
    assert failing(edit("Out of scope: `vendor/`.", "Look at `vendor/`.")) == ["scoped-context"]


@pytest.mark.parametrize(("keys", "out"), [
    ("scope_in: cli/main.py, tests/test_cli.py\n", "scope_out: vendor/, migrations/"),
    ("files_in_scope: cli/main.py, tests/\n", "files_off_limits: vendor/, setup.cfg"),
    ("task: add a flag\nin_scope: cli/\n", "out_of_scope: vendor/\nmax_iterations: 10"),
])
def test_scope_given_as_yaml_style_keys(keys: str, out: str) -> None:
    text = edit("In scope: `cli/main.py`, `tests/test_cli.py`. Out of scope: `vendor/`.",
                keys + out)
    assert failing(text) == []
    assert failing(edit(out, "", text)) == ["scoped-context"]


def test_paths_under_an_out_of_scope_heading_are_out_of_scope() -> None:
    text = edit("Out of scope: `vendor/`.", "\n\n## Do not touch\n- vendor/\n- migrations/")
    assert failing(text) == []


def test_a_leave_alone_sentence_can_point_back_at_the_paths_of_the_sentence_before() -> None:
    text = edit(SCOPE, "Work in `cli/main.py`. Templates already exist in `templates/`. "
                       "DO NOT recreate or modify these unless fixing bugs.")
    assert result(text, "scoped-context") == AttributeResult(
        id=7, key="scoped-context", passed=True,
        evidence="line 5: Work in `cli/main.py`. Templates already exist in `templates/`. "
                 "DO NOT recreate or modify these unless fixing bugs.", fix="")
    kept = text.replace("DO NOT recreate or modify these unless fixing bugs.", "Reuse these.")
    assert result(kept, "scoped-context").passed is False


# 8 cold-start

def test_a_task_paragraph_first_leaves_the_attribute_met_and_the_file_not_prompt_only() -> None:
    # This test used to fail attribute 8 here. Seed 000 defines the attribute by what the
    # paragraph says; that the file starts with it is its File Output Format, which the
    # prompt-only check owns (and which still fails the file). Five of five such prompts in
    # the fifth blind corpus were labelled complete by their writer.
    text = "# Loop: add `--verbose` to the CLI\n\nAdd a verbose flag to the CLI.\n\n" + BASE
    report = validate_prompt(text)
    assert result(text, "cold-start").passed is True
    assert (report.passed, report.prompt_only.passed) == (False, False)
    assert report.prompt_only.fix.startswith("the file starts with a heading")


def test_work_asked_before_the_cold_start_fails_and_points_at_it() -> None:
    text = ("Add a verbose flag to the CLI:\n\n- parse `-v` in `cli/main.py`\n"
            "- print each step\n\n" + BASE)
    assert result(text, "cold-start") == AttributeResult(
        id=8, key="cold-start", passed=False,
        evidence="line 3: - parse `-v` in `cli/main.py`",
        fix="move the cold-start paragraph (line 6) to the top, before anything else",
    )


def test_a_cold_start_after_more_than_a_few_task_paragraphs_is_not_the_opening() -> None:
    task = "".join(f"Background paragraph {n} about the CLI.\n\n" for n in range(4))
    assert result(task + BASE, "cold-start").passed is False


def test_each_time_you_start_is_iterating() -> None:
    text = edit("You are iterating on the `--verbose` flag. You have no memory of earlier "
                "iterations, so first", "Each time you start on the `--verbose` flag, first")
    assert failing(text) == []


def test_iterating_without_checking_the_state_fails() -> None:
    text = edit(", so first check the current state: `git status`, `git log --oneline -5`, "
                "`pytest -q`.", ".")
    assert result(text, "cold-start").fix == (
        "make the first paragraph tell the agent to check the current state first "
        "(`git status`, `git log`, the tests)")


def test_a_plain_title_line_and_front_matter_come_before_the_cold_start() -> None:
    # The attribute is there; the file is not prompt-only (test_layout.py).
    text = "---\nname: verbose\n---\nLoop: add `--verbose` to the CLI\n\n" + BASE
    assert failing(text) == []


def test_looking_before_building_in_a_loop_that_keeps_a_record_is_a_cold_start() -> None:
    # The persona first, then the loop's principles: one task per loop, look for what is
    # already built, update the plan the next iteration reads.
    principles = ("You are an autonomous agent working on the `--verbose` flag.\n\n"
                  "- ONE task per loop.\n"
                  "- Search the codebase before assuming something isn't implemented.\n"
                  "- Update @fix_plan.md with your learnings.")
    text = edit(FIRST, principles)
    assert result(text, "cold-start") == AttributeResult(
        id=8, key="cold-start", passed=True,
        evidence="line 4: - Search the codebase before assuming something isn't implemented.",
        fix="")
    # Without the record the loop keeps, nothing tells the agent what was done before.
    assert result(text.replace("- Update @fix_plan.md with your learnings.\n", ""),
                  "cold-start").passed is False


def test_finding_the_task_in_the_plan_before_starting_it_is_a_cold_start() -> None:
    text = edit(FIRST, "Add a verbose flag.\n\n1. **Before starting a task:** Find it in "
                       "@fix_plan.md and note its status.\n2. Implement it.")
    assert result(text, "cold-start") == AttributeResult(
        id=8, key="cold-start", passed=True,
        evidence="line 3: 1. **Before starting a task:** Find it in @fix_plan.md and note its "
                 "status.", fix="")


# 9 iteration-limit

@pytest.mark.parametrize("limit", [
    "Max iterations: 25", "max-iterations: 1", "--max-iterations 12", "Iteration cap: 8",
    "Stop after at most twelve iterations.", "Limit: 15 iterations maximum.",
    "Stop after 12 loops.", "Max 12 loops.", "A cap of 12 iterations.",
    "12 iterations in total.", "Loop budget: 15", "You have 12 iterations.",
    "If you reach iteration 20, stop.", "You have eighteen iterations at most.",
    "Stop after twenty-two iterations.",
])
def test_conservative_limits_pass(limit: str) -> None:
    assert failing(edit("Max iterations: 10", limit)) == []


@pytest.mark.parametrize("unlimited", [
    "There's no iteration cap on this one, so take as many passes as you need.",
    "There is no fixed iteration budget for this task.",
    "Keep looping for as long as it takes.",
    "Take as many iterations as you need.",
    "There is no limit on the number of iterations.",
])
def test_saying_there_is_no_cap_fails_whatever_else_is_stated(unlimited: str) -> None:
    stuck = edit("Max iterations: 10", "If unable to make progress after 3 iterations, output "
                                       "<promise>BLOCKED</promise>.")
    assert failing(stuck) == []
    text = edit("Do not add dependencies.", f"Do not add dependencies. {unlimited}", stuck)
    verdict = result(text, "iteration-limit")
    assert (verdict.passed, verdict.evidence) == (False, f"line 12: Do not add dependencies. "
                                                         f"{unlimited}")
    assert verdict.fix.startswith("remove '")
    assert failing(text) == ["iteration-limit"]


@pytest.mark.parametrize("capped", [
    "No more than 12 iterations.", "Take as many notes as you need.",
    "No iteration may add a dependency.",
    "Take as many passes as you need within the 12-iteration cap.",
])
def test_words_that_do_not_lift_the_cap(capped: str) -> None:
    assert failing(edit("Do not add dependencies.", f"Do not add dependencies. {capped}")) == []


@pytest.mark.parametrize(("limit", "value"), [
    ("Max iterations: 26", 26), ("--max-iterations 50", 50), ("Iteration budget: 40", 40),
    ("max iterations: 0", 0), ("You have 30 iterations.", 30),
])
def test_a_limit_over_25_or_zero_fails_on_its_line(limit: str, value: int) -> None:
    assert result(edit("Max iterations: 10", limit), "iteration-limit") == AttributeResult(
        id=9, key="iteration-limit", passed=False, evidence=f"line 3: {limit}",
        fix=f"set the iteration limit to at most 25, not {value}",
    )


def test_a_retry_count_is_not_an_iteration_limit() -> None:
    text = edit("Max iterations: 10", "Give each phase three iterations in a row at most.")
    assert failing(text) == ["iteration-limit"]


# 10 zero-ambiguity

def test_no_rule_against_an_early_promise_fails() -> None:
    text = edit("Do not output the promise unless every criterion is met.\n", "")
    assert result(text, "zero-ambiguity") == AttributeResult(
        id=10, key="zero-ambiguity", passed=False, evidence=None,
        fix="add 'Do not output the completion promise unless every criterion above is met.'",
    )


@pytest.mark.parametrize("rule", [
    "Do NOT mark a task complete unless tests pass.",
    "Never set `\"passes\": true` without its gate actually passing.",
    "Never say \u201ccomplete\u201d or \u201cdone\u201d until @fix_plan.md reflects reality.",
])
def test_marking_the_work_done_held_back_until_its_check_passes_is_zero_ambiguity(
        rule: str) -> None:
    text = edit("Do not output the promise unless every criterion is met.", rule)
    assert result(text, "zero-ambiguity") == AttributeResult(
        id=10, key="zero-ambiguity", passed=True, evidence=f"line 20: {rule}", fix="")
    # Its near twin, a hold on nothing checkable, is the rule's `fails` example.


@pytest.mark.parametrize("rule", [
    "Never output <promise>DONE</promise> until all criteria pass.",
    "The promise must not be output until every item is true.",
    "Only output the promise when every criterion above passes.",
    "Never print DONE if any test fails.",
    "Do not stop or claim you are finished until every check passes.",
    "Never call it done with anything red.",
    "Don't treat it as finished while any check fails.",
    "If even one check doesn't pass, you're not done.",
    "If anything is red, keep working.",
    "Any failing check left = not done.",
    "Do not output the promise until everything passes.",
    "Only claim completion when all checks pass.",
    "Outputting the promise before every check passes is forbidden.",
    "Never send the promise with a failing test.",
])
def test_ways_of_withholding_the_promise(rule: str) -> None:
    text = edit("Do not output the promise unless every criterion is met.", rule)
    assert failing(text) == []


@pytest.mark.parametrize("rule", [
    "Not before.", "Only if true.", "If that's not true, don't print it.",
    "Not before; no partial credit.", "Don't output the promise early.",
    "Not a moment before.", "Until then, do not print it.",
])
def test_a_short_rule_right_after_a_signal_that_waits_for_everything(rule: str) -> None:
    signal = ("Output <promise>DONE</promise> when `pytest -q` and `ruff check .` both exit 0."
              f" {rule} Don't lie to get out.\n")
    text = edit("Output <promise>DONE</promise> when ALL of the following are true:\n"
                "- `pytest -q` exits 0\n- `ruff check .` exits 0\n\n"
                "Do not output the promise unless every criterion is met.\n", signal)
    assert failing(text) == []
    assert failing(text.replace(" both exit", " exit")) == ["zero-ambiguity"]


@pytest.mark.parametrize("rule", [
    "Do not output a false promise to escape the loop.",
    "Output the promise when you are confident.",
])
def test_a_weaker_rule_is_not_zero_ambiguity(rule: str) -> None:
    text = edit("Do not output the promise unless every criterion is met.", rule)
    assert "zero-ambiguity" in failing(text)


@pytest.mark.parametrize("leave", [
    "Close enough is fine.", "If one check is flaky, output the promise anyway.",
    "If you're fairly confident, go ahead and print it.", "Minor leftovers are fine.",
])
def test_leave_to_finish_anyway_undoes_the_rule(leave: str) -> None:
    text = edit("every criterion is met.", f"every criterion is met. {leave}")
    assert result(text, "zero-ambiguity") == AttributeResult(
        id=10, key="zero-ambiguity", passed=False,
        evidence=f"line 20: Do not output the promise unless every criterion is met. {leave}",
        fix="remove the permission to finish anyway: output the promise only when every "
            "criterion is met")


def test_refusing_close_enough_is_not_leave_to_finish() -> None:
    text = edit("every criterion is met.", 'every criterion is met: no "close enough".')
    assert failing(text) == []


