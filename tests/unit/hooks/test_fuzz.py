"""Arbitrary input never breaks the hook contract: exit 0, one JSON object or nothing, and an
active loop's state is never lost (it stays active, or is archived, or is moved aside)."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from finesse.hooks import prompt_submit, stop
from finesse.hooks.boundary import run_hook
from finesse.state.store import LoopStore
from tests.helpers.launch import PROMPT_SUBMIT, STOP, hook_env, run_launcher
from tests.helpers.states import OTHER_SESSION, SESSION, make_state, store_for

Handler = Callable[[bytes, Mapping[str, str], str], "dict[str, Any] | None"]

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=3),
    max_leaves=6,
)
COMMANDS = st.sampled_from([
    "/ralph-loop", "/finesse:ralph-loop", "/cancel-ralph", "/finesse:cancel-ralph",
    "/ralph-status", "/ralph-help", "/ralph-loopy", "",
])
ARG_WORDS = st.one_of(
    st.text(max_size=12),
    st.sampled_from([
        "go", "'quoted words'", '"', "'", "--max-iterations", "--max-iterations=0", "3",
        "--completion-promise", "DONE", "--prompt-file", "README.md", "--verify", "true",
        "--completion-promise-file", "--", "--bogus", "$(touch PWNED)", "`touch PWNED`", ";",
    ]),
)
COMMAND_LINES = st.tuples(COMMANDS, st.lists(ARG_WORDS, max_size=5)).map(
    lambda parts: " ".join([parts[0], *parts[1]])
)
PROMPTS = st.one_of(COMMAND_LINES, st.text(max_size=30), JSON_VALUES)
REPLIES = st.one_of(
    st.sampled_from(["<promise>DONE</promise>", "`<promise>DONE</promise>`", "working", ""]),
    st.text(max_size=40),
    JSON_VALUES,
)
SESSIONS = st.one_of(st.sampled_from([SESSION, SESSION, OTHER_SESSION, "../x", ""]),
                     st.text(max_size=10), JSON_VALUES)


def hook_objects(root: Path) -> st.SearchStrategy[dict[str, Any]]:
    """Hook-shaped JSON objects: the real fields with odd values, plus extra keys."""
    paths = st.one_of(st.sampled_from([str(root / "README.md"), str(root), "/nonexistent"]),
                      st.text(max_size=10))
    return st.fixed_dictionaries(
        {},
        optional={
            "session_id": SESSIONS,
            "prompt": PROMPTS,
            "last_assistant_message": REPLIES,
            "transcript_path": st.one_of(paths, JSON_VALUES),
            "cwd": st.one_of(st.sampled_from([str(root), "/", "sub", ""]), JSON_VALUES),
            "stop_hook_active": JSON_VALUES,
            "hook_event_name": st.sampled_from(["Stop", "UserPromptSubmit", "SubagentStop"]),
            "permission_mode": JSON_VALUES,
            "extra_field": JSON_VALUES,
        },
    )


def well_typed_objects(root: Path) -> st.SearchStrategy[dict[str, Any]]:
    """What Claude Code really sends, with odd strings: these reach the loop's code paths."""
    strings = st.text(max_size=40)
    return st.fixed_dictionaries(
        {
            "session_id": st.sampled_from([SESSION, SESSION, SESSION, OTHER_SESSION]),
            "cwd": st.sampled_from([str(root), str(root / "sub"), "/"]),
            "prompt": st.one_of(COMMAND_LINES, COMMAND_LINES, strings),
            "last_assistant_message": st.one_of(
                st.sampled_from(["<promise>DONE</promise>", "`<promise>DONE</promise>`"]),
                strings,
            ),
        },
        optional={
            "transcript_path": st.sampled_from([str(root / "README.md"), str(root),
                                                "/nonexistent", ""]),
            "stop_hook_active": st.booleans(),
            "extra_field": JSON_VALUES,
        },
    )


