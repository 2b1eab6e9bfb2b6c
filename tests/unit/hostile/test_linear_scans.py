"""The linear scans read exactly what the regular expressions they replace read: each old
pattern is kept here as the oracle and both run on generated text built from the characters
the pattern cares about. (Their cost is the benchmark's business: `--growth`.)"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from finesse.authoring.retro.plan import baseline_commit
from finesse.authoring.workflows.graph import _field
from finesse.judging.contracts import fenced_blocks
from finesse.loop.todo.edit import _last_line_blank
from finesse.signals import _promise_bodies, _without_promises, read_reply
from finesse.support.markdown import code_spans, heading, strip_code, without_code_spans

OLD_PROMISE = re.compile(r"<promise>(.*?)</promise>", re.DOTALL)
OLD_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
OLD_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+\Z")
OLD_FIELD = re.compile(r"^\s*[-*+]\s+[*_]*([^:*_]+?)[*_]*\s*:[*_]*\s*(.*?)\s*$")
OLD_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*$")
OLD_BASELINE = re.compile(
    r"^\s*(?:[-*+]\s+)?[*_]*baseline[_ ]commit[*_]*\s*:[*_]*\s*[\"'`]?(?P<value>[^\"'`]*?)"
    r"[\"'`]?\s*$", re.IGNORECASE)
OLD_RECORD = re.compile(
    r"^[ \t>*_+#-]*(approach|evidence|learnings?|next(?: action| step)?)[*_]*[ \t]*:[*_]*"
    r"[ \t]*(.*?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
OLD_RESULT = re.compile(
    r"^[ \t>*_+#-]*RESULT:[*_ \t]*(VERIFIED_COMPLETE|BLOCKED)"
    r"(?:[*_]+(?![A-Za-z0-9])|(?![A-Za-z0-9_]))[*_ \t.]*(.*)$", re.MULTILINE)


def pieces(*words: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(words), max_size=30).map("".join)


PROMISE_TEXT = pieces("<promise>", "</promise>", "<promise", "x", " ", "\n", ">", "DONE")
SPAN_TEXT = pieces("`", "``", "```", "a", " ", "\n")
HEADING_TITLE = pieces("#", "##", " ", "\t", "a", "b#")
FIELD_LINE = pieces("-", " ", "  ", "*", "**", "_", ":", "a", "Original task", "\t", "\f")
FENCE_LINE = pieces("```", "~~~", "`", "~", " ", "\t", "json", "a", "\u00a0", "x y")
BASELINE_LINE = pieces("baseline commit", "Baseline_Commit", ":", " ", "\"", "'", "`", "abc1",
                       "*", "-", "\u00a0", "x")
REPLY = pieces("RESULT:", " BLOCKED", " VERIFIED_COMPLETE", "*", "_", ".", " ", "\t", "\n",
               "Next:", "approach :", "Evidence**:", "x", "> ", "- ", "<promise>DONE</promise>")


@given(PROMISE_TEXT)
def test_promise_scan_reads_the_tags_the_pattern_read(text: str) -> None:
    assert _promise_bodies(text) == OLD_PROMISE.findall(text)
    assert _without_promises(text) == OLD_PROMISE.sub("", text)


@given(SPAN_TEXT)
@settings(max_examples=400)
def test_code_spans_are_the_spans_the_pattern_found(text: str) -> None:
    found = [(span.start, span.end, span.code) for span in code_spans(text)]
    assert found == [(m.start(), m.end(), m.group(2)) for m in OLD_CODE_SPAN.finditer(text)]
    assert without_code_spans(text) == OLD_CODE_SPAN.sub(" ", text)


@given(HEADING_TITLE)
def test_closing_hashes_go_as_the_pattern_took_them(title: str) -> None:
    found = heading("## " + title)
    assert found == (2, OLD_CLOSING_HASHES.sub("", title.strip(" \t")))


@given(FIELD_LINE)
@settings(max_examples=400)
def test_overview_fields_read_as_the_pattern_read_them(line: str) -> None:
    old = OLD_FIELD.match(line)
    expected = (old.group(1).strip().lower(), old.group(2).strip()) if old else None
    if expected is not None and not expected[0]:
        expected = None  # a field with no label names nothing the graph looks up
    assert _field(line) == expected


@given(FENCE_LINE, st.sampled_from(["", "json", "{}"]))
def test_fences_open_where_the_pattern_opened_them(opening: str, body: str) -> None:
    marker = OLD_FENCE.match(opening)
    message = f"{opening}\n{body}\n{marker.group(1) if marker else '```'}\n"
    expected = [body] if marker and marker.group(2).lower() in ("", "json") else []
    assert fenced_blocks(message) == expected


@given(BASELINE_LINE)
@settings(max_examples=400)
def test_baseline_reads_as_the_pattern_read(line: str) -> None:
    old = OLD_BASELINE.match(line)
    value = old.group("value").strip() if old else None
    expected = value if value is not None and re.fullmatch(r"[0-9a-fA-F]{4,40}", value) else None
    assert baseline_commit(line if old else line + "\n") == expected


@given(pieces("a", " ", "\t", "\n", "\r", "\r\n"))
def test_last_line_blank_as_the_pattern_saw_it(text: str) -> None:
    before_break = re.sub(r"(?:\r\n|\r|\n)\Z", "", text)
    last = re.search(r"[^\r\n]*\Z", before_break)
    assert _last_line_blank(text) == (last is None or not last.group().strip())


@given(REPLY)
@settings(max_examples=400)
def test_record_and_result_lines_read_as_the_patterns_read(reply: str) -> None:
    reading = read_reply(reply, "DONE")
    fields: dict[str, str] = {}
    prose = strip_code(reply)
    for label, value in OLD_RECORD.findall(prose):
        word = label.lower().split()[0]
        key = word.rstrip("s") if word.startswith("learning") else word
        if value and key not in fields:
            fields[key] = value
    assert reading.fields == fields
    results = list(OLD_RESULT.finditer(prose))
    assert reading.terminal == (results[-1].group(1) if results else None)


OLD_REASON = re.compile(r"^\s*[-*+]\s+`?(?P<workflow>[\w.-]+)`?\s+depends\s+on\s+`?"
                        r"(?P<on>[\w.-]+)`?\s*\((?P<kind>[^)]*)\)\s*:\s*(?P<why>.+?)\s*$",
                        re.IGNORECASE)


@given(pieces(" ", "\t", "x", "y z", ":", "\f"))
def test_dependency_reasons_read_as_the_pattern_read(why: str) -> None:
    from finesse.authoring.workflows.graph import GraphError, _reasons, _Section

    line = f"- `b` depends on `a` (file-based):{why}"
    old = OLD_REASON.match(line)
    section = _Section(level=2, title="Dependency Rationale", line=1, body=[(2, line)])
    if old is None:
        try:
            _reasons(section)
        except GraphError:
            return
        raise AssertionError("a line the pattern refused was read")
    assert _reasons(section) == [{**old.groupdict(), "kind": "file-based"}]
