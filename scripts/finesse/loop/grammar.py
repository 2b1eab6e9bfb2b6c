"""The slash-command grammar, parsed in Python from the raw typed prompt.

Arguments never pass through a shell: `shlex` splits them here, so quotes, `$(...)`,
backticks and semicolons in a prompt are just characters. Every refusal is a UsageError with
one line saying what to type instead.
"""

from __future__ import annotations

import re

from finesse.errors import UsageError
from finesse.loop.arguments import EXECUTE_ARGUMENTS, LOOP_ARGUMENTS, RESUME_FLAGS
from finesse.loop.budgets import parse_budgets, single
from finesse.loop.notify.settings import parse_notify
from finesse.loop.words import parse_count, refuse_nul, split_words
from finesse.models import Budgets
from finesse.record import Record, field
from finesse.support.slash import COMMAND_LINE, COMMANDS

PLUGIN_NAME = "finesse"
DEFAULT_MAX_ITERATIONS = 8
JUDGE_MAX_ITERATIONS = 100  # judge mode's attempts (seed 002: "always set 100")
DEFAULT_PROMISE = "RALPH_LOOP_STOP"
WARN_ABOVE_ITERATIONS = 25
HARD_MAX_ITERATIONS = 1000
MAX_PROMISE_CHARACTERS = 1000

_DECIMAL = re.compile(r"[0-9]+")
# Only a word shaped like an option is one: a quoted "--not a flag" stays a prompt word.
_OPTION = re.compile(r"--[a-z][a-z-]*(?:=.*)?", re.DOTALL)

LOOP_USAGE = (
    '/ralph-loop "PROMPT" [--max-iterations N] [--completion-promise TEXT] '
    "[--prompt-file PATH] [--completion-promise-file PATH] [--verify CMD] [--plan PATH] "
    "[--no-plan] [--quiesce-after N] [--timeout-minutes N] [--gate CMD] [--allow-dirty] "
    "[--effort LEVEL] [--max-tokens N] [--max-cost USD] [--stop-at-quota PERCENT] "
    "[--judge --criteria TEXT --protect PATH] [--notify desktop|URL] [--notify-cmd CMD]"
)
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
RESUME_USAGE = (
    "/ralph-resume [--max-iterations N] [--timeout-minutes N] [--max-tokens N] [--max-cost USD] "
    "[--stop-at-quota PERCENT]"
)
EXECUTE_USAGE = (
    "/finesse:finesse-execute --prompt-file finesse-plans/NAME.md --completion-promise-file "
    "finesse-plans/NAME-promise.txt --max-iterations N [--force]"
)
DEFAULT_QUIESCE_AFTER = 2
MAX_QUIESCE_AFTER = 7
MAX_TIMEOUT_MINUTES = 7 * 24 * 60


class SlashCommand(Record):
    name: str
    args: str


def match_command(prompt: str) -> SlashCommand | None:
    """Our command at the start of a typed prompt, or None for anything else."""
    found = COMMAND_LINE.match(prompt)
    if found is None or found.group(1) not in COMMANDS:
        return None
    return SlashCommand(found.group(1), found.group(2).strip())


def parse_max_iterations(value: str) -> int:
    if not _DECIMAL.fullmatch(value):
        raise UsageError(
            f"--max-iterations needs a whole number from 1 to {HARD_MAX_ITERATIONS}, "
            f"not {value!r}: for example --max-iterations 8"
        )
    number = int(value, 10)
    if not 1 <= number <= HARD_MAX_ITERATIONS:
        raise UsageError(
            f"--max-iterations must be from 1 to {HARD_MAX_ITERATIONS}, not {number}: "
            "a loop always has a cap; for example --max-iterations 8"
        )
    return number


def check_promise(text: str, origin: str) -> str:
    promise = " ".join(text.split())
    if not promise:
        raise UsageError(f"{origin} is empty: give the text the agent must output, e.g. DONE")
    if "<" in promise or ">" in promise:
        raise UsageError(f"{origin} may not contain '<' or '>': use plain words, e.g. DONE")
    return promise


def check_promise_file(text: str, origin: str) -> str:
    """A promise read from a file, checked as a typed one, and refused when no agent could
    output it: longer than a phrase (a wrong file given, its whole text the promise) or
    holding control characters (a NUL cannot be typed back)."""
    promise = check_promise(text, origin)
    if not promise.isprintable():
        raise UsageError(f"{origin} may not contain control characters: use plain words, "
                         "e.g. DONE")
    if len(promise) > MAX_PROMISE_CHARACTERS:
        raise UsageError(f"{origin} is {len(promise):,} characters: a promise is a short "
                         "phrase the agent outputs when done; keep it to "
                         f"{MAX_PROMISE_CHARACTERS:,} at most, e.g. DONE")
    return promise


