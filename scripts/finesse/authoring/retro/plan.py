"""What the retro reads from the plan and its prompt, as pure functions of their text: the
baseline commit, the unresolved warnings, and each phase's Verify command."""

from __future__ import annotations

import re
from dataclasses import dataclass

from finesse.authoring.prompt_check.document import Document, Line
from finesse.authoring.prompt_check.reading import find_phases
from finesse.authoring.prompt_check.vocabulary import VERIFY, looks_like_command
from finesse.support.markdown import Fences, code_spans, heading, outside_fences, section_ends

# `Baseline commit: <sha>`, the sha maybe quoted; `_baseline_value` reads what follows the
# colon (a lazy value before `\s*$` costs the square of a long run of blanks).
_BASELINE = re.compile(
    r"^\s*(?:[-*+]\s+)?[*_]*baseline[_ ]commit[*_]*\s*:[*_]*(?P<rest>.*)$", re.IGNORECASE)
_QUOTES = "\"'`"
_SHA = re.compile(r"[0-9a-fA-F]{4,40}")
_WARNINGS_TITLE = re.compile(r"^[*_]*unresolved warnings[*_]*\s*:?[*_]*\s*(?P<rest>.*)$",
                             re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_PHASE_PREFIX = re.compile(
    r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d{1,3}[.)]\s+)?[*_]*"
    r"(?:(?:phase|stage|step|milestone|part)\s+\w+[*_]*\s*[:.)\u2014-]?[*_]*\s*)?", re.IGNORECASE)


def baseline_commit(plan_text: str) -> str | None:
    """The plan's baseline commit sha, or None when it has none (or not a sha)."""
    for line in outside_fences(plan_text):
        match = _BASELINE.match(line)
        value = _baseline_value(match.group("rest")) if match else None
        if value is not None:
            return value if _SHA.fullmatch(value) else None
    return None


def _baseline_value(rest: str) -> str | None:
    """The value after `Baseline commit:`, trimmed, less one quote on each side; None when a
    quote is left inside it."""
    value = rest.lstrip()
    value = value[1:] if value[:1] in _QUOTES and value else value
    value = value.rstrip()
    value = value[:-1] if value and value[-1] in _QUOTES else value
    return None if any(quote in value for quote in _QUOTES) else value.strip()


def unresolved_warnings(plan_text: str) -> list[str] | None:
    """The items of the plan's Unresolved Warnings section (a heading, or a `Label:` line with
    text or a list under it); [] when it says none; None when there is no such section."""
    lines = outside_fences(plan_text)
    headings = [heading(line) for line in lines]
    ends = section_ends([found[0] if found else None for found in headings])
    for index, line in enumerate(lines):
        found_heading = headings[index]
        title = found_heading[1] if found_heading else line.strip().lstrip("-*+ ")
        found = _WARNINGS_TITLE.match(title)
        if found is None or (found_heading is None and ":" not in line):
            continue
        rest = [found.group("rest")] if found.group("rest") else []
        after = lines[index + 1 :]
        under = (lines[index + 1 : ends[index]] if found_heading
                 else _under_label(after, line))
        return _warning_items(rest + under)
    return None


def _under_label(lines: list[str], label: str) -> list[str]:
    """The list under a `Label:` line: the lines indented deeper than the label, or any list
    items when the label is not an item itself; up to the first other line."""
    indent = len(label) - len(label.lstrip())
    label_is_item = _ITEM.match(label) is not None
    body: list[str] = []
    for line in lines:
        if not line.strip():
            if body:
                break
            continue
        if len(line) - len(line.lstrip()) > indent or (
                not label_is_item and _ITEM.match(line)):
            body.append(line)
        else:
            break
    return body


def _warning_items(body: list[str]) -> list[str]:
    items: list[str] = []
    for line in body:
        item = _ITEM.match(line)
        if item:
            items.append(item.group(1).strip())
        elif line.strip() and items and line[:1].isspace():
            items[-1] += " " + line.strip()  # an item's continuation line
        elif line.strip():
            items.append(line.strip())
    if len(items) == 1 and items[0].lower().rstrip(".") in ("none", "no warnings", "n/a"):
        return []
    return items


@dataclass(frozen=True)
class PhaseCommand:
    phase: int
    title: str
    command: str | None


def phase_commands(prompt_text: str) -> list[PhaseCommand]:
    """Each phase of a loop prompt with its Verify command (None when it names none)."""
    doc = Document.parse(prompt_text)
    return [PhaseCommand(phase.number, _title(phase.line), _verify_command(phase.region))
            for phase in find_phases(doc).found]


def _title(line: Line) -> str:
    text = _PHASE_PREFIX.sub("", line.text)
    label = VERIFY.search(text)
    text = (text[: label.start()] if label else text).strip(" *_").rstrip(" :.").strip(" *_")
    return text if len(text) <= 100 else text[:99] + "…"


def _verify_command(region: tuple[Line, ...]) -> str | None:
    for index, line in enumerate(region):
        label = VERIFY.search(line.text)
        if label is None:
            continue
        spans = code_spans(line.text[label.end():])
        if spans:
            code = spans[0].code
            return code[1:-1] if code.startswith(" ") and code.endswith(" ") and code.strip() \
                else code
        rest = line.text[label.end():].strip()
        if not rest:
            block = _fenced_block_after(region[index + 1:])
            if block:
                return block
        elif looks_like_command(rest):  # the seed's template: "Verify: npm test"
            return rest
    return None


def _fenced_block_after(lines: tuple[Line, ...]) -> str | None:
    """The body of the fenced block that opens on the first non-blank line, if one does."""
    texts = [line.text for line in lines]
    while texts and not texts[0].strip():
        texts.pop(0)
    fences = Fences()
    if not texts or fences.step(texts[0]) != "open":
        return None
    body = []
    for text in texts[1:]:
        if fences.step(text) == "close":
            break
        body.append(text)
    return "\n".join(body).strip() or None
