"""How a command's result is shown to people and to the model: the failure excerpt the next
prompt carries, and fences that keep any output code. Pure text functions."""

from __future__ import annotations

import re
from collections.abc import Sequence

from finesse.results import CommandResult

_BACKTICKS = re.compile(r"`+")


def code_span(text: str) -> str:
    """`text` as one inline code span, whatever backticks it holds."""
    flat = " ".join(text.splitlines())
    ticks = "`" * (max((len(run) for run in _BACKTICKS.findall(flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in `text`, so the text stays code."""
    return "`" * max(3, max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"


def _what_happened(result: CommandResult) -> str:
    if result.timed_out:
        return f"timed out after {_seconds(result.duration_seconds)}"
    if result.exit_code is None:
        return "could not start"
    return f"exit code {result.exit_code}"


def _last_lines(text: str, limit: int) -> str:
    """The end of `text` in at most `limit` characters, starting at a line when it can."""
    if len(text) <= limit:
        return text
    piece = text[-limit:] if limit > 0 else ""
    newline = piece.find("\n")
    return piece[newline + 1 :] if 0 <= newline < len(piece) - 1 else piece


def failure_excerpt(results: Sequence[CommandResult], max_chars: int = 3000) -> str:
    """Markdown for the next prompt: each failed command, how it failed, and its output's end.

    The failed commands share `max_chars` of output between them; each output is shown in a
    fence longer than any run of backticks in it. Empty when every command passed.
    """
    failed = [result for result in results if not result.passed]
    if not failed:
        return ""
    share = max_chars // len(failed)
    parts: list[str] = []
    for result in failed:
        heading = f"{code_span(result.command)}: {_what_happened(result)}."
        output = result.output_tail.rstrip()
        if not output:
            parts.append(f"{heading} It printed nothing.")
            continue
        shown = _last_lines(output, share)
        whole = result.output_bytes == len(result.output_tail.encode("utf-8", errors="replace"))
        if len(shown) < len(output) or not whole:
            intro = f"The end of its output ({result.output_bytes} bytes in all):"
        else:
            intro = "Its output:"
        fence = fence_for(shown)
        parts.append(f"{heading} {intro}\n{fence}\n{shown}\n{fence}")
    return "\n\n".join(parts) + "\n"
