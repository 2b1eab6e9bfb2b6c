"""The Markdown prompt as blocks and sentences."""
from __future__ import annotations

from finesse.authoring.prompt_check.document import Document

# the document model and the file helper

def test_sentences_do_not_break_inside_code_spans() -> None:
    block = Document.parse("Run `go test ./a/... ./b/...` now. Then stop.").blocks[0]
    assert [s.text for s in block.sentences()] == ["Run `go test ./a/... ./b/...` now.",
                                                    "Then stop."]


def test_a_labelled_line_starts_a_new_sentence() -> None:
    block = Document.parse("In scope: `src/`\nOut of scope: `vendor/`").blocks[0]
    assert [(s.text, s.line_at().number) for s in block.sentences()] == [
        ("In scope: `src/`", 1), ("Out of scope: `vendor/`", 2)]


