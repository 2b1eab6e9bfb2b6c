"""The text the model is given at each iteration: the header, the task, the protocol's notes."""

from __future__ import annotations

from pathlib import Path

from finesse.prompts import iteration_header, loop_prompt, protocol_notes, reverted_note
from tests.helpers.states import make_state
from tests.helpers.texts import NOTES, REVERTED_NOTE

ROOT = Path("/project")


def test_iteration_header_and_loop_prompt() -> None:
    current = make_state(ROOT, iteration=4, max_iterations=12, promise="SHIPPED", prompt="Ship it")
    assert iteration_header(current) == (
        "Ralph iteration 4/12: output <promise>SHIPPED</promise> only when it is completely true"
    )
    assert protocol_notes(current) == NOTES
    assert loop_prompt(current) == f"{iteration_header(current)}\n\nShip it\n\n---\n\n{NOTES}"
    assert loop_prompt(current, "Fix `x`.") == (
        f"{iteration_header(current)}\n\nShip it\n\n---\n\n{NOTES}\n\nFix `x`."
    )


def test_protocol_notes_name_the_plan_and_the_verification() -> None:
    current = make_state(ROOT, plan_file="tasks/todo.md", verify=["pytest -q", "ruff check ."])
    assert protocol_notes(current) == (
        "The plan is tasks/todo.md: re-read it now; your attempts are recorded under its "
        "`## Attempts`.\n"
        "When you claim completion, the plugin runs `pytest -q`, `ruff check .` itself and "
        "rejects the claim if any fails.\n"
        f"{NOTES}"
    )


def test_the_reverted_note_names_the_submodules_a_revert_left_alone() -> None:
    # A revert never goes inside a submodule: the agent must not be told the tree is all back.
    assert reverted_note([]) == REVERTED_NOTE
    assert reverted_note(["vendor/lib"]) == (
        f"{REVERTED_NOTE} Not reverted: the submodule `vendor/lib` keeps the iteration's "
        "changes inside it; check it before you go on.")
    assert reverted_note(["a", "b\nc"]) == (
        f"{REVERTED_NOTE} Not reverted: the submodules `a`, `'b\\nc'` keep the iteration's "
        "changes inside them; check them before you go on.")
