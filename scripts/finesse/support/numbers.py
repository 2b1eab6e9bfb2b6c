"""Numbers that come from outside finesse (a transcript's or a stream's token usage, a usage
limit's reset time, the status line's percentages), checked where they come in.

Each reader turns what it was given into a number it can add, compare and print, or into
nothing: a token count is an int from 0 to TOKEN_CEILING (a 400-digit count would overflow
the cost estimate's floats), a percentage a finite float from 0 to 100 (NaN and Infinity
compare false or true with everything, so `--stop-at-quota` would never or always fire), a
reset time an epoch a datetime holds, used as a reset only within RESET_HORIZON of now (the
year 9999 overflows the margin added to it, and would have `--wait-on-limit` wait for
ever). The caller logs what was refused. Pure.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

# Far above any real count (a billion tokens a turn, for a million turns), far below what
# overflows a float.
TOKEN_CEILING = 10 ** 15
# A window a little over full is full; a figure far above it is no figure.
PERCENT_CEILING = 1000
# A usage window resets within a week; a reset time further off is no reset time.
RESET_HORIZON = timedelta(days=8)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def token_count(value: object) -> int | None:
    """`value` as a token count; 0 when absent; None when refused (not an int from 0 to
    TOKEN_CEILING)."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= TOKEN_CEILING:
        return value
    return None


def percentage(value: object) -> float | None:
    """`value` as a percentage used: a number from 0 to PERCENT_CEILING, above 100 read as
    100; None when refused (not a number, NaN, infinite, negative, absurdly large)."""
    if not _is_number(value) or not 0 <= value <= PERCENT_CEILING:  # type: ignore[operator]
        return None  # NaN compares false with everything: refused here too
    return min(float(value), 100.0)  # type: ignore[arg-type]


def epoch_time(value: object) -> datetime | None:
    """An epoch-seconds figure as a UTC time; None when it is not one (the year 10000 and
    beyond, NaN, a string). How far off a reset may be is the caller's (RESET_HORIZON)."""
    if not _is_number(value):
        return None
    try:
        return datetime.fromtimestamp(value, UTC)  # type: ignore[arg-type]
    except (OverflowError, OSError, ValueError):
        return None
