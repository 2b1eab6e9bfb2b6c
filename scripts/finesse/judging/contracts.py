"""Seed 002's two JSON contracts, the worker's result and the judge's verdict, read from a
subagent's final message. Pydantic models (`finesse.support.strict.StrictModel`, strict
types: `"true"` is not a boolean, `1` is not `true`, a number is not a string) with exactly
the seed's field names; unknown fields are refused.

Only the SubagentStop hook reads them (`finesse.hooks.subagent`), which activates the
plugin's virtualenv first (built when the loop started, never on the Stop path).

Where the JSON is, in a message:

1. the whole message, blank lines around it aside, is one JSON value; else
2. the fenced code blocks (three or more backticks or tildes, info string empty or `json`;
   a closing fence is a line of the same character, at least as long, and nothing else):
   the last block whose text is JSON counts. A draft or a scratch block that is not JSON
   does not hide the real one; a later block that is JSON but breaks the contract is the
   answer, and it is refused.

JSON with prose around it and no fence is refused: the message must be the object, or hold
it in a fence. `NaN` and `Infinity` are not JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from finesse.record import Record
from finesse.support.strict import StrictModel, problems

# A fence's marker is its whole run (`(?!`)`, `(?!~)`): a shorter run would only let the
# rest of the line be scanned again from every position (the square of its length).
_FENCE = re.compile(r"^ {0,3}(`{3,}(?!`)|~{3,}(?!~))([^`]*)$")
MAX_MESSAGE_CHARS = 200_000


class _Contract(StrictModel):
    # Seed 002's field names only: `pass` is `passed`'s alias, and `passed` itself is refused.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class VerifierRun(_Contract):
    cmd: str
    status: Literal["pass", "fail"]
    output_excerpt: str


class WorkerResult(_Contract):
    """`{"summary", "changes", "verifier_runs", "remaining_known_failures",
    "next_suggestions"}` (seed 002's worker contract)."""

    summary: str
    changes: list[str]
    verifier_runs: list[VerifierRun]
    remaining_known_failures: list[str]
    next_suggestions: list[str]


class JudgeVerdict(_Contract):
    """`{"pass", "score", "blocking_issues", "non_blocking_issues", "required_actions",
    "evidence", "next_iteration_focus"}` (seed 002's judge contract); score 0 to 100."""

    passed: bool = Field(alias="pass")
    score: float = Field(ge=0, le=100, allow_inf_nan=False)
    blocking_issues: list[str]
    non_blocking_issues: list[str]
    required_actions: list[str]
    evidence: list[str]
    next_iteration_focus: str


class Parsed(Record):
    """A message read against a contract: the object as given when it holds, else one line
    saying what is wrong."""

    value: dict[str, Any] | None
    problem: str = ""

    @property
    def valid(self) -> bool:
        return self.value is not None


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_no_constants)


def _info_word(after_fence: str) -> str:
    """The first word of a fence's info string: after blanks, up to the first whitespace."""
    word = after_fence.lstrip(" \t")
    end = next((index for index, char in enumerate(word) if char.isspace()), len(word))
    return word[:end]


def fenced_blocks(message: str) -> list[str]:
    """The text of every closed fenced code block whose info string is empty or `json`."""
    blocks: list[str] = []
    lines = message.splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        index += 1
        if opening is None:
            continue
        fence, info = opening.group(1), _info_word(opening.group(2)).lower()
        body: list[str] = []
        closed = False
        while index < len(lines):
            line = lines[index]
            index += 1
            stripped = line.strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                closed = True
                break
            body.append(line)
        if closed and info in ("", "json"):
            blocks.append("\n".join(body))
    return blocks


def find_json(message: str) -> tuple[Any, str]:
    """The JSON value a message holds (see the module docstring), and "" ; or None and why
    none was found."""
    text = message.strip()
    if not text:
        return None, "the message is empty"
    if len(text) > MAX_MESSAGE_CHARS:
        return None, f"the message is over {MAX_MESSAGE_CHARS:,} characters"
    try:
        return _loads(text), ""
    except (ValueError, RecursionError):
        pass
    blocks = fenced_blocks(text)
    if not blocks:
        return None, ("no JSON found: reply with the JSON object alone, or inside one "
                      "```json fenced block")
    for block in reversed(blocks):
        try:
            return _loads(block), ""
        except (ValueError, RecursionError):
            continue
    return None, "no fenced block holds valid JSON (check quotes, commas and brackets)"


def _parse(message: str, model: type[_Contract], name: str) -> Parsed:
    value, problem = find_json(message)
    if problem:
        return Parsed(None, problem)
    if not isinstance(value, dict):
        return Parsed(None, f"the JSON is a {type(value).__name__}, not the {name} object")
    try:
        model.model_validate(value)
    except ValidationError as err:
        return Parsed(None, problems(err, most=3))
    return Parsed(value)


def parse_worker(message: str) -> Parsed:
    return _parse(message, WorkerResult, "worker")


def parse_judge(message: str) -> Parsed:
    return _parse(message, JudgeVerdict, "judge")


def unexplained_verifiers(worker: dict[str, Any], verifiers: list[str]) -> list[str]:
    """The loop's verifier commands the worker neither ran (`verifier_runs`) nor explained
    in `remaining_known_failures` (seed 002: a worker that cannot run a verifier says
    exactly why, and what evidence it used instead). Commands compare with their
    whitespace collapsed."""
    def flat(text: str) -> str:
        return " ".join(text.split())

    ran = {flat(str(run.get("cmd", ""))) for run in worker.get("verifier_runs", [])}
    notes = [flat(str(note)) for note in worker.get("remaining_known_failures", [])]
    return [command for command in verifiers
            if flat(command) not in ran and not any(flat(command) in note for note in notes)]
