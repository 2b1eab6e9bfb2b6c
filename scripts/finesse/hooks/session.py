"""SessionStart and SessionEnd: a loop survives compaction and resume, and `/clear` never
leaves one orphaned.

After a compaction or a resume the model's context may have lost the loop: it is re-stated
as additional context. `/clear` ends the session (SessionEnd, reason `clear`) and starts one
with a new id; a loop of the old session could never continue, so it is archived as
cancelled, and the new session is told so.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import BinaryIO, TextIO

from finesse.hooks.boundary import run_hook
from finesse.hooks.output import HookOutput, add_context, tell_user
from finesse.loop.lifecycle import cancel_loop
from finesse.loop.status import start_context
from finesse.models import HookInput
from finesse.schema import SchemaError, from_dict
from finesse.state.paths import StatePaths, find_project_root, is_valid_session_id
from finesse.state.store import LoopStore, utcnow

CLEARED_BY = "/clear"
RECENT = timedelta(minutes=2)

def _input(raw: bytes) -> tuple[HookInput, dict[str, object]] | None:
    from finesse.support import json_text

    try:
        fields = json_text.loads(raw)
        data = from_dict(HookInput, fields, strict=False)
    except (ValueError, SchemaError):
        return None
    if not isinstance(fields, dict) or not is_valid_session_id(data.session_id):
        return None
    return data, fields

def handle_start(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    parsed = _input(raw)
    if parsed is None:
        return None
    data, fields = parsed
    store = LoopStore(StatePaths(find_project_root(env, data.cwd or cwd)))
    source = fields.get("source")
    if source in ("compact", "resume"):
        state = store.peek(data.session_id)
        if state is None:
            return None
        last = ""
        if state.last_verification:
            red = [r.command for r in state.last_verification if not r.passed]
            last = ("\n\nLast verification: " + ("red: " + ", ".join(red) if red else "green"))
        return add_context("SessionStart", "(Re-stated after " + str(source) + ")\n"
                           + start_context(state) + last)
    if source == "clear":
        now = utcnow()
        cleared = [loop for loop in store.history()
                   if loop.ended_by == CLEARED_BY
                   and loop.ended_at is not None and now - loop.ended_at < RECENT]
        if cleared:
            return tell_user(
                f"finesse: /clear ended the Ralph loop of the previous session "
                f"({cleared[-1].loop_id}); it was archived as cancelled. Start a new one "
                "with /ralph-loop."
            )
    return None

def handle_end(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    parsed = _input(raw)
    if parsed is None:
        return None
    data, fields = parsed
    if fields.get("reason") != "clear":
        return None  # the session may be resumed later, and its loop with it
    store = LoopStore(StatePaths(find_project_root(env, data.cwd or cwd)))
    with store.locked(data.session_id):
        cancel_loop(store, data.session_id, utcnow(), by=CLEARED_BY)
    return None

def main_start(stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    return run_hook("SessionStart", handle_start, stdin, stdout)

def main_end(stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    return run_hook("SessionEnd", handle_end, stdin, stdout)
