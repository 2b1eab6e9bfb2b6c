"""What one `claude -p --output-format stream-json --verbose` iteration said, read event by
event from its output (docs/claude-code-facts.md, "Print mode"; 2.1.328):

- `system`/`init` names the session; `system`/`api_retry` is a retried API error.
- `assistant` events come one per content block of a message, sharing `message.id`; their
  `usage.output_tokens` is the figure of the message's start, not its end, so usage read
  from them is a running estimate, counted once per message id.
- `rate_limit_event` carries the plan's windows (`unifiedWindows`, utilization 0 to 1) and,
  when a limit refuses the request, `status: "rejected"` with `resetsAt` (epoch seconds).
  It appears only where plan limits apply (a subscriber login or a gateway token).
- `result` ends the stream: the final reply (`result`), `is_error`, `api_error_status`
  (429 for a usage or rate limit), and the session's usage per model (`modelUsage`), the
  figures an iteration is charged with.

A stream that ends without its `result` (the process was killed, or crashed) keeps what it
read: the running usage, marked partial, and no reply. Lines that are not JSON objects are
skipped and counted; nothing here raises on what the child prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from finesse.results import ModelUsage, Quota
from finesse.support.numbers import epoch_time, percentage, token_count

LIMIT_STATUS = 429


@dataclass(frozen=True)
class StreamError:
    """Why the iteration's session failed: an API error after Claude Code's own retries, or
    a usage limit (`limited`), with its reset time when the stream reported one."""

    message: str
    status: int | None = None
    limited: bool = False
    resets_at: datetime | None = None
    limit_type: str = ""  # five_hour, seven_day, ... as Claude Code names the window


@dataclass
class _Message:
    model: str
    usage: dict[str, Any]


@dataclass
class StreamReader:
    """Feed it the child's stdout one line at a time; `summary()` says what it read."""

    session_id: str | None = None
    texts: list[str] = field(default_factory=list)  # the main thread's text blocks
    tool_ids: list[str] = field(default_factory=list)
    messages: dict[str, _Message] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    rejected: dict[str, Any] | None = None  # the last rate_limit_event that refused
    windows: dict[str, Any] | None = None  # the last unifiedWindows seen
    retries: int = 0
    skipped_lines: int = 0
    events: int = 0
    refused: set[str] = field(default_factory=set)  # usage fields that held no token count

    def feed(self, line: bytes | str) -> None:
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            if str(line).strip():
                self.skipped_lines += 1
            return
        if not isinstance(event, dict):
            self.skipped_lines += 1
            return
        self.events += 1
        kind = event.get("type")
        if kind == "system":
            self._system(event)
        elif kind == "assistant":
            self._assistant(event)
        elif kind == "rate_limit_event":
            self._rate_limit(event.get("rate_limit_info"))
        elif kind == "result":
            self.result = event

    def _system(self, event: dict[str, Any]) -> None:
        if event.get("subtype") == "init" and isinstance(event.get("session_id"), str):
            self.session_id = event["session_id"]
        elif event.get("subtype") == "api_retry":
            self.retries += 1

    def _assistant(self, event: dict[str, Any]) -> None:
        message = event.get("message")
        if not isinstance(message, dict):
            return
        if event.get("parent_tool_use_id") is None:  # the main thread, not a subagent's
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    self.texts.append(block["text"])
                elif block.get("type") == "tool_use":
                    ident = str(block.get("id") or f"#{len(self.tool_ids)}")
                    if ident not in self.tool_ids:
                        self.tool_ids.append(ident)
        key, usage = message.get("id"), message.get("usage")
        if isinstance(key, str) and isinstance(usage, dict) and key not in self.messages:
            self.messages[key] = _Message(str(message.get("model") or ""), usage)

    def _rate_limit(self, info: object) -> None:
        if not isinstance(info, dict):
            return
        if isinstance(info.get("unifiedWindows"), dict):
            self.windows = info["unifiedWindows"]
        if info.get("status") == "rejected":
            self.rejected = info

    @property
    def tool_calls(self) -> int:
        return len(self.tool_ids)

    @property
    def running_tokens(self) -> int:
        """Input, cache creation and output tokens so far (output as each message began)."""
        return sum(_count(m.usage, "input_tokens") + _count(m.usage, "cache_creation_input_tokens")
                   + _count(m.usage, "output_tokens") for m in self.messages.values()
                   if not m.model.startswith("<"))

    def summary(self) -> StreamSummary:
        result = self.result
        usage, partial = self._usage()
        error = self._error()
        reply = None
        if result is not None and error is None and isinstance(result.get("result"), str):
            reply = result["result"]
        return StreamSummary(
            session_id=self.session_id, reply=reply, last_text=self.texts[-1] if self.texts
            else "", tool_calls=self.tool_calls, usage=usage, usage_partial=partial,
            error=error, complete=result is not None, windows=self.windows,
            retries=self.retries, skipped_lines=self.skipped_lines,
            refused=tuple(sorted(self.refused)),
        )

    def _usage(self) -> tuple[list[ModelUsage], bool]:
        """The session's usage per model: the result's `modelUsage`, else the running
        figures of each message (partial: their output counts are those of its start)."""
        by_model = (self.result or {}).get("modelUsage")
        if isinstance(by_model, dict) and by_model:
            refused = self.refused
            return [ModelUsage(str(name), _count(f, "inputTokens", refused),
                               _count(f, "outputTokens", refused),
                               _count(f, "cacheCreationInputTokens", refused),
                               _count(f, "cacheReadInputTokens", refused))
                    for name, f in sorted(by_model.items()) if isinstance(f, dict)], False
        totals: dict[str, ModelUsage] = {}
        for message in self.messages.values():
            if message.model.startswith("<"):  # "<synthetic>": an error shown as a reply
                continue
            seen = totals.get(message.model, ModelUsage(message.model))
            u = message.usage
            refused = self.refused
            totals[message.model] = ModelUsage(
                message.model, seen.input + _count(u, "input_tokens", refused),
                seen.output + _count(u, "output_tokens", refused),
                seen.cache_creation + _count(u, "cache_creation_input_tokens", refused),
                seen.cache_read + _count(u, "cache_read_input_tokens", refused))
        return [totals[name] for name in sorted(totals)], bool(totals) or self.result is None

    def _error(self) -> StreamError | None:
        result = self.result
        rejected = self.rejected
        if result is None:
            if rejected is None:
                return None
            return _limit("the usage limit refused the request", None, rejected)
        if result.get("is_error") is not True:
            return None
        status = result.get("api_error_status")
        status = status if isinstance(status, int) and not isinstance(status, bool) else None
        text = result.get("result")
        message = " ".join(str(text).split()) if isinstance(text, str) and text.strip() else (
            f"claude -p ended with an error ({result.get('subtype') or 'no detail'})")
        if status == LIMIT_STATUS or rejected is not None:
            return _limit(message, status, rejected)
        return StreamError(message[:500], status)


