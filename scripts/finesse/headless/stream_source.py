"""A headless iteration's side of the loop, for `finesse.loop.observe`: what the child's
stream said (the reply, tool calls, usage, the plan's windows) and a cancel asked for by a
signal to `ralph run`."""

from __future__ import annotations

from finesse.headless.child import Cancel, ChildResult
from finesse.loop.observe import Activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

    from finesse.models import LoopState
    from finesse.results import Quota
    from finesse.state.store import LoopStore


class StreamSource:
    def __init__(self, result: ChildResult, cancel: Cancel) -> None:
        self.result = result
        self.cancel = cancel

    def activity(self, state: LoopState) -> Activity:
        summary = self.result.stream
        return Activity(summary.reply, summary.tool_calls, list(summary.usage),
                        summary.usage_partial)

    def quota(self, store: LoopStore, now: datetime) -> Quota | None:
        return self.result.stream.quota(now)

    def interrupted(self) -> str | None:
        return self.cancel.by if self.cancel.requested else None
