"""Issue 10's traps in the loop's own files, as the adversarial review reproduced them:
through the hook launcher in real subprocesses and `ralph` from a terminal. A loop file that
names another session, a loops folder that cannot be written, a file nested 100,000 deep or
holding absurd numbers: each is moved aside or ignored with one line, never trapping a
session and never touching another session's loop."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from finesse.state.store import LoopStore
from tests.helpers.hooks import continuation, prompt_input, stop_input
from tests.helpers.launch import (
    LAUNCHER,
    PROMPT_SUBMIT,
    RALPH,
    STOP,
    Run,
    hook_env,
    run_launcher,
    run_ralph,
)
from tests.helpers.states import (
    OTHER_SESSION,
    SESSION,
    files_under,
    only_archived,
    store_for,
)
from tests.helpers.texts import NOTES


def _prompt(root: Path, prompt: str, session: str = SESSION) -> Run:
    return run_launcher(PROMPT_SUBMIT, prompt_input(prompt, session, str(root)), hook_env(root),
                        root)


def _stop(root: Path, reply: str = "working", session: str = SESSION) -> Run:
    return run_launcher(STOP, stop_input(reply, session, str(root), stop_hook_active=True),
                        hook_env(root), root)


def _moved_aside(store: LoopStore, session: str, problem: str) -> str:
    """The one line that says a loop file was unreadable and moved aside; `problem` is a
    regular expression."""
    corrupt = re.escape(str(store.paths.corrupt))
    return (rf"finesse: the loop state {session}\.json was unreadable \({problem}\); it was "
            rf"moved to {corrupt}/{session}\.\d{{8}}T\d{{12}}Z\.json and the loop has stopped")


def _said(run: Run, key: str) -> str:
    output = run.output()
    assert (run.code, run.stderr) == (0, "") and output is not None
    said = output[key]
    assert isinstance(said, str) and "\n" not in said, said
    return said


def _terminal_line(run: Run, code: int) -> str:
    """`ralph`'s one line, on stdout when it succeeded, else on stderr."""
    assert run.code == code and "Traceback" not in run.stderr
    line, other = (run.stdout, run.stderr) if code == 0 else (run.stderr, run.stdout)
    assert other == "" and line.endswith("\n") and line.count("\n") == 1, (line, other)
    return line[:-1]


# --- 8. a loop file that names another session ----------------------------------------------------


def test_a_loop_file_naming_another_session_is_moved_aside(git_repo: Path) -> None:
    store = store_for(git_repo)
    _prompt(git_repo, "/ralph-loop mine --quiesce-after 7")
    mine = store.paths.loop_file(SESSION)
    copy = store.paths.loop_file(OTHER_SESSION)
    before = mine.read_bytes()
    problem = re.escape(f"it names session '{SESSION}', not the '{OTHER_SESSION}' of its file "
                        "name")

    # Session B's stop: the copy is B's corruption, never a reason to write A's file.
    copy.write_bytes(before)
    said = _said(_stop(git_repo, "<promise>RALPH_LOOP_STOP</promise>", OTHER_SESSION),
                 "systemMessage")
    assert re.fullmatch(_moved_aside(store, OTHER_SESSION, problem), said)
    assert (mine.read_bytes(), copy.exists()) == (before, False)
    assert store.paths.log.read_text().endswith(said.removeprefix("finesse: ") + "\n")
    assert _stop(git_repo, "again", OTHER_SESSION) == Run(0, "", "")

    # /cancel-ralph in B answers in one line, and then finds nothing of B's to cancel.
    copy.write_bytes(before)
    said = _said(_prompt(git_repo, "/cancel-ralph", OTHER_SESSION), "reason")
    assert re.fullmatch(_moved_aside(store, OTHER_SESSION, problem), said)
    assert _said(_prompt(git_repo, "/cancel-ralph", OTHER_SESSION), "reason") == (
        "finesse: no Ralph loop is running in this session; nothing to cancel.")
    assert (mine.read_bytes(), store.history()) == (before, [])

    # From a terminal: B's cancel says the same in one line; status lists A's loop alone.
    copy.write_bytes(before)
    said = _terminal_line(run_ralph(git_repo, "cancel", "--session", OTHER_SESSION), 1)
    assert re.fullmatch(_moved_aside(store, OTHER_SESSION, problem).replace(
        "finesse: ", "ralph cancel: ", 1), said)
    # `ralph status` only reads: it names B's unreadable file and leaves it for B's next
    # stop (it used to move it aside with nothing logged).
    copy.write_bytes(before)
    status = run_ralph(git_repo, "status")
    assert (status.code, status.stderr) == (0, (
        f"ralph status: an unreadable loop file, left as it is: {OTHER_SESSION}.json: it "
        f"names session '{SESSION}', not the '{OTHER_SESSION}' of its file name\n"))
    assert f"(session {SESSION})" in status.stdout and OTHER_SESSION not in status.stdout
    assert copy.read_bytes() == before and mine.read_bytes() == before
    assert len(files_under(store.paths.corrupt)) == 3

    # A's loop never noticed.
    assert _stop(git_repo).output() == continuation(
        "Ralph iteration 2/8: output <promise>RALPH_LOOP_STOP</promise> only when it is "
        f"completely true\n\nmine\n\n---\n\n{NOTES}", "Ralph iteration 2/8")