def _limit(message: str, status: int | None, rejected: dict[str, Any] | None) -> StreamError:
    info = rejected or {}
    return StreamError(message[:500], status, limited=True,
                       resets_at=epoch(info.get("resetsAt")),
                       limit_type=str(info.get("rateLimitType") or ""))


def _count(fields: object, name: str, refused: set[str] | None = None) -> int:
    """The count `fields` holds under `name`; 0 when it holds none, or none that is a token
    count (`finesse.support.numbers`), whose name then goes into `refused`."""
    value = token_count(fields.get(name) if isinstance(fields, dict) else None)
    if value is None and refused is not None:
        refused.add(name)
    return value or 0


def epoch(value: object) -> datetime | None:
    """An epoch-seconds figure as a UTC time; None when it is not one."""
    return epoch_time(value)


@dataclass(frozen=True)
class StreamSummary:
    session_id: str | None
    reply: str | None  # the final reply; None when the session failed or never finished
    last_text: str  # the last text the agent wrote, finished or not
    tool_calls: int
    usage: list[ModelUsage]
    usage_partial: bool
    error: StreamError | None
    complete: bool  # the `result` event arrived
    windows: dict[str, Any] | None = None
    retries: int = 0
    skipped_lines: int = 0
    refused: tuple[str, ...] = ()  # usage fields that held no token count

    def quota(self, now: datetime) -> Quota | None:
        """The plan's windows as the stream last reported them (for --stop-at-quota)."""
        windows = self.windows or {}
        five, seven = windows.get("five_hour"), windows.get("seven_day")
        if not isinstance(five, dict) and not isinstance(seven, dict):
            return None
        return Quota(at=now, five_hour=_percent(five), five_hour_resets_at=_reset(five),
                     seven_day=_percent(seven), seven_day_resets_at=_reset(seven))


def _percent(window: object) -> float | None:
    used = window.get("utilization") if isinstance(window, dict) else None
    if isinstance(used, bool) or not isinstance(used, (int, float)):
        return None
    share = percentage(float(used) * 100 if abs(used) < 1e300 else float("inf"))
    return round(share, 1) if share is not None else None


def _reset(window: object) -> datetime | None:
    return epoch(window.get("resetsAt")) if isinstance(window, dict) else None
