"""The loop's notes written into the plan: inserts and replacements that touch nothing else."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finesse.loop.todo.edit import append_attempt, append_review_note, write_review
from finesse.loop.todo.sections import REVIEW_MARKER, parse_sections
from tests.helpers.todo import DOCUMENTS, MARKDOWN, PLAIN_LINE, PLAN

ENTRY = "### Iteration 2 (2026-11-30 08:00 UTC)\n- Approach: fix the off-by-one.\n- Result: red"


def insertion_point(before: str, after: str) -> int:
    """An i with after == before[:i] + inserted + before[i:]; fails when there is none."""
    assert len(after) >= len(before)
    same = 0
    while same < len(before) and before[same] == after[same]:
        same += 1
    rest = len(before) - same
    assert after[len(after) - rest :] == before[same:], "more than one insertion"
    return same


def changed_region(before: str, after: str) -> tuple[int, int]:
    """The smallest [a, b) of `before` that was replaced to give `after`."""
    start = 0
    limit = min(len(before), len(after))
    while start < limit and before[start] == after[start]:
        start += 1
    end = 0
    while end < limit - start and before[-1 - end] == after[-1 - end]:
        end += 1
    return start, len(before) - end


def assert_other_sections_kept(before: str, after: str, changed: str) -> None:
    """Every section but `changed` keeps its title and body; one at the end may gain a
    closing fence and separators before a section appended after it."""
    old, new = parse_sections(before), parse_sections(after)
    assert set(new) == set(old) | ({changed} if after != before else set())
    for key, section in old.items():
        if key == changed:
            continue
        old_body, new_body = section.body(before), new[key].body(after)
        assert new[key].title == section.title
        assert new_body.startswith(old_body)
        assert not new_body[len(old_body) :].strip(" \t\r\n`~")


def plan_newline(text: str) -> str:
    """The line ending the loop writes in: the plan's first one."""
    return re.search(r"\r\n|\r|\n", text).group()  # type: ignore[union-attr]


def body_of(text: str, key: str) -> str:
    return parse_sections(text)[key].body(text)


# --- append_attempt -------------------------------------------------------------------------------


def test_append_attempt_to_a_plan() -> None:
    after = append_attempt(PLAN, ENTRY)
    assert after == PLAN.replace(
        "read the failing test.\n\n## Review",
        f"read the failing test.\n\n{ENTRY}\n\n## Review",
    )


@pytest.mark.parametrize(("text", "expected"), [
    ("", "## Attempts\n\nE\n"),
    ("# Plan", "# Plan\n\n## Attempts\n\nE\n"),
    ("## Goal\r\ng\r\n", "## Goal\r\ng\r\n\r\n## Attempts\r\n\r\nE\r\n"),
    ("## Attempts", "## Attempts\n\nE\n"),
    ("## Attempts\n## Review\n", "## Attempts\n\nE\n\n## Review\n"),
    ("## attempts:\n\n\n## Review", "## attempts:\n\nE\n\n\n## Review"),
    ("## Attempts\nold\n## Review", "## Attempts\nold\n\nE\n\n## Review"),
    ("## Attempts\nold", "## Attempts\nold\n\nE\n"),
    ("## Attempts\n```\nopen fence\n", "## Attempts\n```\nopen fence\n```\n\nE\n"),
    ("```\n## Attempts\n", "```\n## Attempts\n```\n\n## Attempts\n\nE\n"),
    ("##Attempts\n### Attempts\n", "##Attempts\n### Attempts\n\n## Attempts\n\nE\n"),
])
def test_append_attempt_cases(text: str, expected: str) -> None:
    assert append_attempt(text, "E") == expected


def test_append_attempt_cannot_break_the_plan() -> None:
    after = append_attempt("## Attempts\n\n## Review\nmine\n", "## Review\n# Top\n```\ncode")
    assert after == (
        "## Attempts\n\n\\## Review\n\\# Top\n```\ncode\n```\n\n## Review\nmine\n")


def test_append_attempt_of_nothing_changes_nothing() -> None:
    assert append_attempt(PLAN, " \n\n") == PLAN


@settings(max_examples=300)
@given(DOCUMENTS, MARKDOWN)
def test_append_attempt_only_inserts(text: str, entry: str) -> None:
    after = append_attempt(text, entry)
    insertion_point(text, after)
    if entry.strip():
        assert "attempts" in parse_sections(after)
    assert_other_sections_kept(text, after, "attempts")


@given(DOCUMENTS, st.lists(PLAIN_LINE, min_size=1, max_size=4),
       st.lists(PLAIN_LINE, min_size=1, max_size=4))
def test_attempts_land_in_order_in_attempts(
    text: str, first: list[str], second: list[str]
) -> None:
    first, second = [f"first: {first[0]}", *first[1:]], [f"second: {second[0]}", *second[1:]]
    after = append_attempt(append_attempt(text, "\n".join(first)), "\n".join(second))
    body = body_of(after, "attempts")
    newline = plan_newline(after)
    first_block, second_block = newline.join(first), newline.join(second)
    assert first_block in body and second_block in body
    assert body.rindex(second_block) > body.rindex(first_block)


# --- write_review and append_review_note ----------------------------------------------------------


def test_write_review_in_a_plan_and_again() -> None:
    once = write_review(PLAN, "Verified: 2 commands green.")
    assert once == PLAN + f"\n{REVIEW_MARKER}\nVerified: 2 commands green.\n"
    assert write_review(once, "Second review\n\nwith two paragraphs") == (
        PLAN + f"\n{REVIEW_MARKER}\nSecond review\n\nwith two paragraphs\n")


