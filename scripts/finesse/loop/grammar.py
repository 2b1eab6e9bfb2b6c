"""The slash-command grammar, parsed in Python from the raw typed prompt.

Arguments never pass through a shell: `shlex` splits them here, so quotes, `$(...)`,
backticks and semicolons in a prompt are just characters. Every refusal is a UsageError with
one line saying what to type instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from finesse.errors import UsageError

PLUGIN_NAME = "finesse"
DEFAULT_MAX_ITERATIONS = 8
DEFAULT_PROMISE = "RALPH_LOOP_STOP"
WARN_ABOVE_ITERATIONS = 25
HARD_MAX_ITERATIONS = 1000

# The commands the UserPromptSubmit hook answers itself, by bare name.
COMMANDS = (
    "ralph-loop", "cancel-ralph", "ralph-abort", "ralph-status", "ralph-help", "ralph-resume",
    "finesse-execute",
)
_COMMAND_LINE = re.compile(r"\A\s*/(?:finesse:)?([a-z][a-z-]*)(?=\s|\Z)(.*)\Z", re.DOTALL)
_DECIMAL = re.compile(r"[0-9]+")
# Only a word shaped like an option is one: a quoted "--not a flag" stays a prompt word.
_OPTION = re.compile(r"--[a-z][a-z-]*(?:=.*)?", re.DOTALL)

LOOP_USAGE = (
    '/ralph-loop "PROMPT" [--max-iterations N] [--completion-promise TEXT] '
    "[--prompt-file PATH] [--completion-promise-file PATH] [--verify CMD] [--plan PATH] "
    "[--no-plan] [--quiesce-after N] [--timeout-minutes N] [--gate CMD] [--allow-dirty] "
    "[--effort LEVEL] [--max-tokens N] [--max-cost USD] [--stop-at-quota PERCENT]"
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


@dataclass(frozen=True)
class SlashCommand:
    name: str
    args: str


def match_command(prompt: str) -> SlashCommand | None:
    """Our command at the start of a typed prompt, or None for anything else."""
    found = _COMMAND_LINE.match(prompt)
    if found is None or found.group(1) not in COMMANDS:
        return None
    return SlashCommand(found.group(1), found.group(2).strip())


def split_words(args: str) -> list[str]:
    """The words of a typed argument string, split as a shell would, in one pass (linear in
    the length: a prompt of megabytes splits in well under a second).

    - Whitespace separates words; `"..."` and `'...'` group them; quoted and unquoted parts
      next to each other make one word; `""` is an empty word. `#` starts no comment.
    - Single quotes keep everything as typed. In double quotes a backslash escapes only `"`
      and `\\`. Outside quotes it escapes a quote, a space or a backslash; any other
      backslash is kept as typed, so `\\d+` and `C:\\Users\\me` stay as they are.
    - An apostrophe between two letters (don't, O'Brien) with no other `'` after it in the
      text is an apostrophe, not a quote.
    An unclosed quote is a UsageError saying what to type instead.
    """
    words: list[str] = []
    current: list[str] = []
    in_word = False
    last_single = args.rfind("'")
    index, length = 0, len(args)
    while index < length:
        char = args[index]
        if char in " \t\n\r":
            if in_word:
                words.append("".join(current))
                current, in_word = [], False
            index += 1
            continue
        in_word = True
        if char == "\\":
            following = args[index + 1] if index + 1 < length else ""
            if following and following in "\"' \\":
                current.append(following)
                index += 2
            else:
                current.append(char)
                index += 1
            continue
        if char == "'":
            between_letters = (index > 0 and args[index - 1].isalpha()
                               and index + 1 < length and args[index + 1].isalpha())
            if between_letters and index == last_single:
                current.append(char)
                index += 1
                continue
            closing = args.find("'", index + 1)
            if closing < 0:
                raise _unclosed("'", index)
            current.append(args[index + 1:closing])
            index = closing + 1
            continue
        if char == '"':
            index = _double_quoted(args, index + 1, current)
            continue
        current.append(char)
        index += 1
    if in_word:
        words.append("".join(current))
    return words


def _double_quoted(args: str, index: int, into: list[str]) -> int:
    """Read a double-quoted part from `index` (just after the quote) into `into`; the index
    after its closing quote."""
    start = index
    while True:
        found = min((at for at in (args.find('"', index), args.find("\\", index)) if at >= 0),
                    default=-1)
        if found < 0:
            raise _unclosed('"', start - 1)
        into.append(args[index:found])
        if args[found] == '"':
            return found + 1
        following = args[found + 1] if found + 1 < len(args) else ""
        if following in ('"', "\\"):
            into.append(following)
            index = found + 2
        else:
            into.append("\\")
            index = found + 1


def _unclosed(quote: str, at: int) -> UsageError:
    return UsageError(
        f"the {quote} quote at character {at + 1} is never closed: close it, escape it with a "
        "backslash, or put the prompt in a file and pass --prompt-file PATH"
    )


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


_VALUE_FLAGS = (
    "--max-iterations",
    "--completion-promise",
    "--prompt-file",
    "--completion-promise-file",
    "--verify",
    "--plan",
    "--quiesce-after",
    "--timeout-minutes",
    "--gate",
    "--effort",
    "--max-tokens",
    "--max-cost",
    "--stop-at-quota",
)
_BUDGET_FLAGS = ("--max-tokens", "--max-cost", "--stop-at-quota")
_RESUME_FLAGS = ("--max-iterations", "--timeout-minutes", *_BUDGET_FLAGS)
MAX_TOKENS_CEILING = 10**12
MAX_COST_CEILING = 1_000_000.0
_MONEY = re.compile(r"\$?([0-9]+(?:\.[0-9]{1,2})?)")


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
        else:
            raise UsageError(f"{flag} needs a value: type {usage}")
        values.setdefault(flag, []).append(value)
    return prompt_words, values


def _single(values: dict[str, list[str]], flag: str) -> str | None:
    given = values.get(flag)
    if not given:
        return None
    if len(given) > 1:
        raise UsageError(f"{flag} was given {len(given)} times: give it once")
    return given[0]


@dataclass
class LoopArgs:
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


def parse_loop_args(args: str, *, command: str = "ralph-loop") -> LoopArgs:
    """Parse `/ralph-loop` arguments, without reading any file (`finesse.loop.request`
    reads the prompt, promise and plan files they name).

    `/finesse-execute` takes the same grammar plus `--force`, and needs a prompt file: it runs
    a plan written with the Finesse tools.
    """
    executing = command == "finesse-execute"
    usage = EXECUTE_USAGE if executing else LOOP_USAGE
    switches = ("--allow-dirty", "--no-plan", *(("--force",) if executing else ()))
    prompt_words, values = _take_flags(split_words(args), usage=usage, switches=switches)
    parsed = LoopArgs(force=bool(values.pop("--force", [])),
                      allow_dirty=bool(values.pop("--allow-dirty", [])),
                      no_plan=bool(values.pop("--no-plan", [])))
    if executing and ("--prompt-file" not in values or prompt_words):
        raise UsageError(f"/finesse-execute runs a prompt file: type {usage}")
    max_iterations = _single(values, "--max-iterations")
    if max_iterations is not None:
        parsed.max_iterations = parse_max_iterations(max_iterations)
    parsed.promise = _single(values, "--completion-promise")
    parsed.promise_file = _single(values, "--completion-promise-file")
    if parsed.promise is not None and parsed.promise_file is not None:
        raise UsageError("give --completion-promise or --completion-promise-file, not both")
    if parsed.promise is not None:
        parsed.promise = check_promise(parsed.promise, "--completion-promise")
    parsed.prompt_file = _single(values, "--prompt-file")
    if parsed.prompt_file is not None and prompt_words:
        raise UsageError(
            "give the prompt inline or with --prompt-file, not both: drop the words or the flag"
        )
    parsed.prompt = " ".join(prompt_words).strip()
    for flag, target in (("--verify", parsed.verify), ("--gate", parsed.gate)):
        for command_text in values.get(flag, []):
            if not command_text.strip():
                raise UsageError(f'{flag} needs a command, e.g. {flag} "pytest -q"')
            target.append(command_text)
    parsed.plan_file = _single(values, "--plan")
    if parsed.plan_file is not None and parsed.no_plan:
        raise UsageError("give --plan PATH or --no-plan, not both")
    if not parsed.prompt and parsed.prompt_file is None and parsed.plan_file is None:
        raise UsageError(f"the prompt is empty: type {LOOP_USAGE}")
    effort = _single(values, "--effort")
    if effort is not None:
        if effort not in EFFORT_LEVELS:
            raise UsageError(f"--effort must be one of {', '.join(EFFORT_LEVELS)}, not {effort!r}")
        parsed.effort = effort
    quiesce_after = _single(values, "--quiesce-after")
    if quiesce_after is not None:
        # At 8 or more, Claude Code's own cap (8 blocked stops without a tool call) would end
        # a talk-only loop first, silently: quiescence must act before it.
        parsed.quiesce_after = parse_count(quiesce_after, "--quiesce-after", MAX_QUIESCE_AFTER)
    timeout = _single(values, "--timeout-minutes")
    if timeout is not None:
        parsed.timeout_minutes = parse_count(timeout, "--timeout-minutes", MAX_TIMEOUT_MINUTES)
    parsed.budgets = parse_budgets(values)
    return parsed


@dataclass(frozen=True)
class Budgets:
    """--max-tokens, --max-cost (US dollars, estimated) and --stop-at-quota (a percentage of
    the plan's five-hour or weekly window)."""

    max_tokens: int | None = None
    max_cost: float | None = None
    stop_at_quota: int | None = None


def parse_budgets(values: dict[str, list[str]]) -> Budgets:
    tokens = _single(values, "--max-tokens")
    cost = _single(values, "--max-cost")
    quota = _single(values, "--stop-at-quota")
    return Budgets(
        max_tokens=(None if tokens is None else
                    parse_count(tokens.replace("_", "").replace(",", ""), "--max-tokens",
                                MAX_TOKENS_CEILING)),
        max_cost=None if cost is None else parse_money(cost),
        stop_at_quota=None if quota is None else parse_count(quota, "--stop-at-quota", 100),
    )


def parse_money(value: str) -> float:
    found = _MONEY.fullmatch(value.strip())
    amount = float(found.group(1)) if found else 0.0
    if not 0 < amount <= MAX_COST_CEILING:
        raise UsageError(f"--max-cost needs an amount in US dollars above 0, not {value!r}: "
                         "for example --max-cost 5 or --max-cost 12.50")
    return amount


def parse_count(value: str, flag: str, ceiling: int) -> int:
    if not _DECIMAL.fullmatch(value) or not 1 <= int(value, 10) <= ceiling:
        raise UsageError(
            f"{flag} needs a whole number from 1 to {ceiling}, not {value!r}: "
            f"for example {flag} 2"
        )
    return int(value, 10)


@dataclass
class ResumeRequest:
    max_iterations: int | None = None
    timeout_minutes: int | None = None
    budgets: Budgets = field(default_factory=lambda: Budgets())


def parse_resume_args(args: str) -> ResumeRequest:
    words, values = _take_flags(split_words(args), _RESUME_FLAGS, RESUME_USAGE)
    if words:
        raise UsageError(f"/ralph-resume takes only options: type {RESUME_USAGE}")
    request = ResumeRequest()
    max_iterations = _single(values, "--max-iterations")
    if max_iterations is not None:
        request.max_iterations = parse_max_iterations(max_iterations)
    timeout = _single(values, "--timeout-minutes")
    if timeout is not None:
        request.timeout_minutes = parse_count(timeout, "--timeout-minutes", MAX_TIMEOUT_MINUTES)
    request.budgets = parse_budgets(values)
    return request


def expect_no_args(command: SlashCommand) -> None:
    if command.args:
        raise UsageError(f"/{command.name} takes no arguments: type /{command.name}")
