"""The slash-command grammar: shlex in Python, never a shell; every refusal is one line. The
arguments go through start_request, with no file to read."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from finesse.errors import UsageError
from finesse.loop.grammar import (
    EFFORT_LEVELS,
    LOOP_USAGE,
    RESUME_USAGE,
    ResumeRequest,
    SlashCommand,
    expect_no_args,
    match_command,
    parse_resume_args,
    split_words,
)
from finesse.loop.request import StartRequest, start_request
from tests.helpers.requests import ROOT, parse, refusal

# --- prompt words ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "prompt"),
    [
        ("Fix the tests", "Fix the tests"),
        ('"Fix the tests"', "Fix the tests"),
        ("'Fix the tests'", "Fix the tests"),
        ('"it\'s broken"', "it's broken"),
        ("'say \"hi\"'", 'say "hi"'),
        ('"$(touch X)"', "$(touch X)"),
        ("$(touch X)", "$(touch X)"),
        ('"`touch X`"', "`touch X`"),
        ("`touch X`", "`touch X`"),
        ('"a; rm -rf /"', "a; rm -rf /"),
        ("a; rm -rf /", "a; rm -rf /"),
        ("a && b | c > d", "a && b | c > d"),
        ('"line one\nline two"', "line one\nline two"),
        ("'tabs\tand\nnewlines'", "tabs\tand\nnewlines"),
        ("  spaced    words  ", "spaced words"),
        ('"--not a flag" here', "--not a flag here"),
        ("x -- --max-iterations 3", "x --max-iterations 3"),
        ("-- --bogus", "--bogus"),
        ("-x -y", "-x -y"),
        ("# not a comment", "# not a comment"),
        ("émoji 🎉 ünïcode", "émoji 🎉 ünïcode"),
    ],
)
def test_prompt_words_are_kept_verbatim(args: str, prompt: str) -> None:
    assert parse(args) == StartRequest(prompt=prompt)


def test_shell_metacharacters_never_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    parse('"$(touch X)" `touch Y` ; touch Z', tmp_path)
    assert sorted(tmp_path.iterdir()) == []


def test_defaults() -> None:
    request = parse("go")
    assert request == StartRequest(
        prompt="go", max_iterations=8, promise="RALPH_LOOP_STOP", verify=[],
        prompt_file=None, promise_file=None,
    )
    assert request.warnings == []


def test_protocol_defaults() -> None:
    request = start_request("go", ROOT)
    assert (request.plan_file, request.quiesce_after, request.timeout_minutes) == (None, 2, None)


def test_usage_names_the_protocol_flags() -> None:
    for flag in ("[--plan PATH]", "[--quiesce-after N]", "[--timeout-minutes N]"):
        assert flag in LOOP_USAGE
    for flag in ("[--no-plan]", "[--max-tokens N]", "[--max-cost USD]",
                 "[--stop-at-quota PERCENT]"):
        assert flag in LOOP_USAGE
    assert RESUME_USAGE == (
        "/ralph-resume [--max-iterations N] [--timeout-minutes N] [--max-tokens N] "
        "[--max-cost USD] [--stop-at-quota PERCENT]"
    )


# --- --max-iterations -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "number"),
    [
        ("go --max-iterations 3", 3),
        ("go --max-iterations=3", 3),
        ("--max-iterations 08 go", 8),
        ("go --max-iterations=08", 8),
        ("go --max-iterations 1", 1),
        ("go --max-iterations 1000", 1000),
        ('go --max-iterations "12"', 12),
    ],
)
def test_max_iterations(args: str, number: int) -> None:
    assert parse(args) == StartRequest(prompt="go", max_iterations=number)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "--max-iterations must be from 1 to 1000, not 0: a loop always has a cap; "
              "for example --max-iterations 8"),
        ("000", "--max-iterations must be from 1 to 1000, not 0: a loop always has a cap; "
                "for example --max-iterations 8"),
        ("1001", "--max-iterations must be from 1 to 1000, not 1001: a loop always has a cap; "
                 "for example --max-iterations 8"),
        ("-1", "--max-iterations needs a whole number from 1 to 1000, not '-1': "
               "for example --max-iterations 8"),
        ("+3", "--max-iterations needs a whole number from 1 to 1000, not '+3': "
               "for example --max-iterations 8"),
        ("three", "--max-iterations needs a whole number from 1 to 1000, not 'three': "
                  "for example --max-iterations 8"),
        ("2.5", "--max-iterations needs a whole number from 1 to 1000, not '2.5': "
                "for example --max-iterations 8"),
        ("", "--max-iterations needs a whole number from 1 to 1000, not '': "
             "for example --max-iterations 8"),
        ("٣", "--max-iterations needs a whole number from 1 to 1000, not '٣': "
              "for example --max-iterations 8"),
        ("1\n0", "--max-iterations needs a whole number from 1 to 1000, not '1\\n0': "
                 "for example --max-iterations 8"),
    ],
)
def test_max_iterations_refused(value: str, message: str) -> None:
    assert refusal(f"go --max-iterations {shlex.quote(value)}") == message
    assert refusal(f"go --max-iterations={shlex.quote(value)}") == message


def test_max_iterations_needs_a_value() -> None:
    assert refusal("go --max-iterations") == f"--max-iterations needs a value: type {LOOP_USAGE}"


def test_max_iterations_given_twice() -> None:
    assert refusal("go --max-iterations 3 --max-iterations=4") == (
        "--max-iterations was given 2 times: give it once"
    )


@pytest.mark.parametrize(("number", "warned"), [(25, False), (26, True), (1000, True)])
def test_warning_above_25(number: int, warned: bool) -> None:
    warnings = parse(f"go --max-iterations {number}").warnings
    expected = [
        f"--max-iterations {number} is above 25: long loops burn quota; "
        "/cancel-ralph stops it at any time"
    ]
    assert warnings == (expected if warned else [])


# --- --completion-promise -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "promise"),
    [
        ("go --completion-promise DONE", "DONE"),
        ("go --completion-promise=DONE", "DONE"),
        ('go --completion-promise "ALL TESTS PASS"', "ALL TESTS PASS"),
        ("go --completion-promise '  ALL   TESTS\n\tPASS  '", "ALL TESTS PASS"),
        ('go "--completion-promise=ALL  TESTS PASS"', "ALL TESTS PASS"),
        ("go --completion-promise \"it's done\"", "it's done"),
    ],
)
def test_completion_promise_multiword_stays_whole(args: str, promise: str) -> None:
    assert parse(args) == StartRequest(prompt="go", promise=promise)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "--completion-promise is empty: give the text the agent must output, e.g. DONE"),
        ("  \n ", "--completion-promise is empty: give the text the agent must output, e.g. DONE"),
        ("<b>", "--completion-promise may not contain '<' or '>': use plain words, e.g. DONE"),
        ("a>b", "--completion-promise may not contain '<' or '>': use plain words, e.g. DONE"),
    ],
)
def test_completion_promise_refused(value: str, message: str) -> None:
    assert refusal(f"go --completion-promise {shlex.quote(value)}") == message


def test_a_promise_no_agent_could_output_is_refused(tmp_path: Path) -> None:
    """A promise is a phrase the agent outputs once done: one of 950 KB (a wrong file given
    as --completion-promise-file) could never be output, so the loop could only hit its cap,
    and it went into every iteration's context twice; a NUL cannot be typed back."""
    (tmp_path / "big.txt").write_text("DONE " * 190_000)
    assert refusal("go --completion-promise-file big.txt", tmp_path) == (
        "--completion-promise-file big.txt is 949,999 characters: a promise is a short phrase "
        "the agent outputs when done; keep it to 1,000 at most, e.g. DONE")
    (tmp_path / "nul.txt").write_bytes(b"DO\x00NE")
    assert refusal("go --completion-promise-file nul.txt", tmp_path) == (
        "--completion-promise-file nul.txt may not contain control characters: use plain "
        "words, e.g. DONE")
    assert parse("go --completion-promise " + "A" * 1000).promise == "A" * 1000


