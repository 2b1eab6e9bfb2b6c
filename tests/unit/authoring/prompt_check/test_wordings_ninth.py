"""Forms found in the ninth blind corpus (`corpus_blind9/MEASUREMENTS.md`), read after it had
served as the held-out set. Each is a general rule, with the twin that must still fail."""

from __future__ import annotations

import pytest

from finesse.authoring.prompt_check.reading import Prompt
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
