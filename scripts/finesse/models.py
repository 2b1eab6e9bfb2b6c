"""Pydantic models: hook inputs (lenient, Claude Code adds fields) and our own files (strict)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Outcome = Literal[
    "success", "limit", "cancelled", "blocked", "failure", "quiesced", "timeout", "error"
]
STATE_VERSION = 1


class HookInput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    session_id: str
    transcript_path: str | None = None
    cwd: str | None = None
    permission_mode: str | None = None
    hook_event_name: str | None = None


class StopInput(HookInput):
    stop_hook_active: bool = False
    last_assistant_message: str | None = None


class PromptInput(HookInput):
    prompt: str


class IterationRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    number: int = Field(ge=1)
    started_at: datetime
    ended_at: datetime
    result: str
    reply_excerpt: str = ""


class LoopState(BaseModel):
    """One loop, bound to the session that started it. Active while `outcome` is None."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    loop_id: str
    session_id: str
    project_root: str
    prompt: str
    promise: str
    max_iterations: int = Field(ge=1)
    iteration: int = Field(default=1, ge=1)
    verify: list[str] = Field(default_factory=list)
    prompt_file: str | None = None
    promise_file: str | None = None
    started_at: datetime
    updated_at: datetime
    iteration_started_at: datetime
    last_reply_excerpt: str = ""
    iterations: list[IterationRecord] = Field(default_factory=list)
    outcome: Outcome | None = None
    ended_at: datetime | None = None
    end_message: str = ""
