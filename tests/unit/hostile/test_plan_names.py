"""One rule for what a plan folder and its waves are called, shared by `finesse new`,
`finesse validate` and `ralph run --graph`: what validates runs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from finesse.authoring.workflows.folder import load_execution_graph, validate_workflow_folder
from finesse.authoring.workflows.model import GraphError
from finesse.authoring.workflows.names import (
    branch_component_problem,
    wave_folder,
    wave_number,
)
from tests.unit.authoring.workflows.plans import write_folder

REFUSED = ["a..b", "x.lock", "@{u}", "x~1", "a:b", "a b", "a^b", "a?b", "a*b", "a[b", "a\\b",
           ".hidden", "", "tab\there", "del\x7f"]
# As the middle of ralph/<session>/<task>, git takes these (`-x`, `x.` and `@` alone only
# at the ends of a whole name).
ACCEPTED = ["build-todo-api", "v1.2", "a_b", "UPPER", "x@y", "caf\u00e9", "a.b.c", "-dash",
            "ends.", "@"]


def _git_accepts(name: str) -> bool:
    done = subprocess.run(["git", "check-ref-format", "--branch", f"ralph/{name}/task"],
                          capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.parametrize("name", REFUSED + ACCEPTED)
def test_the_rule_is_gits(name: str) -> None:
    assert (branch_component_problem(name) is None) == _git_accepts(name), name


def test_a_nul_is_refused_though_git_cannot_be_asked() -> None:
    assert branch_component_problem("a\x00b") is not None  # no argv can carry a NUL to git


@pytest.mark.parametrize(("folder", "number"), [
    ("wave-1", 1), ("wave-12", 12), ("wave-01", None), ("wave-0", None), ("wave-", None),
    ("wave-1a", None), ("wave-\u0661", None), ("Wave-1", None), ("wave-" + "9" * 400, None)])
def test_a_wave_folder_is_named_by_its_number(folder: str, number: int | None) -> None:
    assert wave_number(folder) == number
    if number is not None:
        assert wave_folder(number) == folder


@pytest.mark.parametrize("name", ["a..b", "x.lock", "@{u}", "x~1", "a:b"])
def test_validate_refuses_a_plan_folder_git_cannot_branch_and_the_runner_agrees(
        tmp_path: Path, name: str) -> None:
    good = write_folder(tmp_path)
    folder = good.with_name(name)
    good.rename(folder)
    report = validate_workflow_folder(folder)
    assert not report.passed
    assert any("cannot name the branches ralph run --graph makes" in e for e in report.errors)
    with pytest.raises(GraphError, match="cannot name the branches"):
        load_execution_graph(folder)


def test_a_wave_01_folder_is_refused_by_validate_as_the_runner_cannot_find_it(
        tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    shutil.move(folder / "wave-1", folder / "wave-01")
    report = validate_workflow_folder(folder)
    assert not report.passed
    assert any("wave-01/: a wave's folder is wave-1/" in e for e in report.errors), report.errors
    with pytest.raises(GraphError):
        load_execution_graph(folder)


def test_a_good_folder_validates_and_loads(tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    assert validate_workflow_folder(folder).passed
    assert load_execution_graph(folder).waves


# --- finesse new --out-dir, for a decomposed spec ------------------------------------------

TODO_SPEC = Path(__file__).resolve().parents[1] / "authoring" / "specs" / "todo-api.yaml"


@pytest.mark.parametrize(("out_dir", "says"), [
    ("my plans", "--out-dir 'my plans': a decomposed plan's folder is named in its commands "
                 "unquoted; use no spaces or quotes (e.g. --out-dir finesse-plans)"),
    ("it's", "--out-dir \"it's\": a decomposed plan's folder is named in its commands "
             "unquoted; use no spaces or quotes (e.g. --out-dir finesse-plans)"),
    ("../../outside", "is outside the project"),
    ("/absolute/elsewhere", "--out-dir /absolute/elsewhere is outside the project"),
])
def test_new_refuses_an_out_dir_the_commands_cannot_name_in_one_line(
        tmp_path: Path, out_dir: str, says: str) -> None:
    from click.testing import CliRunner

    from finesse.cli.finesse import cli

    project = tmp_path / "a" / "b" / "project"
    project.mkdir(parents=True)
    result = CliRunner().invoke(cli, ["new", str(TODO_SPEC), "--project", str(project),
                                      "--out-dir", out_dir], prog_name="finesse")
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith("finesse new: ") and says in result.stderr
    assert "ValidationError" not in result.stderr
    assert not (tmp_path / "outside").exists() and not Path("/absolute").exists()
    assert list(project.iterdir()) == []


def test_new_takes_an_absolute_out_dir_inside_the_project(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from finesse.cli.finesse import cli

    result = CliRunner().invoke(cli, ["new", str(TODO_SPEC), "--project", str(tmp_path),
                                      "--out-dir", str(tmp_path / "plans")],
                                prog_name="finesse")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "plans" / "build-todo-api-with-auth" / "execution-graph.md").is_file()


# --- the exploration cache keys entries as seed 000 does ----------------------------------


def test_the_seeds_cache_example_loads_and_keeps_its_key(git_repo: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from click.testing import CliRunner

    from finesse.cli.finesse import cli
    from tests.unit.authoring.test_cache import commit, head

    commit(git_repo, {"src/auth/jwt.py": "def validate(token): ...\n"})
    monkeypatch.chdir(git_repo)
    path = git_repo / ".finesse" / "exploration-cache.json"
    path.parent.mkdir()
    written = {"version": 1, "entries": {"src/auth:jwt-validation": {
        "summary": "Tokens are checked in src/auth/jwt.py.",
        "referenced_files": ["src/auth/jwt.py"], "keywords": ["jwt"],
        "directory_scope": "src/auth", "last_confirmed": "2026-11-30T07:00:00Z",
        "commit_hash": head(git_repo)}}}
    path.write_text(json.dumps(written))
    result = CliRunner().invoke(cli, ["cache", "show", "--json"], prog_name="finesse")
    assert result.exit_code == 0 and result.stderr == "", result.output
    assert list(json.loads(result.stdout)["cache"]["entries"]) == ["src/auth:jwt-validation"]
    assert list(path.parent.glob("*.corrupt-*")) == []