# --- 11. a loops folder that cannot be written ----------------------------------------------------

# Run a script (the launcher, or bin/ralph) with the loops folder refused to writes, as a
# read-only folder refuses them: for a root user, whom chmod does not stop.
READ_ONLY = r"""
import os, runpy, sys
LOOPS = os.path.realpath(sys.argv[1])
def _in_loops(path):
    try:
        return os.path.dirname(os.path.realpath(os.fsdecode(path))) == LOOPS
    except (TypeError, ValueError):
        return False
def _guard(real, check):
    def guarded(*args, **kwargs):
        if check(*args):
            raise PermissionError(13, "Permission denied", os.fsdecode(args[0]))
        return real(*args, **kwargs)
    return guarded
WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT
os.unlink = os.remove = _guard(os.unlink, lambda path, *rest: _in_loops(path))
os.replace = _guard(os.replace, lambda src, dst, *rest: _in_loops(src) or _in_loops(dst))
os.rename = _guard(os.rename, lambda src, dst, *rest: _in_loops(src) or _in_loops(dst))
os.open = _guard(os.open, lambda path, flags, *rest: bool(flags & WRITES) and _in_loops(path))
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

Runner = Callable[..., Run]


@pytest.fixture
def read_only(git_repo: Path) -> Iterator[tuple[Callable[[], None], Runner, Runner]]:
    """(make the loops folder read-only, run the launcher, run `ralph`), both run after it.

    A user who is not root gets a real read-only folder (chmod); root, whom chmod does not
    stop, gets every removal, rename and write in that folder refused in the subprocess."""
    loops = store_for(git_repo).paths.loops
    as_root = os.geteuid() == 0

    def protect() -> None:
        if not as_root:
            loops.chmod(0o555)

    def launcher(event: str, raw: bytes) -> Run:
        if not as_root:
            return run_launcher(event, raw, hook_env(git_repo), git_repo)
        done = subprocess.run(
            [sys.executable, "-S", "-c", READ_ONLY, str(loops), str(LAUNCHER), event],
            input=raw, capture_output=True, env=hook_env(git_repo), cwd=git_repo, timeout=60)
        return Run(done.returncode, done.stdout.decode(), done.stderr.decode())

    def ralph(*argv: str) -> Run:
        if not as_root:
            return run_ralph(git_repo, *argv)
        done = subprocess.run(
            [sys.executable, "-c", READ_ONLY, str(loops), str(RALPH), *argv],
            capture_output=True, env=hook_env(git_repo), cwd=git_repo, timeout=60)
        return Run(done.returncode, done.stdout.decode(), done.stderr.decode())

    yield protect, launcher, ralph
    if loops.exists():
        loops.chmod(0o755)


def test_a_cancel_in_a_read_only_folder_still_ends_the_loop(
        git_repo: Path, read_only: tuple[Callable[[], None], Runner, Runner]) -> None:
    protect, launcher, ralph = read_only
    store = store_for(git_repo)
    _prompt(git_repo, "/ralph-loop go --quiesce-after 7")
    loop_file = store.paths.loop_file(SESSION)
    protect()

    cancelled = launcher(PROMPT_SUBMIT, prompt_input("/cancel-ralph", cwd=str(git_repo)))
    assert _said(cancelled, "reason") == (
        f"finesse: the loop has ended, but its file {loop_file} could not be removed "
        "(Permission denied); it is ignored from now on")
    assert only_archived(git_repo).outcome == "cancelled" and loop_file.exists()

    # The next stop ends the loop anyway: it never blocks, whatever the reply says.
    for reply in ("working", "<promise>RALPH_LOOP_STOP</promise>"):
        after = launcher(STOP, stop_input(reply, cwd=str(git_repo), stop_hook_active=True))
        assert after == Run(0, "", "")
    assert loop_file.exists()
    # Nothing calls it running any more: not /ralph-status, not `ralph status`, not cancel.
    status = launcher(PROMPT_SUBMIT, prompt_input("/ralph-status", cwd=str(git_repo)))
    assert _said(status, "reason") == "finesse: no Ralph loop is running in this session."
    assert _terminal_line(ralph("status"), 0) == f"No active Ralph loop in {git_repo}."
    assert _terminal_line(ralph("cancel"), 1) == f"ralph cancel: no active Ralph loop in {git_repo}"
    assert [loop.outcome for loop in store.history()] == ["cancelled"]

    # Once the folder can be written again, the stale file goes at the next stop.
    store.paths.loops.chmod(0o755)
    assert _stop(git_repo) == Run(0, "", "")
    assert files_under(store.paths.loops) == []


# --- 12. deep nesting and absurd numbers ----------------------------------------------------------


def _loop_file_with(root: Path, **fields: object) -> bytes:
    """The session's loop file as started, with `fields` replaced (a JSON text each); a
    name `part.field` is a field of one of the state's parts (`budgets.max_tokens`)."""
    path = store_for(root).paths.loop_file(SESSION)
    text = path.read_text()
    for name, value in fields.items():
        leaf, indent = name.rpartition(".")[2], "  " * (name.count(".") + 1)
        text, found = re.subn(rf'\n{indent}"{leaf}": [^\n]*?(,?)\n',
                              rf'\n{indent}"{leaf}": {value}\1\n', text)
        assert found == 1, name
    return text.encode()


