"""The retro's records: what `collect_retro` finds and `render_retro` shows."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from finesse.support.strict import StrictModel

Result = Literal["pass", "fail", "timed out", "not started", "no command"]
Match = Literal["prompt", "time"]


class Commit(StrictModel):
    sha: str
    subject: str


class FileChange(StrictModel):
    status: str  # git's letter: A added, M modified, D deleted, T type changed
    path: str


class PhaseCheck(StrictModel):
    phase: int
    title: str
    command: str | None
    result: Result
    exit_code: int | None
    duration_seconds: float
    output_tail: str


class LoopEntry(StrictModel):
    loop_id: str
    match: Match
    outcome: str | None
    iterations: int | None
    started_at: str | None
    ended_at: str | None
    end_message: str
    report: str | None  # the report's path from the project root
    report_text: str | None = Field(default=None, exclude=True)


class Retro(StrictModel):
    name: str
    plan: str  # paths from the project root when under it
    prompt: str | None  # None when the prompt file is missing
    retro: str
    baseline_commit: str
    head_commit: str
    commits: list[Commit]
    files_changed: list[FileChange]
    uncommitted: list[str]
    phases: list[PhaseCheck]
    loops: list[LoopEntry]
    unresolved_warnings: list[str] | None  # None when the plan has no such section
    notes: list[str]  # what could not be read
