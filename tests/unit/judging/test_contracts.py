"""Seed 002's two contracts read from a subagent's final message: where the JSON is, and what
it must hold. The held-out set `contracts_blind.json` (68 cases written from seed 002 alone
by someone who never saw this code) is kept as it was written, and every case must hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from finesse.judging.contracts import (
    MAX_MESSAGE_CHARS,
    Parsed,
    fenced_blocks,
    find_json,
    parse_judge,
    parse_worker,
    unexplained_verifiers,
)

BLIND = json.loads((Path(__file__).parent / "contracts_blind.json").read_text())

WORKER: dict[str, Any] = {
    "summary": "Added the CSV route.",
    "changes": ["src/reports.py: GET /reports/<id>.csv"],
    "verifier_runs": [{"cmd": "pytest -q", "status": "pass", "output_excerpt": "3 passed"}],
    "remaining_known_failures": [],
    "next_suggestions": ["none"],
}
VERDICT: dict[str, Any] = {
    "pass": False,
    "score": 40,
    "blocking_issues": ["text/csv header missing"],
    "non_blocking_issues": [],
    "required_actions": ["set Content-Type: text/csv"],
    "evidence": ["pytest -q: 1 failed"],
    "next_iteration_focus": "Set the Content-Type header of the CSV route.",
}


def with_fields(base: dict[str, Any], **changes: Any) -> str:
    return json.dumps({**base, **changes})


@pytest.mark.parametrize("case", BLIND, ids=[case["id"] for case in BLIND])
def test_the_blind_set(case: dict[str, str]) -> None:
    parse = parse_worker if case["contract"] == "worker" else parse_judge
    assert parse(case["input"]).valid == (case["expected"] == "valid"), case["why"]


def test_the_blind_set_figure() -> None:
    right = sum((parse_worker if case["contract"] == "worker" else parse_judge)(
        case["input"]).valid == (case["expected"] == "valid") for case in BLIND)
    assert (right, len(BLIND)) == (68, 68)


def test_a_valid_worker_result_is_kept_as_given() -> None:
    assert parse_worker(json.dumps(WORKER)) == Parsed(WORKER)


def test_a_valid_verdict_is_kept_as_given_with_its_pass_field() -> None:
    assert parse_judge(json.dumps(VERDICT)) == Parsed(VERDICT)


@pytest.mark.parametrize("message", [
    "```json\n{body}\n```",
    "Here it is:\n\n```\n{body}\n```\nThanks.",
    "~~~json\n{body}\n~~~",
    "````json\n{body}\n````",
    "  ```json\n{body}\n  ```",
])
def test_json_in_a_fence_is_accepted(message: str) -> None:
    body = json.dumps(VERDICT, indent=2)
    assert parse_judge(message.replace("{body}", body)) == Parsed(VERDICT)


def test_a_fence_of_another_language_is_not_the_answer() -> None:
    assert parse_judge("```python\n" + json.dumps(VERDICT) + "\n```") == Parsed(
        None, "no JSON found: reply with the JSON object alone, or inside one ```json "
        "fenced block")


@pytest.mark.parametrize(("changes", "problem"), [
    ({"notes": "x"}, "notes: Extra inputs are not permitted"),
    ({"summary": None}, "summary: Input should be a valid string"),
    ({"changes": "one"}, "changes: Input should be a valid list"),
    ({"verifier_runs": [{"cmd": "x", "status": "skipped", "output_excerpt": ""}]},
     "verifier_runs.0.status: Input should be 'pass' or 'fail'"),
    ({"verifier_runs": [{"cmd": "x", "status": "pass"}]},
     "verifier_runs.0.output_excerpt: Field required"),
])
def test_a_broken_worker_result_says_which_field(changes: dict[str, Any], problem: str) -> None:
    assert parse_worker(with_fields(WORKER, **changes)) == Parsed(None, problem)


@pytest.mark.parametrize(("changes", "problem"), [
    ({"pass": "true"}, "pass: Input should be a valid boolean"),
    ({"pass": 1}, "pass: Input should be a valid boolean"),
    ({"score": True}, "score: Input should be a valid number"),
    ({"score": "90"}, "score: Input should be a valid number"),
    ({"score": 100.5}, "score: Input should be less than or equal to 100"),
    ({"score": -1}, "score: Input should be greater than or equal to 0"),
    ({"evidence": [{"cmd": "x"}]}, "evidence.0: Input should be a valid string"),
    ({"confidence": 0.9}, "confidence: Extra inputs are not permitted"),
])
def test_a_broken_verdict_says_which_field(changes: dict[str, Any], problem: str) -> None:
    assert parse_judge(with_fields(VERDICT, **changes)) == Parsed(None, problem)


def test_the_python_name_of_pass_is_not_seed_002s_field() -> None:
    verdict = {("passed" if key == "pass" else key): value for key, value in VERDICT.items()}
    assert parse_judge(json.dumps(verdict)) == Parsed(
        None, "pass: Field required; passed: Extra inputs are not permitted")


def test_a_missing_field_and_more_problems_are_counted() -> None:
    short = {key: value for key, value in VERDICT.items() if key not in ("evidence", "pass")}
    assert parse_judge(json.dumps(short)).problem == (
        "pass: Field required; evidence: Field required")


@pytest.mark.parametrize(("message", "problem"), [
    ("", "the message is empty"),
    ("  \n ", "the message is empty"),
    ("[1, 2]", "the JSON is a list, not the judge object"),
    ('"text"', "the JSON is a str, not the judge object"),
    ('{"pass": NaN}', "no JSON found: reply with the JSON object alone, or inside one ```json "
                      "fenced block"),
    ("```json\n{oops\n```", "no fenced block holds valid JSON (check quotes, commas and "
                            "brackets)"),
])
def test_no_object_says_why(message: str, problem: str) -> None:
    assert parse_judge(message) == Parsed(None, problem)


def test_a_huge_message_is_refused_before_parsing() -> None:
    assert parse_judge(" " + "x" * (MAX_MESSAGE_CHARS + 1)).problem == (
        f"the message is over {MAX_MESSAGE_CHARS:,} characters")


def test_deep_nesting_is_no_crash() -> None:
    assert not parse_judge("[" * 100_000 + "]" * 100_000).valid


def test_an_unclosed_fence_is_not_a_block() -> None:
    assert fenced_blocks("```json\n{}\n") == []
    assert fenced_blocks("```json\n{}\n```\n```\n[]\n~~~\n") == ["{}"]


def test_the_last_parsing_block_is_the_answer() -> None:
    value, problem = find_json("```json\n{\"a\": 1}\n```\n\n```json\n{\"a\": 2}\n```\n"
                               "```json\nnot json\n```")
    assert (value, problem) == ({"a": 2}, "")


def test_verifiers_run_or_explained() -> None:
    worker = {**WORKER, "verifier_runs": [], "remaining_known_failures": [
        "`npm  test` not run: no network for npm install; evidence used instead: unit tests"]}
    assert unexplained_verifiers(worker, ["pytest -q", "npm test"]) == ["pytest -q"]
    assert unexplained_verifiers(WORKER, ["pytest   -q"]) == []
