"""Start requests parsed from typed arguments, and their one-line refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from finesse.errors import UsageError
from finesse.loop.request import StartRequest, start_request

ROOT = Path("/nonexistent-finesse-root")  # a project root with no files in it


def parse(args: str, root: Path = ROOT) -> StartRequest:
    return start_request(args, root)


def refusal(args: str, root: Path = ROOT) -> str:
    with pytest.raises(UsageError) as caught:
        start_request(args, root)
    message = str(caught.value)
    assert "\n" not in message and message.strip() == message and message
    return message