def test_inline_prompt_plus_prompt_file_refused(tmp_path: Path) -> None:
    (tmp_path / "task.md").write_text("Task")
    assert refusal("Do it --prompt-file task.md", tmp_path) == (
        "give the prompt inline or with --prompt-file, not both: drop the words or the flag"
    )


def test_promise_and_promise_file_refused(tmp_path: Path) -> None:
    (tmp_path / "done.txt").write_text("DONE")
    assert refusal("go --completion-promise X --completion-promise-file done.txt", tmp_path) == (
        "give --completion-promise or --completion-promise-file, not both"
    )


# --- --verify, unknown flags, quoting -------------------------------------------------------------


def test_verify_is_repeatable_and_ordered() -> None:
    request = parse("go --verify 'pytest -q' --verify=ruff\\ check --verify 'make lint'")
    assert request == StartRequest(prompt="go", verify=["pytest -q", "ruff check", "make lint"])


def test_verify_empty_refused() -> None:
    assert refusal("go --verify '  '") == '--verify needs a command, e.g. --verify "pytest -q"'


@pytest.mark.parametrize("flag", ["--bogus", "--max-iteration", "--help", "--verify-all=1"])
def test_unknown_flags_refused(flag: str) -> None:
    name = flag.partition("=")[0]
    assert refusal(f"go {flag}") == f"unknown option {name}: type {LOOP_USAGE}"


