"""`finesse validate` through click's CliRunner: output, exit codes 0/1/2, one-line errors."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from finesse.authoring.prompt_check.validate import validate_prompt
from finesse.cli.finesse import SUBCOMMANDS, cli, main
from tests.unit.authoring.prompt_check.test_validate import BASE

NAIVE = "Build a todo API.\n\nOutput <promise>DONE</promise> when done.\n"
NO_LINE_FIXES = {
    3: ("failure-instructions", "say what to do after the same error 3 times (note what you "
        "tried, change approach) and when to output <promise>BLOCKED</promise>"),
    4: ("ordered-phases", "split the work into ordered phases ('Phase 1: ...', 'Phase 2: ...') "
        "or a numbered list under a 'Steps' heading"),
    5: ("verification-commands", "add 'Run `<test command>` after every change.'"),
    6: ("guardrails", "add explicit rules such as '- Do not delete or skip failing tests.'"),
    7: ("scoped-context", "name the paths that matter and the paths to leave alone, e.g. "
        "'In scope: `src/app/`. Out of scope: `migrations/`'"),
    9: ("iteration-limit", "state a conservative cap, e.g. 'Max iterations: 12' (at most 25)"),
    10: ("zero-ambiguity", "add 'Do not output the completion promise unless every criterion "
         "above is met.'"),
}




def invoke(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, list(args), prog_name="finesse")


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_complete_prompt_exits_0_with_every_attribute_in_the_json(
        runner: CliRunner, tmp_path: Path) -> None:
    prompt = write(tmp_path, "prompt.md", BASE)
    result = invoke(runner, "validate", prompt, "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == {
        "path": prompt,
        "passed": True,
        "attributes": [r.model_dump() for r in validate_prompt(BASE).attributes],
        "prompt_only": validate_prompt(BASE).prompt_only.model_dump(),
    }


def test_a_thin_prompt_exits_1_and_the_json_says_what_is_missing(
        runner: CliRunner, tmp_path: Path) -> None:
    prompt = write(tmp_path, "naive.md", NAIVE)
    result = invoke(runner, "validate", prompt, "--json")
    assert (result.exit_code, result.stderr) == (1, "")
    signal_line = "line 3: Output <promise>DONE</promise> when done."
    no_line: list[dict[str, Any]] = [
        {"id": id_, "key": key, "passed": False, "evidence": None, "fix": fix}
        for id_, (key, fix) in NO_LINE_FIXES.items()
    ]
    assert json.loads(result.stdout) == {
        "path": prompt,
        "passed": False,
        "attributes": [
            {"id": 1, "key": "binary-completion-criteria", "passed": False,
             "evidence": signal_line,
             "fix": "say what must be true: 'when ALL of the following are true:' and a "
                    "list of checks, e.g. '- `pytest -q` exits 0'"},
            {"id": 2, "key": "completion-signal", "passed": True, "evidence": signal_line,
             "fix": ""},
            *no_line[:5],
            {"id": 8, "key": "cold-start", "passed": False,
             "evidence": "line 1: Build a todo API.",
             "fix": "make the first paragraph tell the agent that it is iterating with no "
                    "memory of earlier iterations"},
            *no_line[5:],
        ],
        "prompt_only": {"passed": True, "evidence": "line 1: Build a todo API.", "fix": ""},
    }


def test_the_table_has_one_line_per_attribute_and_a_verdict(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("naive.md").write_text(NAIVE)
    result = invoke(runner, "validate", "naive.md")
    signal = "line 3: Output <promise>DONE</promise> when done."
    assert (result.exit_code, result.stderr) == (1, "")
    assert result.stdout.splitlines() == [
        f"FAIL  1 binary-completion-criteria  {signal}  fix: say what must be true: 'when ALL "
        "of the following are true:' and a list of checks, e.g. '- `pytest -q` exits 0'",
        f"PASS  2 completion-signal           {signal}",
        f"FAIL  3 failure-instructions        (no line)  fix: {NO_LINE_FIXES[3][1]}",
        f"FAIL  4 ordered-phases              (no line)  fix: {NO_LINE_FIXES[4][1]}",
        f"FAIL  5 verification-commands       (no line)  fix: {NO_LINE_FIXES[5][1]}",
        f"FAIL  6 guardrails                  (no line)  fix: {NO_LINE_FIXES[6][1]}",
        f"FAIL  7 scoped-context              (no line)  fix: {NO_LINE_FIXES[7][1]}",
        "FAIL  8 cold-start                  line 1: Build a todo API.  fix: make the first "
        "paragraph tell the agent that it is iterating with no memory of earlier iterations",
        f"FAIL  9 iteration-limit             (no line)  fix: {NO_LINE_FIXES[9][1]}",
        f"FAIL 10 zero-ambiguity              (no line)  fix: {NO_LINE_FIXES[10][1]}",
        "PASS  - prompt-only                 line 1: Build a todo API.",
        "naive.md: 9 of 10 attributes fail; fix them and run `finesse validate` again",
    ]


def test_the_table_shortens_long_evidence(runner: CliRunner, tmp_path: Path) -> None:
    result = invoke(runner, "validate", write(tmp_path, "prompt.md", BASE))
    assert result.exit_code == 0
    assert result.stdout.splitlines()[7] == (
        "PASS  8 cold-start                  line 1: You are iterating on the `--verbose` "
        "flag. You have no memory o…")
    assert result.stdout.splitlines()[-1].endswith("prompt.md: all 10 attributes pass")


def test_a_matching_promise_file_passes(runner: CliRunner, tmp_path: Path) -> None:
    prompt = write(tmp_path, "prompt.md", BASE)
    promise = write(tmp_path, "promise.txt", "  DONE\n")
    assert invoke(runner, "validate", prompt, "--promise-file", promise).exit_code == 0


def test_a_promise_file_that_differs_fails_attribute_2(
        runner: CliRunner, tmp_path: Path) -> None:
    prompt = write(tmp_path, "prompt.md", BASE)
    promise = write(tmp_path, "promise.txt", "SHIPPED\n")
    result = invoke(runner, "validate", prompt, "--promise-file", promise, "--json")
    expected = [r.model_dump() for r in validate_prompt(BASE).attributes]
    expected[1] = {
        "id": 2, "key": "completion-signal", "passed": False,
        "evidence": "line 16: Output <promise>DONE</promise> when ALL of the following are "
                    "true:",
        "fix": "the loop (--completion-promise SHIPPED) ends only on <promise>SHIPPED</promise>, "
               "not <promise>DONE</promise>: promise <promise>SHIPPED</promise> or run the loop "
               "with --completion-promise DONE",
    }
    assert (result.exit_code, result.stderr) == (1, "")
    assert json.loads(result.stdout) == {
        "path": prompt, "passed": False, "attributes": expected,
        "prompt_only": validate_prompt(BASE).prompt_only.model_dump()}


def test_the_loops_flags_judge_the_prompt_as_the_loop_runs_it(
        runner: CliRunner, tmp_path: Path) -> None:
    """A plain completion token and no cap in the prompt: by the seed the token is a signal;
    the loop's --completion-promise names the tag it detects instead, its --max-iterations
    is the cap."""
    text = BASE.replace("Max iterations: 10\n", "").replace(
        "Output <promise>DONE</promise> when", "Output RALPH_COMPLETE when")
    prompt = write(tmp_path, "prompt.md", text)
    plain = json.loads(invoke(runner, "validate", prompt, "--json").stdout)["attributes"]
    assert [(r["key"], r["evidence"], r["fix"]) for r in plain if not r["passed"]] == [
        ("iteration-limit", None,
         "state a conservative cap, e.g. 'Max iterations: 12' (at most 25)")]
    flagged = json.loads(invoke(runner, "validate", prompt, "--json", "--max-iterations", "12",
                                "--completion-promise", "RALPH_COMPLETE").stdout)["attributes"]
    assert [(r["key"], r["evidence"], r["fix"]) for r in flagged if not r["passed"]] == [
        ("completion-signal", "line 15: Output RALPH_COMPLETE when ALL of the following are "
                              "true:",
         "the loop (--completion-promise RALPH_COMPLETE) detects only "
         "<promise>RALPH_COMPLETE</promise> in the reply, not a plain RALPH_COMPLETE: wrap it "
         "as <promise>RALPH_COMPLETE</promise>")]
    assert flagged[8] == {"id": 9, "key": "iteration-limit", "passed": True,
                          "evidence": "the loop's flag --max-iterations 12", "fix": ""}
    wrapped = write(tmp_path, "wrapped.md", text.replace(
        "Output RALPH_COMPLETE when", "Output <promise>RALPH_COMPLETE</promise> when"))
    result = invoke(runner, "validate", wrapped, "--max-iterations", "40",
                    "--completion-promise-file", write(tmp_path, "p.txt", "RALPH_COMPLETE"))
    assert result.exit_code == 1
    assert [line for line in result.stdout.splitlines() if line.startswith("FAIL")] == [
        "FAIL  9 iteration-limit             the loop's flag --max-iterations 40  fix: run the "
        "loop with --max-iterations 25 or fewer: it stops only after 40"]


@pytest.mark.parametrize(("args", "message"), [
    (["validate", "{tmp}/prompt.md", "--completion-promise", "A", "--promise-file", "{tmp}/p"],
     "finesse validate: give the loop's promise once, not both --completion-promise and "
     "--promise-file"),
    (["validate", "{tmp}/prompt.md", "--max-iterations", "many"],
     "finesse validate: --max-iterations needs a whole number from 1 to 1000, not 'many': for "
     "example --max-iterations 8"),
    (["validate", "{tmp}", "--max-iterations", "8"],
     "finesse validate: --max-iterations is for one prompt; each sub-workflow of a plan folder "
     "has its own cap in the execution graph"),
    (["validate", "{tmp}/nope.md"],
     "finesse validate: prompt file {tmp}/nope.md: no such file; give the path of an "
     "existing file"),
    (["validate", "{tmp}"],
     "finesse validate: {tmp}: no execution-graph.md and no wave-N/ folders; give a prompt "
     "file or a decomposed plan's folder"),
    (["validate", "{tmp}/prompt.md", "--promise-file", "{tmp}/nope.txt"],
     "finesse validate: --promise-file {tmp}/nope.txt: no such file; give the path of an "
     "existing file"),
    (["validate", "{tmp}/prompt.md", "--promise-file", "{tmp}/empty.txt"],
     "finesse validate: --promise-file {tmp}/empty.txt is empty: give the text the agent "
     "must output, e.g. DONE"),
    (["validate"],
     "finesse validate: Missing argument 'PROMPT_PATH'. (see 'finesse validate --help')"),
    (["validate", ""],
     "finesse validate: the prompt file's name is empty: give the path of a prompt file (or "
     "of a plan folder)"),
    (["validate", "--jsn", "x.md"],
     "finesse validate: No such option '--jsn'. Did you mean '--json'? "
     "(see 'finesse validate --help')"),
    (["valdate", "x.md"],
     "finesse: No such command 'valdate'. (see 'finesse --help')"),
])
def test_usage_errors_exit_2_with_one_line_on_stderr(
        runner: CliRunner, tmp_path: Path, args: list[str], message: str) -> None:
    write(tmp_path, "prompt.md", BASE)
    write(tmp_path, "empty.txt", " \n")
    result = invoke(runner, *[arg.format(tmp=tmp_path) for arg in args])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", message.format(tmp=tmp_path) + "\n")


def test_main_returns_the_same_exit_codes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", write(tmp_path, "prompt.md", BASE)]) == 0
    assert main(["validate", write(tmp_path, "naive.md", NAIVE)]) == 1
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "nope.md")]) == 2
    assert capsys.readouterr() == ("", f"finesse validate: prompt file {tmp_path}/nope.md: no "
                                       "such file; give the path of an existing file\n")
    assert main(["--help"]) == 0


def test_every_registered_subcommand_is_a_click_command_of_that_name() -> None:
    for name, module in SUBCOMMANDS.items():
        command = importlib.import_module(module).command
        assert isinstance(command, click.Command)
        assert command.name == name


def test_help_lists_the_subcommands(runner: CliRunner) -> None:
    result = invoke(runner, "--help")
    assert result.exit_code == 0
    listed = result.stdout.split("Commands:\n")[1].split()
    assert set(SUBCOMMANDS) <= set(listed)


def test_a_prompt_file_with_metadata_first_fails_with_the_prompt_only_fix(
        runner: CliRunner, tmp_path: Path) -> None:
    prompt = write(tmp_path, "plan.md", "# Plan: verbose flag\n\n" + BASE)
    result = invoke(runner, "validate", prompt)
    assert (result.exit_code, result.stderr) == (1, "")
    assert result.stdout.splitlines()[-2:] == [
        "FAIL  - prompt-only                 line 1: # Plan: verbose flag  fix: the file starts "
        "with a heading: start the file with the cold-start paragraph (\"You are iterating on "
        "...\"); metadata belongs in <name>-plan.md",
        f"{prompt}: all 10 attributes pass, but the file is not prompt-only; fix it and run "
        "`finesse validate` again",
    ]


def test_a_fifo_is_refused_without_blocking(runner: CliRunner, tmp_path: Path) -> None:
    fifo = tmp_path / "prompt.md"
    os.mkfifo(fifo)  # nothing ever writes to it: a blocking open would hang the test
    result = invoke(runner, "validate", str(fifo))
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"finesse validate: prompt file {fifo}: not a regular file (a FIFO, device or "
               "socket); give a plain file\n")


def test_a_file_name_that_is_not_utf8_is_read_and_shown_quoted(
        runner: CliRunner, tmp_path: Path) -> None:
    name = os.fsdecode(b"prompt-\xff.md")
    path = tmp_path / name
    path.write_text(BASE)
    result = invoke(runner, "validate", str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        f"{str(path)!a}: all 10 attributes pass")
    path.write_bytes(b"\xff\xfe")
    result = invoke(runner, "validate", str(path))
    assert (result.exit_code, result.stderr) == (
        2, f"finesse validate: prompt file {str(path)!a}: not UTF-8 text; save it as "
           "UTF-8\n")