def test_write_review_keeps_what_the_user_wrote() -> None:
    text = "## Review\nMy own notes.\n\n## Later\nx\n"
    once = write_review(text, "R1")
    assert once == f"## Review\nMy own notes.\n\n{REVIEW_MARKER}\nR1\n\n## Later\nx\n"
    assert write_review(once, "R2") == once.replace("R1", "R2")


def test_write_review_ignores_a_marker_in_code() -> None:
    text = f"## Review\n```\n{REVIEW_MARKER}\n```\n"
    assert write_review(text, "R") == f"{text}\n{REVIEW_MARKER}\nR\n"


def test_write_review_creates_the_section() -> None:
    assert write_review("## Goal\r\ng", "R") == (
        f"## Goal\r\ng\r\n\r\n## Review\r\n\r\n{REVIEW_MARKER}\r\nR\r\n")
    assert write_review("", "R") == f"## Review\n\n{REVIEW_MARKER}\nR\n"


def test_review_notes_survive_the_review() -> None:
    text = write_review(PLAN, "R1")
    text = append_review_note(text, "Blocked: the API key is missing.")
    text = append_review_note(text, "Re-plan: mock the API.\nSecond line.")
    text = write_review(text, "R2")
    assert text == PLAN + (
        "\n- Blocked: the API key is missing.\n"
        "- Re-plan: mock the API.\n  Second line.\n"
        f"\n{REVIEW_MARKER}\nR2\n"
    )


def test_a_note_that_starts_with_a_fence() -> None:
    assert append_review_note("## Review\n", "```\n## Goal") == (
        "## Review\n\n-\n  ```\n  ## Goal\n  ```\n")


@pytest.mark.parametrize(("text", "expected"), [
    ("", "## Review\n\n- N\n"),
    ("## Review", "## Review\n\n- N\n"),
    ("## Review\nmine\n## Next", "## Review\nmine\n\n- N\n\n## Next"),
    ("## Review\n- earlier\n\n", "## Review\n- earlier\n- N\n\n"),
    (f"## Review\n{REVIEW_MARKER}\nR\n", f"## Review\n\n- N\n\n{REVIEW_MARKER}\nR\n"),
])
def test_append_review_note_cases(text: str, expected: str) -> None:
    assert append_review_note(text, "N") == expected


@settings(max_examples=300)
@given(DOCUMENTS, MARKDOWN)
def test_append_review_note_only_inserts(text: str, note: str) -> None:
    after = append_review_note(text, note)
    insertion_point(text, after)
    assert_other_sections_kept(text, after, "review")


@settings(max_examples=300)
@given(DOCUMENTS, MARKDOWN, MARKDOWN)
def test_write_review_changes_only_the_review(text: str, first: str, second: str) -> None:
    after = write_review(text, first)
    start, end = changed_region(text, after)
    review = parse_sections(text).get("review")
    if review is None:
        assert after.startswith(text)
    else:
        assert review.body_start <= start <= end <= review.body_end
    assert_other_sections_kept(text, after, "review")
    # The loop's part is replaced, not piled up.
    assert write_review(after, second) == write_review(text, second)


@given(DOCUMENTS, st.lists(PLAIN_LINE, min_size=1, max_size=4), PLAIN_LINE)
def test_review_and_note_are_in_review(text: str, review: list[str], note: str) -> None:
    after = append_review_note(write_review(text, "\n".join(review)), note)
    body = body_of(after, "review")
    newline = plan_newline(after)
    assert f"{REVIEW_MARKER}{newline}{newline.join(review)}{newline}" in body
    assert f"- {note}{newline}" in body
    # rindex: the user's own text above may quote the marker (in a fence, say)
    assert body.index(f"- {note}") < body.rindex(REVIEW_MARKER)


def _with_entry(extra: str = "") -> str:
    return ("## Goal\nWork.\n\n## Attempts\n\n### Iteration 1 (2026-11-30 07:00 UTC)\n"
            "- Result: old\n" + extra + "\n### Iteration 2 (2026-11-30 08:00 UTC)\n"
            "- Result: red\n\n## Review\n")


def test_replace_attempt_replaces_this_loops_entry_and_nothing_else() -> None:
    from finesse.loop.todo.edit import attempt_span, replace_attempt

    text = _with_entry()
    span = attempt_span(text, "### Iteration 1 (", "2026-11-30 07:00")
    assert span is not None
    after = replace_attempt(text, span, "### Iteration 1 (2026-11-30 07:03 UTC)\n"
                                        "- Result: new\n")
    assert after == text.replace("07:00 UTC)\n- Result: old", "07:03 UTC)\n- Result: new")


def test_replace_attempt_leaves_an_entry_a_person_added_to() -> None:
    from finesse.loop.todo.edit import attempt_span, replace_attempt

    text = _with_entry("My own note on this one.\n")
    span = attempt_span(text, "### Iteration 1 (", "2026-11-30 07:00")
    assert span is not None
    assert replace_attempt(text, span, "### Iteration 1 (2026-11-30 07:03 UTC)\n") == text


def test_an_earlier_loops_entry_is_not_this_loops() -> None:
    from finesse.loop.todo.edit import attempt_span

    assert attempt_span(_with_entry(), "### Iteration 1 (", "2026-11-30 07:01") is None
