"""What a loop spends: tokens per iteration and their estimated cost, the budgets that stop
it, and the receipts in its report. Pure: the Stop hook reads the usage from the transcript
(`finesse.support.usage`) and the quota from the status line's record.

Costs are **estimated**, never billed amounts: the usage Claude Code records for each API
call, priced with the table below (US dollars per million tokens, by model family, as
published by Anthropic; the table's date is PRICES_DATED), or with the prices a project sets
in `.finesse/config.json` under `prices`. Subscription plans are not billed per token at all.
"""

from __future__ import annotations

from typing import Any

from finesse.models import IterationRecord, LoopState
from finesse.record import Record
from finesse.results import ModelUsage, Price

PRICES_DATED = "2026-12-01"
# Family prefix -> (input, output, cache write, cache read) dollars per million tokens. The
# longest prefix of a model id wins; a model of no known family is priced as `default`.
DEFAULT_PRICES: tuple[Price, ...] = (
    Price("claude-opus-4-5", 5.0, 25.0, 6.25, 0.50),
    Price("claude-opus-4-1", 15.0, 75.0, 18.75, 1.50),
    Price("claude-opus-4-0", 15.0, 75.0, 18.75, 1.50),
    Price("claude-opus-4-2", 15.0, 75.0, 18.75, 1.50),
    Price("claude-opus", 5.0, 25.0, 6.25, 0.50),
    Price("claude-sonnet", 3.0, 15.0, 3.75, 0.30),
    Price("claude-3-7-sonnet", 3.0, 15.0, 3.75, 0.30),
    Price("claude-haiku", 1.0, 5.0, 1.25, 0.10),
    Price("claude-3-5-haiku", 0.80, 4.0, 1.0, 0.08),
    Price("default", 3.0, 15.0, 3.75, 0.30),
)
MILLION = 1_000_000


def price_for(model: str, prices: tuple[Price, ...] | list[Price]) -> Price:
    table = list(prices) or list(DEFAULT_PRICES)
    matching = [price for price in table if price.family != "default"
                and model.startswith(price.family)]
    if matching:
        return max(matching, key=lambda price: len(price.family))
    return next((price for price in table if price.family == "default"), DEFAULT_PRICES[-1])


def cost(usage: list[ModelUsage], prices: tuple[Price, ...] | list[Price]) -> float:
    """Estimated dollars for these tokens."""
    total = 0.0
    for entry in usage:
        price = price_for(entry.model, prices)
        total += (entry.input * price.input + entry.output * price.output
                  + entry.cache_creation * price.cache_write
                  + entry.cache_read * price.cache_read) / MILLION
    return total


class Totals(Record):
    billed_tokens: int  # input + cache creation + output: what --max-tokens counts
    cache_read: int
    cost: float  # estimated dollars
    partial: bool  # some iteration's usage could not be read whole


def totals(state: LoopState, iterations: list[IterationRecord] | None = None) -> Totals:
    chosen = state.iterations if iterations is None else iterations
    usage = [usage for entry in chosen for usage in entry.usage]
    return Totals(
        billed_tokens=sum(entry.billed for entry in usage),
        cache_read=sum(entry.cache_read for entry in usage),
        cost=sum(entry.cost for entry in chosen),  # each priced when it ended
        partial=any(entry.usage_partial for entry in chosen),
    )


class Receipt(Record):
    """What a loop spent, as its report and `ralph report --json` show it."""

    rows: list[tuple[IterationRecord, Totals]]  # each iteration with its own totals
    total: Totals
    to_green: float | None  # the whole cost of a verified success, else None
    rejected: int  # completion claims the verification rejected
    rejected_cost: float

    def as_dict(self) -> dict[str, Any]:
        def figures(part: Totals) -> dict[str, Any]:
            return {"tokens": part.billed_tokens, "cache_read_tokens": part.cache_read,
                    "estimated_cost_usd": round(part.cost, 6)}

        return {
            "estimated": True, "prices_dated": PRICES_DATED,
            "iterations": [{"iteration": entry.number, "result": entry.result, **figures(part)}
                           for entry, part in self.rows],
            "total": {**figures(self.total), "partial": self.total.partial},
            "cost_to_green_usd": None if self.to_green is None else round(self.to_green, 6),
            "rejected_claims": {"count": self.rejected,
                                "estimated_cost_usd": round(self.rejected_cost, 6)},
        }


def receipt(state: LoopState) -> Receipt:
    rejected = [entry for entry in state.iterations if entry.result == "rejected"]
    whole = totals(state)
    return Receipt(
        rows=[(entry, totals(state, [entry])) for entry in state.iterations],
        total=whole,
        to_green=whole.cost if state.outcome == "success" and state.verified else None,
        rejected=len(rejected),
        rejected_cost=totals(state, rejected).cost,
    )


def over_budget(state: LoopState) -> str:
    """Why the loop's spend has reached a budget, or ""."""
    spent = totals(state)
    if state.budgets.max_tokens is not None and spent.billed_tokens >= state.budgets.max_tokens:
        return (f"{spent.billed_tokens:,} tokens used (input, cache creation and output), the "
                f"--max-tokens budget is {state.budgets.max_tokens:,}")
    if state.budgets.max_cost is not None and spent.cost >= state.budgets.max_cost:
        return (f"an estimated ${spent.cost:,.2f} spent, the --max-cost budget is "
                f"${state.budgets.max_cost:,.2f} (estimated from token prices dated "
                f"{PRICES_DATED})")
    return ""


def raised_budgets(state: LoopState) -> list[str]:
    """The budget options that leave room to go on after a `budget` stop: each budget
    spent is doubled (or set just above the spend, if that is more)."""
    spent = totals(state)
    raised = []
    if state.budgets.max_tokens is not None and spent.billed_tokens >= state.budgets.max_tokens:
        raised.append(f"--max-tokens {max(state.budgets.max_tokens * 2, spent.billed_tokens + 1)}")
    if state.budgets.max_cost is not None and spent.cost >= state.budgets.max_cost:
        amount = max(state.budgets.max_cost * 2, spent.cost + 0.01)
        raised.append(f"--max-cost {amount:.2f}".rstrip("0").rstrip("."))
    return raised


def dollars(amount: float) -> str:
    return f"${amount:,.2f} (estimated)"
