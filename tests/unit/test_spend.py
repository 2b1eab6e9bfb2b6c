"""finesse.spend and the engine's budget and quota rules, in memory: prices by model family,
estimated costs, running totals, and the resumable `budget` and `quota` ends."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from finesse.engine import decide
from finesse.models import Budgets, IterationRecord
from finesse.record import replace
from finesse.recording import RESUMABLE
from finesse.results import CommandResult, ModelUsage, Price, Quota
from finesse.spend import (
    DEFAULT_PRICES,
    PRICES_DATED,
    cost,
    dollars,
    over_budget,
    price_for,
    raised_budgets,
    totals,
)
from tests.helpers.states import T0, T1, command_result, make_state, observed

ROOT = Path("/project")
SONNET = ModelUsage("claude-sonnet-4-5-20250929", input=1000, output=2000, cache_creation=3000,
                    cache_read=100_000)


def iteration(number: int, *usage: ModelUsage, cost_: float = 0.0,
              partial: bool = False) -> IterationRecord:
    return IterationRecord(number=number, started_at=T0, ended_at=T0, result="continue",
                           usage=list(usage), cost=cost_, usage_partial=partial)


# --- prices and costs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-opus-5-5", "claude-opus"),  # a newer opus: the family's price
        ("claude-sonnet-4-5-20250929", "claude-sonnet"),
        ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
        ("claude-haiku-4-5", "claude-haiku"),
        ("gpt-oss", "default"),
        ("unknown", "default"),
    ],
)
def test_the_longest_family_prefix_prices_a_model(model: str, family: str) -> None:
    assert price_for(model, DEFAULT_PRICES).family == family


def test_a_projects_prices_replace_the_table() -> None:
    own = [Price("claude-sonnet", 1.0, 2.0, 3.0, 4.0), Price("default", 9.0, 9.0, 9.0, 9.0)]
    assert price_for("claude-sonnet-4-5", own) == own[0]
    assert price_for("claude-opus-4-5", own) == own[1]
    only = [Price("claude-sonnet", 1.0, 2.0, 3.0, 4.0)]  # no default of its own
    assert price_for("claude-opus-4-5", only) == DEFAULT_PRICES[-1]
    assert price_for("claude-opus-4-5", []) == price_for("claude-opus-4-5", DEFAULT_PRICES)


def test_cost_is_each_kind_of_token_at_its_price() -> None:
    # Sonnet: $3 input, $15 output, $3.75 cache write, $0.30 cache read per million tokens.
    assert cost([SONNET], DEFAULT_PRICES) == pytest.approx(
        (1000 * 3 + 2000 * 15 + 3000 * 3.75 + 100_000 * 0.30) / 1_000_000)
    haiku = ModelUsage("claude-haiku-4-5", input=1_000_000)
    assert cost([SONNET, haiku], DEFAULT_PRICES) == pytest.approx(0.07425 + 1.0)
    assert cost([], DEFAULT_PRICES) == 0.0


def test_the_price_table_is_dated_and_dollars_say_estimated() -> None:
    assert PRICES_DATED == "2026-12-01"
    assert dollars(1234.5) == "$1,234.50 (estimated)"
    assert dollars(0.004) == "$0.00 (estimated)"


def test_totals_count_cache_reads_apart() -> None:
    loop = make_state(ROOT, iterations=[iteration(1, SONNET, cost_=0.07),
                                        iteration(2, SONNET, SONNET, cost_=0.14, partial=True),
                                        iteration(3)])
    spent = totals(loop)
    assert (spent.billed_tokens, spent.cache_read, spent.partial) == (18_000, 300_000, True)
    assert spent.cost == pytest.approx(0.21)
    assert totals(loop, loop.iterations[:1]).billed_tokens == 6000


# --- budgets --------------------------------------------------------------------------------


def test_over_budget() -> None:
    spent = make_state(ROOT, iterations=[iteration(1, SONNET, cost_=2.5),
                                         iteration(2, SONNET, cost_=2.5)])
    assert over_budget(spent) == ""  # no budget
    assert over_budget(replace(spent, budgets=Budgets(max_tokens=12_001))) == ""
    assert over_budget(replace(spent, budgets=Budgets(max_tokens=12_000))) == (
        "12,000 tokens used (input, cache creation and output), the --max-tokens budget is "
        "12,000")
    assert over_budget(replace(spent, budgets=Budgets(max_cost=5.01))) == ""
    assert over_budget(replace(spent, budgets=Budgets(max_cost=5.0))) == (
        "an estimated $5.00 spent, the --max-cost budget is $5.00 (estimated from token "
        f"prices dated {PRICES_DATED})")
    assert raised_budgets(replace(spent, budgets=Budgets(max_tokens=12_000, max_cost=9.0))) == [
        "--max-tokens 24000"]


def loop_with_budget(**budget: object) -> object:
    # Two iterations made, 12,000 tokens and an estimated $5.00 spent; this is the third.
    return make_state(ROOT, iteration=3, iterations=[iteration(1, SONNET, cost_=2.5),
                                                     iteration(2, SONNET, cost_=2.5)], **budget)


def test_a_budget_spent_ends_the_loop_as_budget_resumable() -> None:
    before = loop_with_budget(budgets=Budgets(max_tokens=15_000))
    decision = decide(before, observed("working", T1, tool_calls=1, usage=[SONNET]))
    assert (decision.action, decision.state.outcome) == ("end", "budget")
    assert decision.message == (
        "Ralph loop stopped at iteration 3/8: its budget is spent: 18,000 tokens used "
        "(input, cache creation and output), the --max-tokens budget is 15,000.")
    assert decision.state.iterations[-1].usage == [SONNET]
    assert decision.state.iterations[-1].cost == pytest.approx(0.07425)
    assert "budget" in RESUMABLE


def test_under_budget_the_loop_goes_on_and_records_the_spend() -> None:
    before = loop_with_budget(budgets=Budgets(max_tokens=18_001, max_cost=5.08))
    decision = decide(before, observed("working", T1, tool_calls=1, usage=[SONNET]))
    assert decision.action == "continue"
    assert totals(decision.state).billed_tokens == 18_000


def test_the_cost_budget_counts_this_iterations_estimate() -> None:
    before = loop_with_budget(budgets=Budgets(max_cost=5.07))
    decision = decide(before, observed("working", T1, tool_calls=1, usage=[SONNET]))
    assert decision.state.outcome == "budget"
    assert "an estimated $5.07 spent, the --max-cost budget is $5.07" in decision.message


def test_a_verified_success_beats_a_spent_budget() -> None:
    before = replace(loop_with_budget(budgets=Budgets(max_tokens=100)), verify=["pytest -q"])
    green = [command_result("pytest -q", 0)]
    done = decide(before, observed("<promise>DONE</promise>", T1, tool_calls=1,
                                      usage=[SONNET], verification=green))
    assert done.state.outcome == "success"


def test_a_rejected_claim_over_budget_ends_as_budget() -> None:
    before = replace(loop_with_budget(budgets=Budgets(max_tokens=100)), verify=["pytest -q"])
    red: list[CommandResult] = [command_result("pytest -q", 1)]
    decision = decide(before, observed("<promise>DONE</promise>", T1,
                                          tool_calls=1, usage=[SONNET], verification=red))
    assert decision.state.outcome == "budget"
    assert decision.state.iterations[-1].result == "rejected"


def test_blocked_beats_a_spent_budget() -> None:
    decision = decide(loop_with_budget(budgets=Budgets(max_tokens=100)),
                      observed("No key.\nRESULT: BLOCKED", T1, tool_calls=1, usage=[SONNET]))
    assert decision.state.outcome == "blocked"


def test_a_budget_comes_before_the_cap() -> None:
    before = replace(loop_with_budget(budgets=Budgets(max_tokens=100)), iteration=8)
    decision = decide(before, observed("working", T1, tool_calls=1, usage=[SONNET]))
    assert decision.state.outcome == "budget"


# --- quota ----------------------------------------------------------------------------------

RESETS = T1 + timedelta(hours=2, minutes=5)


@pytest.mark.parametrize(
    ("quota", "message"),
    [
        (Quota(T1, five_hour=85, five_hour_resets_at=RESETS),
         "the five-hour usage window is at 85% (--stop-at-quota 80); it resets at "
         f"{RESETS:%Y-%m-%d %H:%M} UTC. Resume after that with /ralph-resume."),
        (Quota(T1, five_hour=80.0),
         "the five-hour usage window is at 80% (--stop-at-quota 80); its reset time is "
         "unknown. Resume after that with /ralph-resume."),
        (Quota(T1, five_hour=12, seven_day=93.5, seven_day_resets_at=RESETS),
         "the weekly usage window is at 93.5% (--stop-at-quota 80); it resets at "
         f"{RESETS:%Y-%m-%d %H:%M} UTC. Resume after that with /ralph-resume."),
    ],
)
def test_a_full_window_ends_the_loop_as_quota(quota: Quota, message: str) -> None:
    before = make_state(ROOT, iteration=2, budgets=Budgets(stop_at_quota=80))
    decision = decide(before, observed("working", T1, tool_calls=1, quota=quota))
    assert (decision.action, decision.state.outcome) == ("end", "quota")
    assert decision.message == f"Ralph loop stopped at iteration 2/8: {message}"
    assert "quota" in RESUMABLE


@pytest.mark.parametrize(
    ("stop_at", "quota"),
    [
        (None, Quota(T1, five_hour=99)),  # no --stop-at-quota
        (80, None),  # the status line never reported
        (80, Quota(T1, five_hour=79.9, seven_day=50)),
        (80, Quota(T1)),  # no windows (an API key)
    ],
)
def test_the_quota_rule_holds_back(stop_at: int | None, quota: Quota | None) -> None:
    before = make_state(ROOT, iteration=2, budgets=Budgets(stop_at_quota=stop_at))
    decision = decide(before, observed("working", T1, tool_calls=1, quota=quota))
    assert decision.action == "continue"
