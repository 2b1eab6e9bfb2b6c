"""finesse.loop.status: what a person is told when a loop starts, its budgets included."""

from __future__ import annotations

import json
from pathlib import Path

from finesse.cli.ralph.statusline import our_command
from finesse.loop.status import start_notes
from finesse.models import Budgets
from tests.helpers.states import make_state

NO_STATUS_LINE = ("warning: --stop-at-quota needs the figures Claude Code gives its status "
                  "line, and no settings file runs `ralph statusline`: run `ralph statusline "
                  "--install` (or the stop will never fire)")


def test_stop_at_quota_without_a_status_line_says_how_to_set_it_up(git_repo: Path) -> None:
    state = make_state(git_repo, budgets=Budgets(stop_at_quota=80))
    assert NO_STATUS_LINE in start_notes(state, [], [])
    for path in (git_repo / ".claude" / "settings.local.json",
                 Path.home() / ".claude" / "settings.json"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"statusLine": {"type": "command",
                                                   "command": our_command(None)}}))
        assert NO_STATUS_LINE not in start_notes(state, [], [])
        path.unlink()
    assert NO_STATUS_LINE not in start_notes(make_state(git_repo), [], [])


def test_a_broken_settings_file_counts_as_no_status_line(git_repo: Path) -> None:
    path = git_repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{oops")
    state = make_state(git_repo, budgets=Budgets(stop_at_quota=50))
    assert NO_STATUS_LINE in start_notes(state, [], [])


def test_a_cost_budget_says_it_is_estimated(git_repo: Path) -> None:
    notes = start_notes(make_state(git_repo, budgets=Budgets(max_cost=12.5)), [], [])
    assert ("--max-cost $12.50: costs are estimated from token prices, not billed amounts"
            in notes)


def test_status_shows_the_spend_and_the_budgets(git_repo: Path) -> None:
    from finesse.loop.status import describe
    from finesse.models import IterationRecord
    from finesse.results import ModelUsage
    from tests.helpers.states import T0, T1

    spent = [IterationRecord(number=n, started_at=T0, ended_at=T1, result="continue",
                             usage=[ModelUsage("claude-sonnet-4-5", 1000, 500, 500, 9000)],
                             cost=0.75) for n in (1, 2)]
    state = make_state(git_repo, iteration=3, iterations=spent,
                       budgets=Budgets(max_tokens=10_000, max_cost=5.0, stop_at_quota=80))
    lines = describe(state, T1).splitlines()
    assert "spend: 4,000 tokens (+18,000 cache reads), $1.50 (estimated)" in lines
    assert ("budget: 4,000 of 10,000 tokens; $1.50 of $5.00 (estimated); stops at 80% of the "
            "five-hour or weekly window") in lines
    plain = describe(make_state(git_repo), T1)
    assert "spend:" not in plain and "budget:" not in plain
