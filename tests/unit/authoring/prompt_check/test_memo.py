"""Reading each text once (`memo`) changes no verdict: a kept answer is the function's own,
a long text is read each time, a document's answer stays with that document, and reading a
prompt leaves the garbage collector as it found it, even when the reading fails."""

from __future__ import annotations

import gc

import pytest

from finesse.authoring.prompt_check import validate
from finesse.authoring.prompt_check.document import Document
from finesse.authoring.prompt_check.memo import forget, per_document, per_text
from finesse.authoring.prompt_check.validate import validate_prompt
from tests.unit.authoring.prompt_check.test_validate import BASE


def test_a_kept_answer_is_the_functions_own_and_a_long_text_is_read_each_time() -> None:
    calls: list[str] = []

    @per_text
    def words(text: str) -> int:
        calls.append(text)
        return len(text.split())

    short, long = "three short words", "word " * 2_000
    assert [words(short), words(short), words(long), words(long)] == [3, 3, 2_000, 2_000]
    assert calls == [short, long, long]
    forget()
    assert words(short) == 3
    assert calls[-1] == short


def test_a_documents_answer_stays_with_that_document() -> None:
    @per_document
    def line_count(doc: Document) -> int:
        return len(doc.lines)

    one, three = Document.parse("a\n"), Document.parse("a\nb\nc\n")
    assert (line_count(one), line_count(three), line_count(one)) == (1, 3, 1)


def test_reading_the_same_prompt_again_after_others_gives_the_same_report() -> None:
    first = validate_prompt(BASE)
    for other in ("Add a flag.\n", BASE.replace("Max iterations: 10", "Max iterations: 40")):
        validate_prompt(other)
    assert validate_prompt(BASE) == first
    forget()
    assert validate_prompt(BASE) == first


def test_the_collector_is_left_as_it_was_found_even_when_reading_fails(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert gc.isenabled()
    validate_prompt(BASE)
    assert gc.isenabled()

    def broken(*_: object) -> None:
        raise RuntimeError("a rule broke")

    monkeypatch.setattr(validate, "Prompt", broken)
    with pytest.raises(RuntimeError):
        validate_prompt(BASE)
    assert gc.isenabled()
    gc.disable()
    try:
        monkeypatch.undo()
        validate_prompt(BASE)
        assert not gc.isenabled()  # a caller that paused it keeps it paused
    finally:
        gc.enable()