_VALUE_FLAGS = tuple(argument.flag for argument in LOOP_ARGUMENTS
                     if argument.flag and argument.value)
_SWITCHES = tuple(argument.flag for argument in LOOP_ARGUMENTS
                  if argument.flag and not argument.value)
_EXECUTE_SWITCHES = tuple(argument.flag for argument in EXECUTE_ARGUMENTS)


def _take_flags(
    words: list[str], allowed: tuple[str, ...] = _VALUE_FLAGS, usage: str = LOOP_USAGE,
    switches: tuple[str, ...] = (),
) -> tuple[list[str], dict[str, list[str]]]:
    """Prompt words and flag values, in the order given; `--` ends the flags. A switch (a
    flag without a value) is recorded with the value "yes"."""
    prompt_words: list[str] = []
    values: dict[str, list[str]] = {}
    index = 0
    only_words = False
    while index < len(words):
        word = words[index]
        index += 1
        if only_words or not (word == "--" or _OPTION.fullmatch(word)):
            prompt_words.append(word)
            continue
        if word == "--":
            only_words = True
            continue
        flag, equals, inline = word.partition("=")
        if flag in switches and not equals:
            values.setdefault(flag, []).append("yes")
            continue
        if flag not in allowed:
            raise UsageError(f"unknown option {flag}: type {usage}")
        if equals:
            value = inline
        elif index < len(words):
            value = words[index]
            index += 1
            _refuse_a_flag_as_value(flag, value, (*allowed, *switches), usage)
        else:
            raise UsageError(f"{flag} needs a value: type {usage}")
        values.setdefault(flag, []).append(value)
    return prompt_words, values


def _refuse_a_flag_as_value(flag: str, value: str, known: tuple[str, ...], usage: str) -> None:
    """`--gate --verify CMD` means a forgotten value, not a gate command `--verify`: taken
    as one, it would fail every step and revert the work, and CMD would join the prompt.
    `--gate=--verify` still gives that text."""
    taken = value.partition("=")[0]
    if taken in known and _OPTION.fullmatch(value):
        raise UsageError(f"{flag} needs a value, not the option {taken}: give {flag} VALUE "
                         f"(or {flag}={taken} for that text); type {usage}")


class LoopArgs(Record, frozen=False):
    """The arguments of `/ralph-loop` (or `/finesse-execute`), checked, before any file is
    read: the prompt words or the prompt file's name, and each option's value."""

    prompt: str = ""
    prompt_file: str | None = None
    promise: str | None = None
    promise_file: str | None = None
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    verify: list[str] = field(default_factory=list)
    gate: list[str] = field(default_factory=list)
    plan_file: str | None = None
    quiesce_after: int = DEFAULT_QUIESCE_AFTER
    timeout_minutes: int | None = None
    effort: str | None = None
    force: bool = False
    allow_dirty: bool = False
    no_plan: bool = False  # --no-plan: never write attempts into tasks/todo.md
    budgets: Budgets = field(default_factory=lambda: Budgets())
    judge: bool = False  # judge mode (finesse.judging): --judge, --criteria, --protect
    criteria: list[str] = field(default_factory=list)
    protect: list[str] = field(default_factory=list)
    notify: list[str] = field(default_factory=list)  # finesse.loop.notify.settings
    notify_cmd: list[str] = field(default_factory=list)


