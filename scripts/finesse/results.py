"""What a loop measures, as the loop's records and judge mode's attempts hold it: a command's
result, a gate step, tokens per model and their prices, the plan's usage windows, and where
the transcript was read to. Records (`finesse.record`), checked by `finesse.schema`."""

from __future__ import annotations

from finesse.record import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime


class CommandResult(Record):
    """One verification command's outcome.

    `exit_code` is None when the command timed out or could not start; a negative code means
    the shell itself was killed by that signal. `output_tail` is the end of stdout and stderr
    together, decoded as UTF-8 with replacement; `output_bytes` counts all of it.
    """

    command: str
    exit_code: int | None
    timed_out: bool
    duration_seconds: float
    output_tail: str
    output_bytes: int
    fingerprint: str

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


class GateStep(Record):
    """What gate mode's step did with an iteration: the gate's results and git's action
    (committed, empty, repair, reverted, error)."""

    results: list[CommandResult]
    action: str
    commit: str | None = None
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    untouched: list[str] = field(default_factory=list)  # submodules a revert left as they are
    baseline: list[CommandResult] | None = None  # the gate on the reverted baseline
    error: str = ""
    recovered: str = ""  # an interrupted step finished at this stop: what was done

    @property
    def green(self) -> bool:
        return all(result.passed for result in self.results)


class ModelUsage(Record):
    """Tokens one model used in an iteration, as the API reported them."""

    model: str
    input: int = 0
    output: int = 0
    cache_creation: int = 0
    cache_read: int = 0

    @property
    def billed(self) -> int:
        """Input, cache creation and output: what --max-tokens counts (cache reads apart)."""
        return self.input + self.cache_creation + self.output


class Price(Record):
    """Dollars per million tokens for a model family (a model id prefix)."""

    family: str
    input: float
    output: float
    cache_write: float
    cache_read: float


class Quota(Record):
    """The plan's usage windows as Claude Code's status line last reported them."""

    at: datetime
    five_hour: float | None = None  # used percentage
    five_hour_resets_at: datetime | None = None
    seven_day: float | None = None
    seven_day_resets_at: datetime | None = None


class Cursor(Record):
    """Where a transcript was read to: a byte offset, the file's identity (device and inode:
    a replaced file starts again; "" for a file that did not exist yet, whatever file
    appears is read from `offset`), and the last message ids counted, newest last."""

    offset: int
    identity: str
    recent_ids: tuple[str, ...] = ()
