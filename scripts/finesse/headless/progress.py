"""What a headless run tells the person watching it: the `Progress` a CLI draws, and
`Silent`, which tells nothing."""

from __future__ import annotations

from typing import Protocol

from finesse.headless.child import Live
from finesse.models import IterationRecord, LoopState


class Progress(Protocol):
    """What a run tells the person watching it (the CLI draws it)."""

    def iteration_started(self, state: LoopState, pid: int) -> None: ...

    def live(self, state: LoopState, live: Live) -> None: ...

    def iteration_ended(self, state: LoopState, entry: IterationRecord | None,
                        note: str) -> None: ...

    def say(self, line: str) -> None: ...


class Silent:
    def iteration_started(self, state: LoopState, pid: int) -> None:
        pass

    def live(self, state: LoopState, live: Live) -> None:
        pass

    def iteration_ended(self, state: LoopState, entry: IterationRecord | None,
                        note: str) -> None:
        pass

    def say(self, line: str) -> None:
        pass