def parse_loop_args(args: str, *, command: str = "ralph-loop") -> LoopArgs:
    """Parse `/ralph-loop` arguments, without reading any file (`finesse.loop.request`
    reads the prompt, promise and plan files they name).

    `/finesse-execute` takes the same grammar plus `--force`, and needs a prompt file: it runs
    a plan written with the Finesse tools.
    """
    executing = command == "finesse-execute"
    usage = EXECUTE_USAGE if executing else LOOP_USAGE
    switches = (*_SWITCHES, *(_EXECUTE_SWITCHES if executing else ()))
    prompt_words, values = _take_flags(split_words(args), usage=usage, switches=switches)
    parsed = LoopArgs(force=bool(values.pop("--force", [])),
                      allow_dirty=bool(values.pop("--allow-dirty", [])),
                      no_plan=bool(values.pop("--no-plan", [])),
                      judge=bool(values.pop("--judge", [])))
    if executing and ("--prompt-file" not in values or prompt_words):
        raise UsageError(f"/finesse-execute runs a prompt file: type {usage}")
    max_iterations = single(values, "--max-iterations")
    if max_iterations is not None:
        parsed.max_iterations = parse_max_iterations(max_iterations)
    parsed.promise = single(values, "--completion-promise")
    parsed.promise_file = single(values, "--completion-promise-file")
    if parsed.promise is not None and parsed.promise_file is not None:
        raise UsageError("give --completion-promise or --completion-promise-file, not both")
    if parsed.promise is not None:
        parsed.promise = check_promise(parsed.promise, "--completion-promise")
    parsed.prompt_file = single(values, "--prompt-file")
    if parsed.prompt_file is not None and prompt_words:
        raise UsageError(
            "give the prompt inline or with --prompt-file, not both: drop the words or the flag"
        )
    parsed.prompt = " ".join(prompt_words).strip()
    for flag, target in (("--verify", parsed.verify), ("--gate", parsed.gate)):
        for command_text in values.get(flag, []):
            if not command_text.strip():
                raise UsageError(f'{flag} needs a command, e.g. {flag} "pytest -q"')
            refuse_nul(flag, command_text)
            target.append(command_text)
    parsed.plan_file = single(values, "--plan")
    if parsed.plan_file is not None and parsed.no_plan:
        raise UsageError("give --plan PATH or --no-plan, not both")
    if not parsed.prompt and parsed.prompt_file is None and parsed.plan_file is None:
        raise UsageError(f"the prompt is empty: type {LOOP_USAGE}")
    effort = single(values, "--effort")
    if effort is not None:
        if effort not in EFFORT_LEVELS:
            raise UsageError(f"--effort must be one of {', '.join(EFFORT_LEVELS)}, not {effort!r}")
        parsed.effort = effort
    quiesce_after = single(values, "--quiesce-after")
    if quiesce_after is not None:
        # At 8 or more, Claude Code's own cap (8 blocked stops without a tool call) would end
        # a talk-only loop first, silently: quiescence must act before it.
        parsed.quiesce_after = parse_count(quiesce_after, "--quiesce-after", MAX_QUIESCE_AFTER)
    timeout = single(values, "--timeout-minutes")
    if timeout is not None:
        parsed.timeout_minutes = parse_count(timeout, "--timeout-minutes", MAX_TIMEOUT_MINUTES)
    parsed.budgets = parse_budgets(values)
    parsed.notify, parsed.notify_cmd = parse_notify(values)
    _judge_args(parsed, values, given_cap=max_iterations is not None)
    return parsed


def _judge_args(parsed: LoopArgs, values: dict[str, list[str]], *, given_cap: bool) -> None:
    """--judge's own options: each --criteria is one acceptance criterion, each --protect a
    path no attempt may change. Whether there is a criterion and a verifier is checked once
    the plan is read (`finesse.loop.request`)."""
    for flag, target in (("--criteria", parsed.criteria), ("--protect", parsed.protect)):
        for value in values.get(flag, []):
            if not value.strip():
                example = '"GET /reports/1.csv returns 200"' if flag == "--criteria" else (
                    "src/billing/")
                raise UsageError(f"{flag} is empty: give it a value, e.g. {flag} {example}")
            if not parsed.judge:
                raise UsageError(f"{flag} is for judge mode: add --judge, or drop it")
            target.append(value.strip())
    if parsed.judge and parsed.gate:
        raise UsageError("--judge and --gate do not mix: the judge decides, not the gate; "
                         "drop one")
    if parsed.judge and not given_cap:
        parsed.max_iterations = JUDGE_MAX_ITERATIONS


class ResumeRequest(Record, frozen=False):
    max_iterations: int | None = None
    timeout_minutes: int | None = None
    budgets: Budgets = field(default_factory=lambda: Budgets())


def parse_resume_args(args: str) -> ResumeRequest:
    words, values = _take_flags(split_words(args), RESUME_FLAGS, RESUME_USAGE)
    if words:
        raise UsageError(f"/ralph-resume takes only options: type {RESUME_USAGE}")
    request = ResumeRequest()
    max_iterations = single(values, "--max-iterations")
    if max_iterations is not None:
        request.max_iterations = parse_max_iterations(max_iterations)
    timeout = single(values, "--timeout-minutes")
    if timeout is not None:
        request.timeout_minutes = parse_count(timeout, "--timeout-minutes", MAX_TIMEOUT_MINUTES)
    request.budgets = parse_budgets(values)
    return request


def expect_no_args(command: SlashCommand) -> None:
    if command.args:
        raise UsageError(f"/{command.name} takes no arguments: type /{command.name}")
