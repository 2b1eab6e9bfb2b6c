"""The plan's usage windows as the status line last saw them, kept in `.claude/ralph/quota.json`
for `--stop-at-quota`: `ralph statusline` records them, a stop reads them. Standard library
only (the Stop path)."""

from __future__ import annotations

from finesse.results import Quota
from finesse.schema import SchemaError, from_json, to_json
from finesse.state.paths import StatePaths
from finesse.support.files import FileProblem, read_bytes
from finesse.support.writes import write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

QUOTA_FILE = "quota.json"
QUOTA_BYTES = 64 * 1024  # the figures are a few hundred bytes


def record_quota(paths: StatePaths, quota: Quota) -> None:
    write_atomic(paths.base / QUOTA_FILE, to_json(quota))


def read_quota(paths: StatePaths, now: datetime) -> Quota | None:
    """The figures recorded last; a window whose reset time has passed counts as empty.
    None when there are none (or the file is not a readable record: never blocks, a FIFO
    or a device at the path is passed over)."""
    try:
        quota = from_json(Quota, read_bytes(paths.base / QUOTA_FILE, subject=QUOTA_FILE,
                                            limit=QUOTA_BYTES))
    except (FileProblem, SchemaError):
        return None
    five = quota.five_hour if quota.five_hour_resets_at is None or \
        quota.five_hour_resets_at > now else None
    week = quota.seven_day if quota.seven_day_resets_at is None or \
        quota.seven_day_resets_at > now else None
    return Quota(quota.at, five, quota.five_hour_resets_at, week, quota.seven_day_resets_at)