@pytest.mark.parametrize(
    ("args", "quote", "at"),
    [('"unclosed', '"', 1), ("'tis broken", "'", 1), ('go --completion-promise "DONE', '"', 25)],
)
def test_unbalanced_quote_one_line(args: str, quote: str, at: int) -> None:
    assert refusal(args) == (
        f"the {quote} quote at character {at} is never closed: close it, escape it with a "
        "backslash, or put the prompt in a file and pass --prompt-file PATH"
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        # An apostrophe inside a word, with no quote after it to close, is an apostrophe.
        ("don't stop", ["don't", "stop"]),
        ("fix O'Brien's report", ["fix", "O'Brien's", "report"]),
        # Backslashes that escape nothing are kept as typed (they used to vanish).
        (r"match \d+ in C:\Users\me", ["match", r"\d+", "in", r"C:\Users\me"]),
        (r"a\ b \"q\" c\\d", ["a b", '"q"', r"c\d"]),
        ('"in \\"quotes\\" and C:\\dir" x', ['in "quotes" and C:\\dir', "x"]),
        ("'single \\d' #not-a-comment", ["single \\d", "#not-a-comment"]),
        ('a"b c"d ""', ["ab cd", ""]),
    ],
)
def test_split_words_keeps_what_the_user_typed(args: str, words: list[str]) -> None:
    assert split_words(args) == words


def test_split_words_is_linear_on_a_megabyte_prompt() -> None:
    # shlex took seconds on a megabyte quoted token (quadratic); one pass does not.
    long = "x" * 4_000_000
    assert split_words(f'"{long}" --max-iterations 3') == [long, "--max-iterations", "3"]


@pytest.mark.parametrize("args", ["", "   ", "--max-iterations 3", "''", "--", "-- ''"])
def test_empty_prompt_refused(args: str) -> None:
    assert refusal(args) == f"the prompt is empty: type {LOOP_USAGE}"


# --- --quiesce-after, --timeout-minutes, --plan given twice ---------------------------------------


@pytest.mark.parametrize(
    ("args", "quiesce_after", "timeout"),
    [
        ("go --quiesce-after 3", 3, None),
        ("go --quiesce-after=1", 1, None),
        ("go --quiesce-after 7", 7, None),
        ("go --timeout-minutes 30", 2, 30),
        ("--timeout-minutes=10080 go --quiesce-after 007", 7, 10080),
    ],
)
def test_quiesce_after_and_timeout(args: str, quiesce_after: int, timeout: int | None) -> None:
    assert start_request(args, ROOT) == StartRequest(
        prompt="go", quiesce_after=quiesce_after, timeout_minutes=timeout
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("go --quiesce-after 0", "--quiesce-after needs a whole number from 1 to 7, not '0': "
                                 "for example --quiesce-after 2"),
        ("go --quiesce-after 8", "--quiesce-after needs a whole number from 1 to 7, not "
                                   "'8': for example --quiesce-after 2"),
        ("go --quiesce-after -1", "--quiesce-after needs a whole number from 1 to 7, not "
                                  "'-1': for example --quiesce-after 2"),
        ("go --quiesce-after two", "--quiesce-after needs a whole number from 1 to 7, not "
                                   "'two': for example --quiesce-after 2"),
        ("go --timeout-minutes 0", "--timeout-minutes needs a whole number from 1 to 10080, not "
                                   "'0': for example --timeout-minutes 2"),
        ("go --timeout-minutes 10081", "--timeout-minutes needs a whole number from 1 to 10080, "
                                       "not '10081': for example --timeout-minutes 2"),
        ("go --timeout-minutes 1.5", "--timeout-minutes needs a whole number from 1 to 10080, "
                                     "not '1.5': for example --timeout-minutes 2"),
        ("go --timeout-minutes ''", "--timeout-minutes needs a whole number from 1 to 10080, "
                                    "not '': for example --timeout-minutes 2"),
        ("go --timeout-minutes 5 --timeout-minutes 6",
         "--timeout-minutes was given 2 times: give it once"),
        ("go --quiesce-after 2 --quiesce-after=2",
         "--quiesce-after was given 2 times: give it once"),
        ("go --plan a.md --plan b.md", "--plan was given 2 times: give it once"),
    ],
)
def test_protocol_flag_refusals(args: str, message: str) -> None:
    assert refusal(args) == message


