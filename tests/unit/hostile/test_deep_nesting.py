"""A JSON or YAML file nested 100,000 deep is a corrupt file like any other: moved aside
(our own files, under their lock) or refused in one line (the user's), never a traceback."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from finesse.cli.finesse import cli as finesse_cli
from finesse.state.store import LoopStore
from tests.helpers.cli import run as ralph
from tests.helpers.states import SESSION, make_state

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a": ' + DEEP + "}"


def _cache(project: Path, text: str) -> Path:
    path = project / ".finesse" / "exploration-cache.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("text", [DEEP, DEEP_OBJECT, '{"version": ' + DEEP + "}"])
@pytest.mark.parametrize("command", [["cache", "show"], ["cache", "prune"]])
def test_a_deep_cache_is_moved_aside_as_unreadable(git_repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                   text: str, command: list[str]) -> None:
    monkeypatch.chdir(git_repo)
    path = _cache(git_repo, text)
    result = CliRunner().invoke(finesse_cli, command, prog_name="finesse")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    [moved] = path.parent.glob("exploration-cache.json.corrupt-*")
    assert moved.read_text() == text  # nothing lost
    assert "the exploration cache was unreadable" in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_a_deep_finesse_config_is_refused_in_one_line(git_repo: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(git_repo)
    (git_repo / ".finesse").mkdir()
    (git_repo / ".finesse" / "config.json").write_text(DEEP_OBJECT)
    result = CliRunner().invoke(finesse_cli, ["cache", "show"], prog_name="finesse")
    assert result.exit_code != 0 and isinstance(result.exception, SystemExit)
    assert result.stderr.count("\n") == 1 and "config.json" in result.stderr


def test_statusline_install_refuses_deep_settings_and_leaves_them(
        capsys: pytest.CaptureFixture[str], root: Path) -> None:
    path = root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(DEEP_OBJECT)
    code, out, err = ralph(capsys, "statusline", "--install", "--project", str(root))
    assert code != 0 and out == ""
    assert err == (f"ralph statusline: {path} is not valid JSON (nested too deeply): fix it "
                   "by hand first\n")
    assert path.read_text() == DEEP_OBJECT


def test_a_deep_loop_state_is_moved_aside(git_repo: Path, store: LoopStore) -> None:
    store.save(make_state(git_repo))
    store.paths.loop_file(SESSION).write_text(DEEP_OBJECT)
    from finesse.errors import StateError

    with store.locked(SESSION):
        try:
            state = store.load(SESSION)
        except StateError as err:
            assert "\n" not in str(err)
        else:
            assert state is None
    assert not store.paths.loop_file(SESSION).exists() or (
        store.paths.loop_file(SESSION).read_text() == DEEP_OBJECT)


@pytest.mark.parametrize("event", ["stop", "prompt", "session-start", "pre-tool-use",
                                   "subagent-stop"])
def test_every_hook_passes_over_deep_input(git_repo: Path, event: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from finesse.hooks import entry

    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(git_repo))
    (git_repo / ".claude" / "ralph").mkdir(parents=True)
    assert entry.run(event, io.BytesIO(DEEP_OBJECT.encode())) == 0


def test_a_deep_yaml_spec_is_refused_in_one_line(tmp_path: Path) -> None:
    from finesse.authoring.spec import load_spec
    from finesse.errors import FinesseError

    spec = tmp_path / "spec.yaml"
    spec.write_text("task: " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(FinesseError) as refused:
        load_spec(spec)
    assert "\n" not in str(refused.value)
    assert str(refused.value).endswith("is refused: it nests deeper than 100 levels")


def test_a_spec_whose_aliases_expand_past_the_limit_is_refused_in_one_line(
        tmp_path: Path) -> None:
    from finesse.authoring.spec import load_spec
    from finesse.errors import UsageError

    # The file: a 4 KB string, a list of 20 aliases to it, that list in 25 phases.
    phases = "".join(f"  - name: phase {n}\n    steps: *many\n" for n in range(25))
    text = ("notes:\n  - &big " + "x" * 4000 + "\n  - &many [" + ", ".join(["*big"] * 20)
            + "]\nphases:\n" + phases)
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    assert len(text) < 6000
    with pytest.raises(UsageError) as refused:
        load_spec(spec)
    from finesse.support.files import shown_name

    assert str(refused.value) == (
        f"the spec {shown_name(spec)} is refused: its aliases (*name) expand past the limit "
        "of 1024 KiB of text: write the repeated text once, or shorten it")


def test_a_spec_whose_alias_contains_itself_is_refused(tmp_path: Path) -> None:
    from finesse.authoring.spec import load_spec
    from finesse.errors import UsageError

    spec = tmp_path / "spec.yaml"
    spec.write_text("task: &loop [*loop]\n")
    with pytest.raises(UsageError, match="an alias refers to a node that contains it"):
        load_spec(spec)


def test_a_few_aliases_still_load(tmp_path: Path) -> None:
    from finesse.authoring.spec import load_spec_data

    spec = tmp_path / "spec.yaml"
    spec.write_text("a: &x [1, 2]\nb: *x\n")
    assert load_spec_data(spec) == {"a": [1, 2], "b": [1, 2]}
