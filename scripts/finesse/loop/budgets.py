"""The budget options of a loop: `--max-tokens N`, `--max-cost USD` (estimated from token
prices) and `--stop-at-quota PERCENT` (of the plan's five-hour or weekly window), parsed
and checked; `finesse.spend` applies them."""

from __future__ import annotations

import re

from finesse.errors import UsageError
from finesse.loop.words import parse_count
from finesse.models import MAX_COST_EVER, MAX_TOKENS_EVER, Budgets

MAX_TOKENS_CEILING = MAX_TOKENS_EVER  # a loop file holding more is corrupt
MAX_COST_CEILING = MAX_COST_EVER
_MONEY = re.compile(r"\$?([0-9]+(?:\.[0-9]{1,2})?)")


def single(values: dict[str, list[str]], flag: str) -> str | None:
    given = values.get(flag)
    if not given:
        return None
    if len(given) > 1:
        raise UsageError(f"{flag} was given {len(given)} times: give it once")
    return given[0]


def parse_budgets(values: dict[str, list[str]]) -> Budgets:
    tokens = single(values, "--max-tokens")
    cost = single(values, "--max-cost")
    quota = single(values, "--stop-at-quota")
    return Budgets(
        max_tokens=(None if tokens is None else
                    parse_count(tokens.replace("_", "").replace(",", ""), "--max-tokens",
                                MAX_TOKENS_CEILING, example=2_000_000)),
        max_cost=None if cost is None else parse_money(cost),
        stop_at_quota=(None if quota is None else
                       parse_count(quota, "--stop-at-quota", 100, example=80)),
    )


def parse_money(value: str) -> float:
    found = _MONEY.fullmatch(value.strip())
    amount = float(found.group(1)) if found else 0.0
    if not 0 < amount <= MAX_COST_CEILING:
        raise UsageError(f"--max-cost needs an amount in US dollars above 0, not {value!r}: "
                         "for example --max-cost 5 or --max-cost 12.50")
    return amount