DEEP = "[" * 100_000 + "]" * 100_000
NAMED = {
    "a 100,000-deep array": (lambda root: DEEP.encode(),
                             "the file: nested too deeply to be a loop state"),
    "a 100,000-deep field": (lambda root: _loop_file_with(root, verify=DEEP),
                             "the file: nested too deeply to be a loop state"),
    "max_iterations 10**30": (lambda root: _loop_file_with(root, max_iterations=10**30),
                              "max_iterations: expected an integer from 0 to 100000"),
    "a negative iteration": (lambda root: _loop_file_with(root, iteration=-3),
                             r"iteration: expected an integer >= 1"),
}


@pytest.mark.parametrize("case", sorted(NAMED))
def test_a_deep_or_absurd_loop_file_is_moved_aside_wherever_it_is_met(
        git_repo: Path, case: str) -> None:
    store = store_for(git_repo)
    _prompt(git_repo, "/ralph-loop go")
    make, problem = NAMED[case]
    content = make(git_repo)
    loop_file = store.paths.loop_file(SESSION)
    moved = _moved_aside(store, SESSION, re.escape(problem))

    loop_file.write_bytes(content)
    assert re.fullmatch(moved, _said(_stop(git_repo), "systemMessage"))
    assert not loop_file.exists() and _stop(git_repo) == Run(0, "", "")
    [kept] = files_under(store.paths.corrupt)
    assert (store.paths.corrupt / kept).read_bytes() == content

    loop_file.write_bytes(content)
    assert re.fullmatch(moved, _said(_prompt(git_repo, "/cancel-ralph"), "reason"))
    # The status hook and `ralph status` only read: they name the file and leave it.
    loop_file.write_bytes(content)
    said = _said(_prompt(git_repo, "/ralph-status"), "reason")
    assert re.fullmatch(
        r"finesse: no Ralph loop is running in this session; its loop file is unreadable \("
        + problem + r"\) and stays as it is until the session's next stop moves it aside\.",
        said), said
    assert loop_file.read_bytes() == content
    assert store.paths.log.read_text().count(f"({problem})") == 1  # the stop's move
    status = run_ralph(git_repo, "status")
    assert (status.code, status.stdout) == (0, f"No active Ralph loop in {git_repo}.\n")
    assert status.stderr.startswith(
        f"ralph status: an unreadable loop file, left as it is: {SESSION}.json: ")
    loop_file.write_bytes(content)
    assert _terminal_line(run_ralph(git_repo, "cancel"), 1) == (
        f"ralph cancel: no active Ralph loop in {git_repo}")
    loop_file.write_bytes(content)
    said = _terminal_line(run_ralph(git_repo, "cancel", "--session", SESSION), 1)
    assert re.fullmatch(moved.replace("finesse: ", "ralph cancel: ", 1), said)
    # Moved aside by the three that hold the session's lock: the stop, /cancel-ralph and
    # `ralph cancel --session`; the readers left it.
    assert len(files_under(store.paths.corrupt)) == 3
    assert not loop_file.exists() and store.history() == []


