"""`ralph statusline` as Claude Code runs it (finesse.hooks.statusline): the line it prints
for the status line's JSON, the quota figures it records for --stop-at-quota, and its chain
to a status line it replaced. Inputs shaped as Claude Code 2.1.328 sends them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from finesse.hooks.statusline import describe, main, quota_of, render
from finesse.models import Budgets, IterationRecord
from finesse.results import CommandResult, ModelUsage, Quota
from finesse.state.paths import StatePaths
from finesse.state.quota import read_quota
from finesse.state.store import LoopStore
from tests.helpers.states import SESSION, T0, T1, command_result, make_state

PLUGIN = Path(__file__).resolve().parents[3]
RESETS_5H, RESETS_7D = 1796156546, 1796584946
NOW = datetime.fromtimestamp(RESETS_5H, UTC) - timedelta(hours=1)


def status_input(root: Path, *, session: str = SESSION, limits: bool = True) -> bytes:
    """What Claude Code gives its status line command (fields seen in 2.1.328)."""
    data: dict[str, object] = {
        "session_id": session, "transcript_path": str(root / "t.jsonl"), "cwd": str(root),
        "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
        "workspace": {"current_dir": str(root), "project_dir": str(root), "added_dirs": []},
        "version": "2.1.328",
        "cost": {"total_cost_usd": 0.06075, "total_duration_ms": 39970},
        "context_window": {"used_percentage": 17, "remaining_percentage": 83},
    }
    if limits:
        data["rate_limits"] = {"five_hour": {"used_percentage": 42, "resets_at": RESETS_5H},
                               "seven_day": {"used_percentage": 13.7, "resets_at": RESETS_7D}}
    return json.dumps(data).encode()


def spent_loop(root: Path, **fields: object) -> object:
    usage = ModelUsage("claude-sonnet-4-5", input=1000, output=2000, cache_creation=500)
    iterations = [IterationRecord(number=n, started_at=T0, ended_at=T1, result="continue",
                                  usage=[usage], cost=0.5) for n in (1, 2, 3)]
    return make_state(root, iteration=4, iterations=iterations, **fields)


def test_the_line_with_a_loop_and_windows(git_repo: Path, store: LoopStore) -> None:
    store.save(spent_loop(git_repo, last_verification=[command_result("pytest -q", 0)]))
    assert render(status_input(git_repo), {}, NOW, None) == (
        "ralph 4/8 · verify green · 10.5k tok ~$1.50 est · 5h 42% · 7d 13.7%")


def test_the_line_says_red_and_what_an_api_key_leaves_out(git_repo: Path,
                                                          store: LoopStore) -> None:
    red: list[CommandResult] = [command_result("pytest -q", 0), command_result("ruff .", 1)]
    store.save(spent_loop(git_repo, last_verification=red))
    assert render(status_input(git_repo, limits=False), {}, NOW, None) == (
        "ralph 4/8 · verify red · 10.5k tok ~$1.50 est")


def test_no_loop_in_this_session(git_repo: Path, store: LoopStore) -> None:
    store.save(spent_loop(git_repo))
    other = "7b1f9a52-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
    assert render(status_input(git_repo, session=other), {}, NOW, None) == (
        "ralph: no loop · 5h 42% · 7d 13.7%")


def test_windows_are_recorded_for_the_projects_loops(git_repo: Path, store: LoopStore) -> None:
    store.save(make_state(git_repo, budgets=Budgets(stop_at_quota=80)))
    render(status_input(git_repo), {}, NOW, None)
    assert read_quota(store.paths, NOW) == Quota(
        at=NOW, five_hour=42, five_hour_resets_at=datetime.fromtimestamp(RESETS_5H, UTC),
        seven_day=13.7, seven_day_resets_at=datetime.fromtimestamp(RESETS_7D, UTC))
    # A window whose reset time has passed is empty again.
    later = read_quota(store.paths, datetime.fromtimestamp(RESETS_5H + 1, UTC))
    assert later == Quota(
        at=NOW, five_hour=None, five_hour_resets_at=datetime.fromtimestamp(RESETS_5H, UTC),
        seven_day=13.7, seven_day_resets_at=datetime.fromtimestamp(RESETS_7D, UTC))


def test_nothing_is_written_to_a_project_without_loops(git_repo: Path) -> None:
    assert render(status_input(git_repo), {}, NOW, None) == "ralph: no loop · 5h 42% · 7d 13.7%"
    assert not (git_repo / ".claude").exists()


@pytest.mark.parametrize(
    "raw",
    [b"", b"not json", b"[]", b'{"session_id": "../../etc"}', b'{"rate_limits": []}',
     b'{"rate_limits": {"five_hour": {"used_percentage": "lots", "resets_at": true}}}',
     b"[" * 100_000 + b"]" * 100_000],
)
def test_any_input_gives_a_line(raw: bytes, git_repo: Path) -> None:
    out = io.StringIO()
    env_dir = {"CLAUDE_PROJECT_DIR": str(git_repo)}
    assert render(raw, env_dir, NOW, None).startswith("ralph: no loop")
    assert main([], stdin=io.BytesIO(raw), stdout=out) == 0
    assert out.getvalue().count("\n") == 1


def test_quota_of_reads_only_numbers() -> None:
    assert quota_of({}, NOW) is None
    assert quota_of({"rate_limits": {"five_hour": {"used_percentage": True}}}, NOW) is None
    found = quota_of({"rate_limits": {"seven_day": {"used_percentage": 3, "resets_at": -1}}},
                     NOW)
    assert found == Quota(at=NOW, seven_day=3.0)


def test_describe_token_units() -> None:
    loop = make_state(Path("/p"), iterations=[IterationRecord(
        number=1, started_at=T0, ended_at=T1, result="continue",
        usage=[ModelUsage("m", input=2_345_678)], cost=7.0)])
    assert describe(loop, None) == "ralph 1/8 · 2.3M tok ~$7.00 est"
    assert describe(make_state(Path("/p")), None) == "ralph 1/8 · 0 tok ~$0.00 est"


def test_a_chained_status_line_comes_first(git_repo: Path, tmp_path: Path) -> None:
    theirs = tmp_path / "theirs.py"
    theirs.write_text("import json, sys\nd = json.load(sys.stdin)\n"
                      "print('mine: ' + d['model']['display_name'])\nprint('second line')\n")
    chain = f"{sys.executable} {theirs}"
    assert render(status_input(git_repo), {}, NOW, chain) == (
        "mine: Sonnet 4.5 | ralph: no loop · 5h 42% · 7d 13.7%")
    assert render(status_input(git_repo), {}, NOW, "exit 3") == (
        "ralph: no loop · 5h 42% · 7d 13.7%")


def test_as_claude_code_runs_it(git_repo: Path, store: LoopStore) -> None:
    # bin/ralph statusline: the fast path, standard library only (python3 -S, no venv).
    store.save(spent_loop(git_repo, budgets=Budgets(stop_at_quota=80)))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-S", str(PLUGIN / "bin" / "ralph"), "statusline"],
                          input=status_input(git_repo), capture_output=True, env=env,
                          cwd=git_repo, timeout=60)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode() == (
        "ralph 4/8 · 10.5k tok ~$1.50 est · 5h 42% · 7d 13.7%\n")
    recorded = read_quota(store.paths, NOW)
    assert recorded == Quota(  # `at`: the fast path's own clock
        at=recorded.at if recorded else NOW, five_hour=42,
        five_hour_resets_at=datetime.fromtimestamp(RESETS_5H, UTC), seven_day=13.7,
        seven_day_resets_at=datetime.fromtimestamp(RESETS_7D, UTC))


def test_read_quota_passes_over_a_fifo(tmp_path: Path) -> None:
    paths = StatePaths(tmp_path)
    paths.base.mkdir(parents=True)
    os.mkfifo(paths.base / "quota.json")
    assert read_quota(paths, NOW) is None
