"""Which ended loops belong to a plan: by prompt, by prompt file, or by time."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from finesse.authoring.retro.loops import select_loops
from tests.helpers.states import make_state


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_loops_match_by_prompt_or_by_time_and_are_ordered_by_start() -> None:
    since = at("2030-01-01T00:00:00")
    root = Path("/project")
    history = [
        make_state(root, loop_id="late-other", prompt="other",
                   started_at=at("2030-01-02T00:00:00"), ended_at=at("2030-01-02T01:00:00")),
        make_state(root, loop_id="ours-old", prompt="Do  the\nthing",
                   started_at=at("2020-01-01T00:00:00")),
        make_state(root, loop_id="by-file", prompt="edited", prompt_file="./plans/x.md",
                   started_at=at("2020-02-01T00:00:00")),
        make_state(root, loop_id="early-other", prompt="other",
                   started_at=at("2029-12-31T00:00:00"), ended_at=at("2029-12-31T23:59:59")),
        make_state(root, loop_id="started-at-since", prompt="other", started_at=since),
    ]
    chosen = select_loops(history, prompt="Do the thing", prompt_files=frozenset({"plans/x.md"}),
                          since=since)
    assert [(match, loop.loop_id) for match, loop in chosen] == [
        ("prompt", "ours-old"), ("prompt", "by-file"), ("time", "started-at-since"),
        ("time", "late-other")]
