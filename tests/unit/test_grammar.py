"""The slash-command grammar: shlex in Python, never a shell; every refusal is one line."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from finesse.errors import UsageError
from finesse.loop.grammar import (
    LOOP_USAGE,
    SlashCommand,
    expect_no_args,
    match_command,
)
from finesse.loop.request import StartRequest, start_request

ROOT = Path("/nonexistent-finesse-root")


def parse(args: str, root: Path = ROOT) -> StartRequest:
    return start_request(args, root)


def refusal(args: str, root: Path = ROOT) -> str:
    with pytest.raises(UsageError) as caught:
        start_request(args, root)
    message = str(caught.value)
    assert "\n" not in message and message.strip() == message and message
    return message


# --- prompt words -----------------------------------------------------------------------------


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


# --- --max-iterations ------------------------------------------------------------------------


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


# --- --completion-promise -------------------------------------------------------------------


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


# --- files ------------------------------------------------------------------------------------


def test_prompt_file_relative_to_root(tmp_path: Path) -> None:
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "task.md").write_text("\n  Do the thing.\nThen the other.\n\n")
    assert parse("--prompt-file plans/task.md --max-iterations 4", tmp_path) == StartRequest(
        prompt="Do the thing.\nThen the other.", max_iterations=4, prompt_file="plans/task.md",
    )


def test_prompt_file_absolute(tmp_path: Path) -> None:
    task = tmp_path / "task.md"
    task.write_text("Absolute task")
    assert parse(f"--prompt-file={shlex.quote(str(task))}", ROOT) == StartRequest(
        prompt="Absolute task", prompt_file=str(task),
    )


def test_completion_promise_file(tmp_path: Path) -> None:
    (tmp_path / "promise.txt").write_text("  ALL\n  TESTS   PASS\n")
    assert parse("go --completion-promise-file promise.txt", tmp_path) == StartRequest(
        prompt="go", promise="ALL TESTS PASS", promise_file="promise.txt",
    )


def test_both_files(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("Task from file")
    (tmp_path / "done.txt").write_text("SHIPPED")
    request = parse(
        "--prompt-file p.md --completion-promise-file done.txt --verify 'pytest -q'", tmp_path
    )
    assert request == StartRequest(
        prompt="Task from file", promise="SHIPPED", verify=["pytest -q"],
        prompt_file="p.md", promise_file="done.txt",
    )


@pytest.mark.parametrize("flag", ["--prompt-file", "--completion-promise-file"])
def test_missing_file_refused(tmp_path: Path, flag: str) -> None:
    words = "" if flag == "--prompt-file" else "go "
    assert refusal(f"{words}{flag} nope.md", tmp_path) == (
        f"{flag} nope.md: no such file under {tmp_path}; "
        "give a path relative to the project root"
    )


@pytest.mark.parametrize("flag", ["--prompt-file", "--completion-promise-file"])
def test_directory_refused(tmp_path: Path, flag: str) -> None:
    (tmp_path / "plans").mkdir()
    words = "" if flag == "--prompt-file" else "go "
    assert refusal(f"{words}{flag} plans", tmp_path) == (
        f"{flag} plans: that is a directory; give a file"
    )


def test_empty_prompt_file_refused(tmp_path: Path) -> None:
    (tmp_path / "empty.md").write_text(" \n\t\n")
    assert refusal("--prompt-file empty.md", tmp_path) == (
        "--prompt-file empty.md is empty: write the task in it"
    )


def test_empty_promise_file_refused(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("\n")
    assert refusal("go --completion-promise-file empty.txt", tmp_path) == (
        "--completion-promise-file empty.txt is empty: "
        "give the text the agent must output, e.g. DONE"
    )


def test_non_utf8_file_refused(tmp_path: Path) -> None:
    (tmp_path / "latin1.md").write_bytes(b"caf\xe9")
    assert refusal("--prompt-file latin1.md", tmp_path) == (
        "--prompt-file latin1.md: not UTF-8 text; save it as UTF-8"
    )


def test_huge_file_refused(tmp_path: Path) -> None:
    (tmp_path / "big.md").write_bytes(b"x" * (1024 * 1024 + 1))
    assert refusal("--prompt-file big.md", tmp_path) == (
        "--prompt-file big.md: over 1 MiB; point at a smaller file"
    )


def test_endless_device_refused_without_reading_it() -> None:
    assert refusal("--prompt-file /dev/zero") == (
        "--prompt-file /dev/zero: not a regular file (a FIFO, device or socket); give a plain file"
    )


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


# --- --verify, unknown flags, quoting ---------------------------------------------------------


def test_verify_is_repeatable_and_ordered() -> None:
    request = parse("go --verify 'pytest -q' --verify=ruff\\ check --verify 'make lint'")
    assert request == StartRequest(prompt="go", verify=["pytest -q", "ruff check", "make lint"])


def test_verify_empty_refused() -> None:
    assert refusal("go --verify '  '") == '--verify needs a command, e.g. --verify "pytest -q"'


@pytest.mark.parametrize("flag", ["--bogus", "--max-iteration", "--help", "--verify-all=1"])
def test_unknown_flags_refused(flag: str) -> None:
    name = flag.partition("=")[0]
    assert refusal(f"go {flag}") == f"unknown option {name}: type {LOOP_USAGE}"


@pytest.mark.parametrize("args", ['"unclosed', "it's broken", 'go --completion-promise "DONE'])
def test_unbalanced_quote_one_line(args: str) -> None:
    assert refusal(args) == (
        "could not read the arguments (No closing quotation): close the quote, or put the "
        "prompt in a file and pass --prompt-file PATH"
    )


@pytest.mark.parametrize("args", ["", "   ", "--max-iterations 3", "''", "--", "-- ''"])
def test_empty_prompt_refused(args: str) -> None:
    assert refusal(args) == f"the prompt is empty: type {LOOP_USAGE}"


# --- match_command ----------------------------------------------------------------------------


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


@pytest.mark.parametrize("flag", ["--prompt-file", "--completion-promise-file"])
@pytest.mark.parametrize("name", ["a\nb.md", "a\rb.md", "a\x00b.md", "\x00"])
def test_unprintable_file_names_refused_on_one_line(flag: str, name: str) -> None:
    words = "" if flag == "--prompt-file" else "go "
    message = refusal(f"{words}{flag} {shlex.quote(name)}")
    assert message.startswith(f"{flag} {name!r}: ")


def test_existing_file_with_newline_in_name_refused_on_one_line(tmp_path: Path) -> None:
    (tmp_path / "a\nb.md").write_text("\n")
    quoted = shlex.quote("a\nb.md")
    assert refusal(f"--prompt-file {quoted}", tmp_path) == (
        "--prompt-file 'a\\nb.md' is empty: write the task in it"
    )
    assert refusal(f"go --completion-promise-file {quoted}", tmp_path) == (
        "--completion-promise-file 'a\\nb.md' is empty: "
        "give the text the agent must output, e.g. DONE"
    )


# --- properties -------------------------------------------------------------------------------

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
