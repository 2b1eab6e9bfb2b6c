"""`ralph start`: a loop started from a terminal with the /ralph-loop grammar; exit codes,
stdout and stderr whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from finesse.loop.grammar import LOOP_USAGE as USAGE
from finesse.state.store import LoopStore
from tests.helpers.cli import run
from tests.helpers.states import (
    SESSION,
    T1,
    files_under,
    make_state,
)

pytestmark = pytest.mark.usefixtures("ralph_clock")


def test_start(capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore) -> None:
    code, out, err = run(capsys, "start", "--project", str(root), "--session", SESSION,
                         "Fix it's tests; $(touch X)", "--max-iterations", "30",
                         "--completion-promise", "ALL  DONE", "--verify", "pytest -q")
    state = store.load(SESSION)
    assert state is not None
    assert (code, out, err) == (
        0,
        f"Started Ralph loop {state.loop_id} for session {SESSION}: up to 30 iterations, "
        "promise ALL DONE.\n",
        "warning: --max-iterations 30 is above 25: long loops burn quota; /cancel-ralph stops "
        "it at any time\n",
    )
    assert (state.prompt, state.promise, state.max_iterations, state.verify, state.started_at) == (
        "Fix it's tests; $(touch X)", "ALL DONE", 30, ["pytest -q"], T1
    )
    assert not (root / "X").exists()


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["go", "--max-iterations", "0"],
         "--max-iterations must be from 1 to 1000, not 0: a loop always has a cap; "
         "for example --max-iterations 8"),
        (["go", "--max-iterations", "lots"],
         "--max-iterations needs a whole number from 1 to 1000, not 'lots': "
         "for example --max-iterations 8"),
        (["go", "--bogus"], f"unknown option --bogus: type {USAGE}"),
        ([], f"the prompt is empty: type {USAGE}"),
        (["--prompt-file", "missing.md"],
         "--prompt-file missing.md: no such file under {root}; give a path relative to the "
         "project root"),
        (["go", "--completion-promise", "<b>"],
         "--completion-promise may not contain '<' or '>': use plain words, e.g. DONE"),
    ],
)
def test_start_grammar_errors(capsys: pytest.CaptureFixture[str], root: Path, store: LoopStore,
                              words: list[str], message: str) -> None:
    assert run(capsys, "start", "--project", str(root), "--session", SESSION, *words) == (
        2, "", f"ralph start: {message.format(root=root)}\n"
    )
    assert files_under(store.paths.base) == []


def test_start_twice_is_refused(capsys: pytest.CaptureFixture[str], root: Path,
                                store: LoopStore) -> None:
    store.save(make_state(root))
    assert run(capsys, "start", "--project", str(root), "--session", SESSION, "again") == (
        2, "", "ralph start: a Ralph loop is already running in this session (iteration 1/8): "
               "/cancel-ralph first\n",
    )


def test_start_needs_a_valid_session(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    assert run(capsys, "start", "--project", str(root), "--session", "a/b", "go") == (
        2, "",
        "ralph start: not a session id: 'a/b' (see 'ralph start --help')\n",
    )
