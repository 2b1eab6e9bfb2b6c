"""The completion promise, the terminal lines and the record lines count only in prose,
never quoted as code."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from finesse.signals import (
    blocker,
    claims_completion,
    collapse_whitespace,
    digest,
    has_promise,
    promise_texts,
    read_reply,
    record_fields,
    result_line,
)

TAG = "<promise>DONE</promise>"


@pytest.mark.parametrize(
    "reply",
    [
        TAG,
        f"All tests pass. {TAG}",
        f"All tests pass.\n\n{TAG}\n",
        f"Done with the work:{TAG}.",
        "<promise>  DONE \n </promise>",
        f"The fence below is closed.\n```\ncode\n```\n{TAG}",
        f"~~~\n<promise>NOT YET</promise>\n~~~\n{TAG}",
        f"Inline `code` then {TAG} then `more code`.",
        f"A lone ` backtick does not open code: {TAG}",
        f"<promise>WRONG</promise> and then {TAG}",
        f"- a list:\n\n    ~~~\n    code\n    ~~~\n\n{TAG}",
        f"> ~~~\n> quoted code\n> ~~~\n\n{TAG}",
    ],
)
def test_promise_in_prose_counts(reply: str) -> None:
    assert has_promise(reply, "DONE")


@pytest.mark.parametrize(
    "reply",
    [
        "DONE",
        "I am DONE.",
        "promise DONE",
        "<promise>DONE",
        "DONE</promise>",
        "<promise></promise>",
        "<promise>NOT DONE</promise>",
        "<promise>DONE!</promise>",
        "<promise>done</promise>",
        "<promise>DO NE</promise>",
        # The tag is seed 001's interface, written exactly: another case is no tag. (Until
        # issue 10's blind cases, <PROMISE>DONE</Promise> counted; the blind writer read it
        # as no claim, and the seed's exact text decides.)
        "<PROMISE>DONE</Promise>",
        "<Promise>DONE</Promise>",
        f"```\n{TAG}\n```",
        f"Explaining the protocol:\n```text\nWhen finished, write {TAG}\n```\nNot yet.",
        f"~~~\n{TAG}\n~~~",
        f"~~~~markdown\n{TAG}\n~~~~",
        f"   ```\n{TAG}\n   ```",
        f"````\n```\n{TAG}\n```\n````",
        f"Unclosed fence hides the rest:\n```\n{TAG}",
        f"- When done, output:\n\n    ~~~\n    {TAG}\n    ~~~\n- Not yet.",
        f"1. Finally print\n\n    ```text\n    {TAG}\n    ```\n",
        f"- unclosed in a list:\n\n    ```\n    {TAG}",
        f"\t~~~\n\t{TAG}\n\t~~~",
        f"> ~~~\n> {TAG}\n> ~~~\n",
        f"> ```\n> {TAG}\n> ```\n",
        f"`{TAG}`",
        f"Write `{TAG}` when done.",
        f"Write ``{TAG}`` when done.",
        f"Write `` `{TAG}` `` when done.",
        f"```{TAG}```",
        "",
    ],
)
def test_promise_never_counts(reply: str) -> None:
    assert not has_promise(reply, "DONE")


@pytest.mark.parametrize(
    ("reply", "promise"),
    [
        ("<promise>ALL TESTS PASS</promise>", "ALL TESTS PASS"),
        ("<promise>\n  ALL\tTESTS\n\n   PASS  </promise>", "ALL TESTS PASS"),
        ("<promise>ALL TESTS PASS</promise>", "  ALL \n TESTS   PASS "),
    ],
)
def test_whitespace_collapsed_and_trimmed(reply: str, promise: str) -> None:
    assert has_promise(reply, promise)


@pytest.mark.parametrize("promise", ["", "   ", "\n"])
def test_empty_promise_never_matches(promise: str) -> None:
    assert not has_promise("<promise></promise> <promise> </promise>", promise)


def test_promise_texts_lists_every_prose_tag() -> None:
    reply = (
        "<promise> first  one </promise>\n"
        "`<promise>code</promise>`\n"
        "```\n<promise>fenced</promise>\n```\n"
        "<promise>second\nline</promise>"
    )
    assert promise_texts(reply) == ["first one", "second line"]


def test_collapse_whitespace() -> None:
    assert collapse_whitespace("  a\t b\n\nc  ") == "a b c"


# --- properties -------------------------------------------------------------------------------

# Prose that cannot open code or write a tag of its own.
_PROSE = st.text(
    st.characters(exclude_characters="`~<>", exclude_categories=("Cs",)), max_size=80
)
_PROMISE = st.text(
    st.characters(exclude_characters="<>`~", exclude_categories=("Cs",)), min_size=1, max_size=30
).filter(lambda text: text.strip())


@st.composite
def _fence(draw: st.DrawFn) -> tuple[str, str, str, str]:
    """(a line opening the container, the prefix of every line in it, the opening fence,
    the closing fence): a fence at the top level, in a list item, or in a block quote.
    Every line of the fenced block carries the container's prefix, as CommonMark needs for
    the block to stay inside it."""
    char = draw(st.sampled_from("`~"))
    length = draw(st.integers(3, 6))
    container = draw(st.sampled_from([
        ("", ""), ("", " "), ("", "   "),  # top level: up to three spaces
        ("- item", "  "), ("- item", "    "), ("1. item", "   "), ("* item", "\t"),
        ("", "> "), ("", ">  "), ("", "  > "), ("> - item", ">   "),
    ]))
    info = draw(st.sampled_from(["", "text", "markdown", " python"]))
    closing_length = draw(st.integers(length, length + 2))
    return container[0], container[1], f"{char * length}{info}", char * closing_length


@given(_PROSE, _PROSE, _PROSE, _PROMISE, _fence(), st.booleans())
def test_tag_in_a_fenced_block_never_counts(
    before: str, inside: str, after: str, promise: str, fence: tuple[str, str, str, str],
    closed: bool
) -> None:
    head, prefix, opening, closing = fence
    lines = re.split(r"\r\n|\r|\n", f"{inside} <promise>{promise}</promise> {inside}")
    body = "\n".join(prefix + line for line in lines)

    tail = f"\n{prefix}{closing}\n\n{after}" if closed else ""
    reply = f"{before}\n\n{head}\n{prefix}{opening}\n{body}{tail}"
    assert not has_promise(reply, promise)


@given(_PROMISE, st.sampled_from(["    ", "\t", "      ", "  \t"]),
       st.sampled_from(["", "Here is the log:\n\n", "> quoted\n\n", "# Heading\n"]))
def test_tag_in_an_indented_code_block_never_counts(
    promise: str, indent: str, before: str
) -> None:
    reply = f"{before}{indent}<promise>{promise}</promise>\n{indent}more code\n"

    assert not has_promise(reply, promise)



@given(_PROSE, _PROSE, _PROMISE, st.integers(1, 3))
def test_tag_in_inline_code_never_counts(
    before: str, after: str, promise: str, ticks: int
) -> None:
    quote = "`" * ticks
    reply = f"{before} {quote}<promise>{promise}</promise>{quote} {after}"
    assert not has_promise(reply, promise)


@given(_PROSE, _PROSE, _PROMISE, st.sampled_from([" ", "\n", "\t", "  \n ", ""]))
def test_tag_in_prose_always_counts(before: str, after: str, promise: str, pad: str) -> None:
    # One paragraph of prose around the tag (indentation or a blank line could make code of
    # it): it opens with a word, so that `before` cannot make its first line a heading, after
    # which a tab-indented line inside the tag would be an indented code block.
    before, after = " ".join(before.split()), " ".join(after.split())
    reply = f"Note {before} <promise>{pad}{promise}{pad}</promise> {after}"

    assert has_promise(reply, promise)
    assert has_promise(reply, f" {promise} ")


# --- terminal lines ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "line"),
    [
        ("RESULT: VERIFIED_COMPLETE", "VERIFIED_COMPLETE"),
        ("All tests pass.\n\nRESULT: VERIFIED_COMPLETE\n", "VERIFIED_COMPLETE"),
        ("**RESULT:** VERIFIED_COMPLETE", "VERIFIED_COMPLETE"),
        ("**RESULT: VERIFIED_COMPLETE**", "VERIFIED_COMPLETE"),
        ("- RESULT: BLOCKED", "BLOCKED"),
        ("> RESULT: BLOCKED: no key", "BLOCKED"),
        ("RESULT:VERIFIED_COMPLETE.", "VERIFIED_COMPLETE"),
        # The last terminal line of the reply is the one that counts.
        ("RESULT: VERIFIED_COMPLETE\nthen it broke\nRESULT: BLOCKED\nx", "BLOCKED"),
        ("RESULT: BLOCKED\nx\nRESULT: VERIFIED_COMPLETE", "VERIFIED_COMPLETE"),
        ("Done:\n```\nRESULT: BLOCKED\n```\nRESULT: VERIFIED_COMPLETE", "VERIFIED_COMPLETE"),
        # Not terminal lines: inside a sentence, quoted as code, other words, other case.
        ("I will write RESULT: VERIFIED_COMPLETE later.", None),
        ("Write `RESULT: VERIFIED_COMPLETE` when done.", None),
        ("```\nRESULT: VERIFIED_COMPLETE\n```", None),
        ("~~~\nRESULT: BLOCKED\nwhy\n~~~", None),
        ("RESULT: VERIFIED_COMPLETED", None),
        ("RESULT: BLOCKED_BY_CI", None),
        ("result: verified_complete", None),
        ("RESULT: DONE", None),
        ("", None),
    ],
)
def test_result_line(reply: str, line: str | None) -> None:
    assert result_line(reply) == line


@pytest.mark.parametrize(
    ("reply", "claims"),
    [
        ("<promise>DONE</promise>", True),
        ("RESULT: VERIFIED_COMPLETE", True),
        ("<promise>OTHER</promise>\nRESULT: VERIFIED_COMPLETE", True),
        # A terminal RESULT: BLOCKED beats the promise, wherever the promise stands (this
        # case used to assert the opposite: a claim beating BLOCKED).
        ("<promise>DONE</promise>\nRESULT: BLOCKED\nbut blocked", False),
        ("RESULT: BLOCKED\nno key\n<promise>DONE</promise>", False),
        ("RESULT: BLOCKED\nno key\nRESULT: VERIFIED_COMPLETE\n<promise>DONE</promise>", True),
        ("    RESULT: BLOCKED\n\n<promise>DONE</promise>", True),

        ("RESULT: VERIFIED_COMPLETE\nRESULT: BLOCKED\nno key", False),
        ("`RESULT: VERIFIED_COMPLETE` and `<promise>DONE</promise>`", False),
        ("```\nRESULT: VERIFIED_COMPLETE\n<promise>DONE</promise>\n```", False),
        ("Working on it.", False),
    ],
)
def test_claims_completion(reply: str, claims: bool) -> None:
    assert claims_completion(reply, "DONE") is claims


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        ("RESULT: BLOCKED\nThe staging API needs a key.", "The staging API needs a key."),
        ("Tried twice.\n\n**RESULT: BLOCKED**\n\nNo key.\n\nAsk ops.\n",
         "No key.\n\nAsk ops."),
        ("RESULT: BLOCKED", "(no reason given)"),
        ("RESULT: BLOCKED\n\n   \n", "(no reason given)"),
        ("RESULT: BLOCKED\nfirst\nRESULT: BLOCKED\nsecond", "second"),
        # Code after the line is not part of the blocker.
        ("RESULT: BLOCKED\nThe build fails:\n```\nerror: x\n```\nSee above.",
         "The build fails:\nSee above."),
        ("RESULT: VERIFIED_COMPLETE", None),
        ("`RESULT: BLOCKED` is how I would stop.", None),
        ("```\nRESULT: BLOCKED\nwhy\n```", None),
        ("Not blocked at all.", None),
    ],
)
def test_blocker(reply: str, text: str | None) -> None:
    assert blocker(reply) == text


def test_blocker_text_on_the_marker_line_runs_on_into_the_next_lines() -> None:
    reply = "RESULT: BLOCKED: the staging API needs a key\nNobody gave me STAGING_KEY."
    assert blocker(reply) == "the staging API needs a key\nNobody gave me STAGING_KEY."


def test_blocker_keeps_twenty_lines_after_the_marker() -> None:
    lines = [f"reason {n}" for n in range(30)]
    assert blocker("RESULT: BLOCKED\n" + "\n".join(lines)) == "\n".join(lines[:20])


# --- record lines -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "fields"),
    [
        ("Approach: a\nEvidence: e\nLearning: l\nNext: n",
         {"approach": "a", "evidence": "e", "learning": "l", "next": "n"}),
        ("- **Approach:** a\n* _Evidence_: e\n> Learnings: l\n  Next action: n",
         {"approach": "a", "evidence": "e", "learning": "l", "next": "n"}),
        ("APPROACH : upper\nnext step: lower", {"approach": "upper", "next": "lower"}),
        # The first line of each kind counts; an empty one is skipped.
        ("Approach:\nApproach: first\nApproach: second", {"approach": "first"}),
        ("Approach: kept   \n", {"approach": "kept"}),
        # Only at the start of a line, and never in code.
        ("My approach: inline", {}),
        ("```\nApproach: quoted\n```\n`Evidence: x`", {}),
        ("Next steps: plural is not a label", {}),
        ("", {}),
    ],
)
def test_record_fields(reply: str, fields: dict[str, str]) -> None:
    assert record_fields(reply) == fields


def test_digest_identifies_a_reply_up_to_whitespace() -> None:
    assert digest("Same  plan\n") == digest("Same plan") == digest(" Same\tplan ")
    assert digest("Same plan") != digest("Same plan.")
    assert digest("Same plan") != digest("same plan")
    assert len(digest("x")) == 16 and set(digest("x")) <= set("0123456789abcdef")


def test_digest_of_a_reply_with_a_lone_surrogate() -> None:
    # Claude Code's JSON may carry one; hashing it as strict UTF-8 failed the whole stop.
    assert digest("half \ud800 done") == digest("half  \ud800 done")
    assert digest("half \ud800 done") != digest("half \udce9 done") != digest("half done")


# --- a held-out set, written from the rules alone by someone who had not seen this code ---------

BLIND = json.loads((Path(__file__).parent / "data" / "terminal_blind.json").read_text(
    encoding="utf-8"))
# Blind labels that disagree with the rule as documented (the module docstring of
# finesse.signals). They are reported, never relabelled here; strict: a fix shows at once.
DISAGREES: dict[str, str] = {}


def _blind(case: dict[str, Any]) -> Any:
    marks = ([pytest.mark.xfail(strict=True, reason=DISAGREES[case["id"]])]
             if case["id"] in DISAGREES else [])
    return pytest.param(case, id=case["id"], marks=marks)


def test_every_blind_case_is_well_formed() -> None:
    assert len({case["id"] for case in BLIND}) == len(BLIND) > 100
    for case in BLIND:
        assert set(case) <= {"id", "input", "expected", "why", "promise", "blocker_contains"}
        assert case["expected"] in ("claim", "blocked", "none"), case["id"]
        assert ("blocker_contains" in case) <= (case["expected"] == "blocked"), case["id"]
    assert set(DISAGREES) <= {case["id"] for case in BLIND}


@pytest.mark.parametrize("case", [_blind(case) for case in BLIND])
def test_blind_terminal_line_cases(case: dict[str, Any]) -> None:
    reading = read_reply(case["input"], case.get("promise", "RALPH_LOOP_STOP"))
    found = (reading.blocked, reading.claims_completion)
    wanted = {"blocked": (True, False), "claim": (False, True), "none": (False, False)}
    assert found == wanted[case["expected"]], case["why"]
    if reading.blocked:
        assert reading.blocker and case.get("blocker_contains", "") in reading.blocker
    else:
        assert reading.blocker is None