@pytest.mark.parametrize("flag", ["--plan", "--quiesce-after", "--timeout-minutes"])
def test_protocol_flags_need_a_value(flag: str) -> None:
    assert refusal(f"go {flag}") == f"{flag} needs a value: type {LOOP_USAGE}"


@pytest.mark.parametrize(("args", "flag", "taken"), [
    ('Work --gate --verify "grep bye a.txt"', "--gate", "--verify"),
    ('Work --verify --allow-dirty --gate "pytest -q"', "--verify", "--allow-dirty"),
    ("Work --notify-cmd --max-iterations 3", "--notify-cmd", "--max-iterations"),
    ("Work --completion-promise --judge", "--completion-promise", "--judge"),
    ("Work --plan --max-iterations=3", "--plan", "--max-iterations"),
])
def test_a_flag_missing_its_value_never_takes_the_next_flag(args: str, flag: str,
                                                             taken: str) -> None:
    """`--gate --verify CMD` (the gate's command forgotten) is refused: taking `--verify` as
    the gate's command would fail every step and revert the agent's work, and the verify
    command would join the prompt."""
    assert refusal(args) == (f"{flag} needs a value, not the option {taken}: give {flag} "
                             f"VALUE (or {flag}={taken} for that text); type {LOOP_USAGE}")


def test_a_value_shaped_like_one_of_our_flags_is_taken_after_equals() -> None:
    assert parse('Work --gate=--verify').gate == ["--verify"]


@pytest.mark.parametrize(("args", "message"), [
    ('go --verify "echo a\x00b"', "--verify 'echo a\\x00b' holds a NUL character, which no "
                                   "command can: retype it"),
    ('go --gate "true\x00"', "--gate 'true\\x00' holds a NUL character, which no command "
                              "can: retype it"),
    ('go --notify-cmd "ca\x00t"', "--notify-cmd 'ca\\x00t' holds a NUL character, which no "
                                   "command can: retype it"),
    ("go --notify-cmd \"''\"", "--notify-cmd \"''\" names no program: give a command, e.g. "
                               '--notify-cmd "notify-me --loop"'),
])
def test_a_command_that_can_never_start_is_refused_at_the_start(args: str, message: str) -> None:
    """A verify command with a NUL failed every claim ("could not start"), so the loop could
    only hit its cap; a notify command with a NUL or an empty program failed at the end,
    seen only in the log."""
    assert refusal(args) == message


# --- gate mode: --gate, --allow-dirty, --effort ---------------------------------------------------


def test_gate_is_repeatable_and_allow_dirty_and_effort_are_taken(tmp_path: Path) -> None:
    request = start_request(
        'Work --gate "pytest -q" --gate "ruff check ." --allow-dirty --effort xhigh', tmp_path)
    assert request == StartRequest(prompt="Work", gate=["pytest -q", "ruff check ."],
                                   allow_dirty=True, effort="xhigh")


@pytest.mark.parametrize("level", EFFORT_LEVELS)
def test_every_effort_level_is_taken(tmp_path: Path, level: str) -> None:
    assert start_request(f"Work --effort {level}", tmp_path) == StartRequest(
        prompt="Work", effort=level)


@pytest.mark.parametrize(("args", "message"), [
    ("Work --allow-dirty", "--allow-dirty is for gate mode: add --gate CMD, or drop it"),
    ('Work --gate "  "', '--gate needs a command, e.g. --gate "pytest -q"'),
    ("Work --effort extreme",
     "--effort must be one of low, medium, high, xhigh, max, not 'extreme'"),
    ("Work --effort low --effort high", "--effort was given 2 times: give it once"),
])
def test_gate_options_refused(tmp_path: Path, args: str, message: str) -> None:
    with pytest.raises(UsageError) as refused:
        start_request(args, tmp_path)
    assert str(refused.value) == message