def inputs(root: Path) -> st.SearchStrategy[bytes]:
    def encode(data: object) -> bytes:
        return json.dumps(data).encode()

    return st.one_of(
        st.binary(max_size=200),
        JSON_VALUES.map(encode),
        hook_objects(root).map(encode),
        well_typed_objects(root).map(encode),
        well_typed_objects(root).map(encode),
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz") / "project"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "README.md").write_text("# project\n")
    return root


def reset(root: Path, with_loop: bool) -> tuple[LoopStore, str | None]:
    store = store_for(root)
    shutil.rmtree(store.paths.base, ignore_errors=True)
    if not with_loop:
        return store, None
    state = make_state(root, max_iterations=3)
    store.save(state)
    return store, state.loop_id


def assert_not_lost(store: LoopStore, loop_id: str | None) -> None:
    if loop_id is None:
        return
    active = store.paths.loop_file(SESSION)
    archived = store.paths.history / f"{loop_id}.json"
    moved = list(store.paths.corrupt.glob(f"{SESSION}.*.json"))
    assert active.exists() or archived.exists() or moved, "the active loop's state was lost"


def assert_one_json_object_or_nothing(stdout: str) -> None:
    if stdout == "":
        return
    assert stdout.endswith("\n") and stdout.count("\n") == 1, stdout
    assert isinstance(json.loads(stdout), dict), stdout


# --- in process -------------------------------------------------------------------------------

HANDLERS: list[tuple[str, Handler]] = [
    ("Stop", stop.handle),
    ("UserPromptSubmit", prompt_submit.handle),
]


@pytest.mark.parametrize(("hook_event", "handler"), HANDLERS, ids=["stop", "prompt_submit"])
@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), with_loop=st.booleans())
def test_handlers_keep_the_contract(
    project: Path, hook_event: str, handler: Handler, data: st.DataObject, with_loop: bool
) -> None:
    store, loop_id = reset(project, with_loop)
    raw = data.draw(inputs(project), label="stdin")
    env = {"CLAUDE_PROJECT_DIR": str(project)}
    output = handler(raw, env, str(project))
    assert output is None or isinstance(output, dict)
    event(f"output keys: {sorted(output) if output else None}")
    if output is not None:
        assert json.loads(json.dumps(output)) == output
    out = io.StringIO()
    reset(project, with_loop)
    assert run_hook(hook_event, handler, io.BytesIO(raw), out, env, str(project)) == 0
    assert_one_json_object_or_nothing(out.getvalue())
    assert_not_lost(store, loop_id)
    assert not (project / "PWNED").exists()


# --- through the launchers --------------------------------------------------------------------


def _launcher_case(project: Path, script: Path, raw: bytes, with_loop: bool) -> None:
    store, loop_id = reset(project, with_loop)
    result = run_launcher(script, raw, hook_env(project), project)
    assert result.code == 0
    assert_one_json_object_or_nothing(result.stdout)
    assert_not_lost(store, loop_id)
    assert not (project / "PWNED").exists()


LAUNCHERS = [STOP, PROMPT_SUBMIT]
_FAST = settings(max_examples=30, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
_SLOW = settings(max_examples=300, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.mark.parametrize("script", LAUNCHERS, ids=["stop", "prompt_submit"])
@_FAST
@given(data=st.data(), with_loop=st.booleans())
def test_launchers_keep_the_contract(
    project: Path, script: Path, data: st.DataObject, with_loop: bool
) -> None:
    _launcher_case(project, script, data.draw(inputs(project), label="stdin"), with_loop)


@pytest.mark.slow
@pytest.mark.parametrize("script", LAUNCHERS, ids=["stop", "prompt_submit"])
@_SLOW
@given(data=st.data(), with_loop=st.booleans())
def test_launchers_keep_the_contract_many(
    project: Path, script: Path, data: st.DataObject, with_loop: bool
) -> None:
    _launcher_case(project, script, data.draw(inputs(project), label="stdin"), with_loop)
