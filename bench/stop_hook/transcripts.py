"""The transcripts the scenarios read, and what a stop should find in them.

- `ordinary`: a loop's session: a typed `/ralph-loop` prompt, then iterations (Stop hook
  feedback, tool rounds, a closing reply) up to the size asked for. Its last iteration (the
  bytes since the previous stop) holds several assistant messages, each split over several
  lines, and ends with the final reply.
- `worst_case`: one turn that has run for a long time: no typed prompt and no Stop hook
  feedback anywhere, every assistant message ending in a tool call followed by its result,
  so that a reader looking for the turn's start finds none; then the final reply, the
  message that ends the turn (the Stop is for it). It is written, as once Claude Code has
  caught up: a Stop input whose reply the transcript's new bytes never hold makes the hook
  wait for it (a second at most, `hooks/stop.py` TRANSCRIPT_LAG_SECONDS), which would
  measure that wait, not the reading.

Both end with the same bytes at every size (the last iteration is written from its own
seed), so comparing sizes compares only what lies before. `Transcript` says where the last
stop read to (the usage cursor a loop would hold) and what was written after it.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

from stop_hook.settings import FINAL_REPLY, WORST_CASE_NEW_BYTES
from stop_hook.writer import TranscriptWriter

RECENT_IDS = 64  # as many message ids as the usage cursor keeps
TAIL_MAX_OUTPUT = 30_000  # tool output in the last iteration: realistic, and alike at all sizes


@dataclass(frozen=True)
class Transcript:
    path: Path
    size: int  # bytes written
    mark: int  # where the previous stop read to: the cursor's offset, at a line start
    identity: str  # device and inode, as the cursor records them
    recent_ids: tuple[str, ...]  # the messages counted before `mark`, newest last
    tool_calls: int  # tool calls written after `mark`
    messages: int  # assistant messages written after `mark`
    tokens: dict[str, dict[str, int]]  # per model, the usage written after `mark`


def _finish(writer: TranscriptWriter, path: Path, mark: int) -> Transcript:
    size = writer.close()
    info = os.stat(path)
    before = [m.message_id for m in writer.messages if m.offset < mark]
    after = [m for m in writer.messages if m.offset >= mark]
    tokens: dict[str, dict[str, int]] = {}
    for message in after:
        totals = tokens.setdefault(message.model, dict.fromkeys(
            ("input", "output", "cache_creation", "cache_read"), 0))
        totals["input"] += message.usage["input_tokens"]
        totals["output"] += message.usage["output_tokens"]
        totals["cache_creation"] += message.usage["cache_creation_input_tokens"]
        totals["cache_read"] += message.usage["cache_read_input_tokens"]
    return Transcript(
        path, size, mark, f"{info.st_dev}:{info.st_ino}", tuple(before[-RECENT_IDS:]),
        sum(m.tool_calls for m in after), len(after), tokens,
    )


def ordinary(path: Path, project: Path, size: int, seed: int = 7) -> Transcript:
    """A loop's session of about `size` bytes ending with the final reply."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = TranscriptWriter(path, project, random.Random(seed), max(2_000, size // 20))
    try:
        number = 0
        while writer.size < size:
            writer.turn(number, size)
            number += 1
        mark = writer.size
        writer.rng = random.Random(seed + 1)  # the last iteration alike at every size
        writer.stop_feedback(number)
        tail_output = min(TAIL_MAX_OUTPUT, max(2_000, size // 20))
        for _ in range(3):
            writer.tool_round(tail_output)
        writer.assistant([writer.thinking(), writer.text(FINAL_REPLY)])
    except BaseException:
        writer.close()
        raise
    return _finish(writer, path, mark)


def worst_case(path: Path, project: Path, size: int, seed: int = 11,
               new_bytes: int = WORST_CASE_NEW_BYTES) -> Transcript:
    """One long turn of about `size` bytes, tool rounds then the final reply; the previous
    stop was about `new_bytes` ago (at most a fifth of the file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new_bytes = min(new_bytes, size // 5)
    writer = TranscriptWriter(path, project, random.Random(seed), max(2_000, size // 20))
    try:
        writer.tool_round(always_text=False)
        while writer.size < size - new_bytes:
            writer.tool_round(always_text=False)
        mark = writer.size
        writer.rng = random.Random(seed + 1)  # the last iteration alike at every size
        tail_output = max(2_000, min(TAIL_MAX_OUTPUT, new_bytes // 4))
        while writer.size - mark < new_bytes:
            writer.tool_round(tail_output, always_text=False)
        writer.assistant([writer.thinking(), writer.text(FINAL_REPLY)])
    except BaseException:
        writer.close()
        raise
    return _finish(writer, path, mark)