# --- match_command --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "command"),
    [
        ("/ralph-loop", SlashCommand("ralph-loop", "")),
        ('/ralph-loop "Fix it" --max-iterations 3',
         SlashCommand("ralph-loop", '"Fix it" --max-iterations 3')),
        ("/finesse:ralph-loop Fix it", SlashCommand("ralph-loop", "Fix it")),
        ("  /ralph-loop   Fix it  ", SlashCommand("ralph-loop", "Fix it")),
        ("/ralph-loop\nline two", SlashCommand("ralph-loop", "line two")),
        ("/ralph-loop\tx", SlashCommand("ralph-loop", "x")),
        ("/cancel-ralph", SlashCommand("cancel-ralph", "")),
        ("/finesse:cancel-ralph", SlashCommand("cancel-ralph", "")),
        ("/ralph-status", SlashCommand("ralph-status", "")),
        ("/ralph-help extra", SlashCommand("ralph-help", "extra")),
        ("/ralph-resume --max-iterations 9",
         SlashCommand("ralph-resume", "--max-iterations 9")),
        ("/finesse:finesse-execute --prompt-file x",
         SlashCommand("finesse-execute", "--prompt-file x")),
    ],
)
def test_match_command_ours(prompt: str, command: SlashCommand) -> None:
    assert match_command(prompt) == command


@pytest.mark.parametrize(
    "prompt",
    [
        "/ralph-loopy go",
        "/ralph-loop-x",
        "/ralph-loop:x",
        "/Ralph-loop go",
        "/other:ralph-loop go",
        "/finesse:ralph-loopy",
        "/help",
        "/finesse-executes --prompt-file x",
        "ralph-loop go",
        "please /ralph-loop go",
        "Fix the tests",
        "",
        "/",
        "//ralph-loop",
    ],
)
def test_match_command_not_ours(prompt: str) -> None:
    assert match_command(prompt) is None


def test_expect_no_args() -> None:
    expect_no_args(SlashCommand("cancel-ralph", ""))
    with pytest.raises(UsageError) as caught:
        expect_no_args(SlashCommand("cancel-ralph", "now"))
    assert str(caught.value) == "/cancel-ralph takes no arguments: type /cancel-ralph"


# --- /ralph-resume --------------------------------------------------------------------------------


def resume_refusal(args: str) -> str:
    with pytest.raises(UsageError) as caught:
        parse_resume_args(args)
    message = str(caught.value)
    assert "\n" not in message and message.strip() == message and message
    return message


@pytest.mark.parametrize(
    ("args", "request_"),
    [
        ("", ResumeRequest()),
        ("   ", ResumeRequest()),
        ("--max-iterations 12", ResumeRequest(max_iterations=12)),
        ("--timeout-minutes 30", ResumeRequest(timeout_minutes=30)),
        ("--timeout-minutes=30 --max-iterations=9", ResumeRequest(9, 30)),
    ],
)
def test_parse_resume_args(args: str, request_: ResumeRequest) -> None:
    assert parse_resume_args(args) == request_


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("go", f"/ralph-resume takes only options: type {RESUME_USAGE}"),
        ("-- --max-iterations 3", f"/ralph-resume takes only options: type {RESUME_USAGE}"),
        ("--max-iterations 9 please", f"/ralph-resume takes only options: type {RESUME_USAGE}"),
        ("--verify 'pytest -q'", f"unknown option --verify: type {RESUME_USAGE}"),
        ("--quiesce-after 3", f"unknown option --quiesce-after: type {RESUME_USAGE}"),
        ("--max-iterations", f"--max-iterations needs a value: type {RESUME_USAGE}"),
        ("--timeout-minutes", f"--timeout-minutes needs a value: type {RESUME_USAGE}"),
        ("--max-iterations 0", "--max-iterations must be from 1 to 1000, not 0: a loop always "
                               "has a cap; for example --max-iterations 8"),
        ("--max-iterations lots", "--max-iterations needs a whole number from 1 to 1000, not "
                                  "'lots': for example --max-iterations 8"),
        ("--timeout-minutes 0", "--timeout-minutes needs a whole number from 1 to 10080, not "
                                "'0': for example --timeout-minutes 2"),
        ("--max-iterations 3 --max-iterations 4",
         "--max-iterations was given 2 times: give it once"),
        ("'unclosed", "the ' quote at character 1 is never closed: close it, escape it with a "
                      "backslash, or put the prompt in a file and pass --prompt-file PATH"),

    ],
)
def test_parse_resume_args_refusals(args: str, message: str) -> None:
    assert resume_refusal(args) == message