# Fields no typed command can set so: a garbled or tampered file, never a loop that runs on
# them (a negative budget ended the loop at once, "the --max-tokens budget is -1").
ABSURD = [
    ({"iteration": 10**30}, r"iteration: expected an integer from 0 to 9"),
    ({"max_iterations": "Infinity"}, r"max_iterations: expected an integer"),
    ({"quiesce_after": "NaN"}, r"quiesce_after: expected an integer"),
    ({"max_iterations": "9" * 5000}, r"the file: not valid JSON \(.*digits.*\)"),
    ({"timeout_minutes": 10**30}, r"timeout_minutes: expected an integer from 0 to 10080"),
    ({"idle_iterations": -1}, r"idle_iterations: expected an integer from 0 to 1000000"),
    ({"budgets.max_tokens": -1},
     r"budgets\.max_tokens: expected an integer from 0 to 1000000000000"),
    ({"budgets.max_tokens": 10**30},
     r"budgets\.max_tokens: expected an integer from 0 to 1000000000000"),
    ({"budgets.max_cost": "NaN"}, r"budgets\.max_cost: expected an amount from 0 to 1000000"),
    ({"budgets.max_cost": -5.0}, r"budgets\.max_cost: expected an amount from 0 to 1000000"),
    ({"budgets.stop_at_quota": 10**30},
     r"budgets\.stop_at_quota: expected an integer from 0 to 100"),
    ({"cursor.offset": -1}, r"cursor\.offset: expected an integer from 0 to \d+"),
]


@pytest.mark.parametrize(("fields", "problem"), ABSURD,
                         ids=[next(iter(fields)) for fields, _ in ABSURD])
def test_absurd_numbers_are_corruption(git_repo: Path, fields: dict[str, object],
                                       problem: str) -> None:
    store = store_for(git_repo)
    _prompt(git_repo, "/ralph-loop go")
    content = _loop_file_with(git_repo, **fields)
    store.paths.loop_file(SESSION).write_bytes(content)
    assert re.fullmatch(_moved_aside(store, SESSION, problem),
                        _said(_stop(git_repo), "systemMessage"))
    [kept] = files_under(store.paths.corrupt)
    assert (store.paths.corrupt / kept).read_bytes() == content
    assert files_under(store.paths.loops) == [] and store.history() == []