# --- properties -----------------------------------------------------------------------------------

_OPTION_SHAPED = re.compile(r"--[a-z][a-z-]*(?:=.*)?|--", re.DOTALL)


@given(st.text())
def test_quoted_prompt_round_trips(text: str) -> None:
    assume(text.strip())
    assume(not _OPTION_SHAPED.fullmatch(text))  # one bare word shaped like a flag is a flag
    assert parse(shlex.quote(text)).prompt == text.strip()


@given(st.text())
def test_quoted_prompt_after_double_dash_round_trips(text: str) -> None:
    assume(text.strip())
    assert parse("-- " + shlex.quote(text)).prompt == text.strip()


@given(st.text(), st.integers(1, 1000), st.text(st.characters(exclude_characters="<>")))
def test_prompt_and_flags_round_trip(text: str, number: int, promise: str) -> None:
    assume(text.strip() and promise.strip())
    args = f"--max-iterations {number} --completion-promise {shlex.quote(promise)} -- "
    assert parse(args + shlex.quote(text)) == StartRequest(
        prompt=text.strip(), max_iterations=number, promise=" ".join(promise.split()),
    )


_WORDS = st.one_of(
    st.text(),
    st.sampled_from([
        "--max-iterations", "--max-iterations=", "--completion-promise", "--prompt-file",
        "--completion-promise-file", "--verify", "--", "--bogus", '"', "'", "\\", "\n",
        "0", "1001", "x", "README.md", ".", "~", "\x00", "a\nb", "'a\nb'", "'a\x00b'",
        "'a\rb'",
    ]),
)


@given(st.lists(_WORDS, max_size=8).map(" ".join))
def test_refusals_are_one_line(args: str) -> None:
    try:
        start_request(args, ROOT)
    except UsageError as err:
        message = str(err)
        assert message and "\n" not in message and "\r" not in message


# --- a held-out set, written from the rules alone by someone who had not seen this code ---------

BLIND = json.loads((Path(__file__).parent / "data" / "args_blind.json").read_text())


@pytest.mark.parametrize("case", BLIND, ids=[case["id"] for case in BLIND])
def test_blind_argument_cases(case: dict[str, Any]) -> None:
    if isinstance(case["expected"], dict):
        with pytest.raises(UsageError):
            split_words(case["input"])
    else:
        assert split_words(case["input"]) == case["expected"], case["why"]


# --- judge mode: --judge, --criteria, --protect ---------------------------------------------------


def test_judge_mode_defaults_to_100_attempts_without_a_warning(tmp_path: Path) -> None:
    request = parse('go --judge --criteria "it works" --verify "pytest -q"', tmp_path)
    assert (request.judge, request.criteria, request.verify, request.max_iterations,
            request.protect) == (True, ["it works"], ["pytest -q"], 100, [])
    assert request.warnings == []
    chosen = parse('go --judge --criteria a --verify x --max-iterations 120', tmp_path)
    assert chosen.max_iterations == 120 and chosen.warnings != []


def test_judge_mode_cap_zero_refused_as_everywhere() -> None:
    assert refusal('go --judge --criteria a --verify x --max-iterations 0') == (
        "--max-iterations must be from 1 to 1000, not 0: a loop always has a cap; for example "
        "--max-iterations 8")


@pytest.mark.parametrize(("args", "message"), [
    ('go --criteria "it works"', "--criteria is for judge mode: add --judge, or drop it"),
    ("go --protect src", "--protect is for judge mode: add --judge, or drop it"),
    ('go --judge --criteria ""', '--criteria is empty: give it a value, e.g. --criteria '
                                 '"GET /reports/1.csv returns 200"'),
    ('go --judge --protect " "', "--protect is empty: give it a value, e.g. --protect "
                                 "src/billing/"),
    ('go --judge --criteria a --gate "pytest -q"',
     "--judge and --gate do not mix: the judge decides, not the gate; drop one"),
])
def test_judge_mode_arguments_refused(args: str, message: str) -> None:
    assert refusal(args) == message


def test_usage_names_the_judge_flags() -> None:
    assert "[--judge --criteria TEXT --protect PATH]" in LOOP_USAGE
