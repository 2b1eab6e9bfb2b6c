"""The phases of a loop prompt, in any of the ways people write them, with the lines (and for
a phase told in a paragraph, the sentences) each one spans."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from finesse.authoring.prompt_check.document import Block, Document, Line
from finesse.authoring.prompt_check.numbered import numbered_phases
from finesse.authoring.prompt_check.phase_model import Phase, Phases
from finesse.authoring.prompt_check.phase_tables import table_phases
from finesse.authoring.prompt_check.procedure import procedure_phases
from finesse.authoring.prompt_check.sequence import told_phases
from finesse.authoring.prompt_check.vocabulary import (
    COMMAND_ARROW,
    CRITERIA_TITLE,
    LETTERED_MARKER,
    NOT_WORK,
    PHASE_LIST_TITLE,
    PHASE_MARKER,
    PHASE_WORDS,
    UNORDERED,
    VERIFY,
    number_value,
)
from finesse.support.markdown import section_ends

_NUMBERED_TITLE = re.compile(r"^[*_]*(\d{1,2})[.):]?[*_]*\s+\S")
# What follows a phase's own marker: a separator or the end of the line ("Phase 2: ...",
# "## Step 3", "Stage 2 — ..."), not a verb ("Step 4 is done when ...").
_TITLED = re.compile(r"[*_]*\s*(?:[:.)\u2014\u2013-]|$)")
# Under a "phases:" key of a prompt written as YAML-style keys: "  1_config:", "  2-lint:".
_PHASES_KEY = re.compile(r"^\s*+(?:phases|steps|stages|milestones|plan|order)\s*+:\s*+$", re.I)
# Steps numbered with a number sign or in brackets: "#1 project root detection", "[2] ...".
_NUMBER_SIGN = re.compile(r"^\s*+(?:#|\[)(?P<number>\d{1,2})\]?\s+\S")
_NUMBERED_KEY = re.compile(r"^\s++(?P<number>\d{1,2})[_-][A-Za-z][\w-]*\s*:")


def _has_phases_key(doc: Document) -> bool:
    return any(_PHASES_KEY.match(line.text) for line in doc.lines
               if line.number not in doc.code_lines)


def find_phases(doc: Document, criteria: Sequence[Block]) -> Phases:
    """"Phase 1 / Phase 2" (or Step, Stage, Milestone, Part, Scenario) lines, also after an
    outline number ("1.2 Phase 2 — ...") or as YAML keys ("phase_2_stats:"); else milestones
    named by a letter and a number ("M1", "M2"); else numbered keys under a "phases:" key
    ("1_config:"); else lines numbered "#1", "#2" or "[1]", "[2]"; else a numbered list (or
    numbered sub-headings) under a heading or label about phases, steps, a plan,
    requirements, tasks or order (and not the criteria); else a table of phases
    (`phase_tables`); else a numbered list under no such heading that is plainly the plan;
    else phases told in words (`sequence`: "First, ... Then ... Finally", "Build auth, then
    products, then cart", bullets under "in order"); else the procedure of each iteration
    (`procedure`: pick the next item, implement it, test, commit). A
    list or paragraph that says its order does not matter ("in whatever order you like")
    holds no phases."""
    marked = _marked_phases(doc)
    if len(marked.found) >= 2 or marked.problem is not None:
        return marked
    lettered = _marked_phases(doc, _lettered_marker(doc))
    if len(lettered.found) >= 2 and lettered.problem is None:
        return lettered
    keyed = _marked_phases(doc, _NUMBERED_KEY) if _has_phases_key(doc) else Phases(())
    if len(keyed.found) >= 2 and keyed.problem is None:
        return keyed
    signed = _marked_phases(doc, _NUMBER_SIGN)
    if len(signed.found) >= 2 and signed.problem is None:
        return signed
    listed = _listed_phases(doc, criteria)
    if listed.found or listed.problem:
        return listed
    tabled = table_phases(doc)
    if tabled.found:
        return tabled
    bare = _bare_numbered_phases(doc, criteria)
    if bare.found:
        return bare
    prose = told_phases(doc)
    if len(prose.found) >= 2:
        return prose
    numbered = numbered_phases(doc, criteria)
    if numbered.found:
        return numbered
    procedure = procedure_phases(doc)
    return procedure if procedure.found else marked


def _lettered_marker(doc: Document) -> re.Pattern[str]:
    """Milestones named by a letter and a number ("**M1 — Generators.**", "### P2: ..."),
    all with the letter of the first one."""
    first = next((match for line in doc.lines if line.number not in doc.code_lines
                  for match in [LETTERED_MARKER.match(line.text)] if match), None)
    letter = first.group("letter") if first else "(?!)"
    return re.compile(LETTERED_MARKER.pattern.replace("(?P<letter>[A-Z])", letter))


def _marked_phases(doc: Document, marker: re.Pattern[str] = PHASE_MARKER) -> Phases:
    starts: list[tuple[int, Line]] = []
    base = 1  # "Phase 0: reproduce" counts from 0
    for line in doc.lines:
        match = marker.match(line.text)
        if match is None or line.number in doc.code_lines:
            continue
        number = number_value(match.group("number"))
        if not starts and number == 0:
            base = 0
        if any(number == seen for seen, _ in starts):
            continue  # a later mention of a phase already named
        if number != len(starts) + base:
            if not _TITLED.match(line.text, match.end()):
                continue  # a mention ("Step 4 is done when ..."), not a phase's own line
            return Phases((), line, f"number the phases 1, 2, 3... in order: this is phase "
                                    f"{number} after phase {len(starts) + base - 1}")
        starts.append((number, line))
    next_heading = _next_heading(doc)
    paragraph_end = _paragraph_ends(doc)
    phases = []
    for position, (number, line) in enumerate(starts):
        stops = [next_heading(line), paragraph_end(line)]
        if position + 1 < len(starts):
            stops.append(starts[position + 1][1].number)
        phases.append(Phase(number + 1 - base, line,
                            doc.lines[line.number - 1 : min(stops) - 1]))
    return Phases(tuple(phases))


def _paragraph_ends(doc: Document) -> Callable[[Line], int]:
    """Where a phase on a plain line ("Phase 2: ...", not a heading) ends: at a blank line
    followed by an unindented line that is neither a list item, a Verify label nor code (so
    the rules after the last phase are not part of it). A phase on a heading's line ends
    only where its heading does. Found for every line in one pass from the end."""
    headings = {block.first.number for block in doc.blocks if block.kind == "heading"}
    last = len(doc.lines) + 1
    # stop_from[n]: the first line numbered n or later that ends a phase above it.
    stop_from = [last] * (len(doc.lines) + 2)
    for number in range(len(doc.lines), 0, -1):
        text = doc.lines[number - 1].text
        ends_here = (number > 1 and not doc.lines[number - 2].text.strip() and text.strip()
                     and not text[:1].isspace() and not _continues_phase(text))
        stop_from[number] = number if ends_here else stop_from[number + 1]

    def end(line: Line) -> int:
        if line.number in headings:
            return last
        # The blank line must come after the phase's own line.
        return stop_from[min(line.number + 2, last)]

    return end


def _continues_phase(text: str) -> bool:
    stripped = text.lstrip()
    return (stripped[:1] in "-*+`~" or stripped.startswith("[")
            or VERIFY.match(stripped.strip("*_")) is not None)


def _next_heading(doc: Document) -> Callable[[Line], int]:
    """Where a phase that starts at a line ends: the next heading of its level or above
    (of any level, for a line that is no heading)."""
    levels: list[int | None] = [None] * len(doc.lines)
    for block in doc.blocks:
        if block.kind == "heading":
            levels[block.first.number - 1] = block.level
    ends = section_ends(levels)
    return lambda line: ends[line.number - 1] + 1


def _listed_phases(doc: Document, criteria_list: Sequence[Block]) -> Phases:
    criteria = {id(item) for item in criteria_list}
    for index, block in enumerate(doc.blocks):
        if block.kind == "heading":
            title, under = block.title, doc.section(index)
        elif block.kind == "paragraph" and block.text.endswith(":"):
            title, under = block.sentences()[-1].text, doc.list_after(index)
        else:
            continue
        if not PHASE_LIST_TITLE.search(title) or (
                CRITERIA_TITLE.search(title) and not PHASE_WORDS.search(title)):
            continue
        if UNORDERED.search(title):
            return Phases(())
        items = _first_numbered_list(under)
        headed = _numbered_headings(under) if len(items) < 2 else []
        if len(headed) >= 2:  # "## Phases" over "### 1. Parse", "### 2. Print"
            ends = [heading.first.number for heading in headed[1:]]
            ends.append(under[-1].lines[-1].number + 1)
            return Phases(tuple(
                Phase(number, heading.first, doc.lines[heading.first.number - 1 : end - 1])
                for number, (heading, end) in enumerate(zip(headed, ends, strict=True), 1)))
        if len(items) < 2 or any(id(item) in criteria for item in items):
            continue
        ordinals = [item.ordinal for item in items]
        # "1. 1. 1." is Markdown's own numbering: it renders as 1, 2, 3.
        if ordinals != list(range(1, len(items) + 1)) and set(ordinals) != {1}:
            wrong = next(i for n, i in enumerate(items, 1) if i.ordinal != n)
            return Phases((), wrong.first, "number the steps 1, 2, 3... in order")
        last = items[-1].first.number
        stops = [item.first.number for item in items[1:]]
        # The last step ends where the list does: at the next heading, or at a paragraph of
        # its own after a blank line (the rules that follow are no part of it).
        stops.append(min(
            next((b.first.number for b in doc.blocks[index + 1 :]
                  if b.kind == "heading" and b.first.number > last), len(doc.lines) + 1),
            _paragraph_ends(doc)(items[-1].first)))
        return Phases(tuple(
            Phase(position, item.first, doc.lines[item.first.number - 1 : stop - 1])
            for position, (item, stop) in enumerate(zip(items, stops, strict=True), 1)
        ))
    return Phases(())


def _numbered_headings(blocks: list[Block]) -> list[Block]:
    """The headings numbered 1, 2, 3... among `blocks` ("### 1. Parse", "**2) Print**")."""
    numbered = [(block, match) for block in blocks if block.kind == "heading"
                for match in [_NUMBERED_TITLE.match(block.title)] if match]
    numbers = [int(match.group(1)) for _, match in numbered]
    return ([block for block, _ in numbered]
            if numbers == list(range(1, len(numbers) + 1)) else [])


def _bare_numbered_phases(doc: Document, criteria_list: Sequence[Block]) -> Phases:
    """A numbered list of the work under no heading about phases ("1. Fix the broken links.
    Verify: ..."): it is the plan when its items carry their own checks, or when nothing is
    over it and the prompt speaks of its steps ("resume at the first failing step"). A list
    under a heading about something else (rules, scope, the criteria) is not."""
    criteria = {id(item) for item in criteria_list}
    listed: set[int] = set()
    for index, block in enumerate(doc.blocks):
        if block.kind != "item" or id(block) in listed:
            continue
        items = _first_numbered_list(list(doc.blocks[index:]))
        listed |= {id(item) for item in doc.blocks[index:] if item.kind == "item"}
        ordinals = [item.ordinal for item in items]
        if (len(items) < 2 or any(id(item) in criteria for item in items)
                or (ordinals != list(range(1, len(items) + 1)) and set(ordinals) != {1})):
            continue
        titles = [heading.title for heading in doc.headings_over(index)]
        before = doc.blocks[index - 1].text if index else ""
        if any(NOT_WORK.search(title) or UNORDERED.search(title) or (
                CRITERIA_TITLE.search(title) and not PHASE_WORDS.search(title))
               for title in titles) or UNORDERED.search(before):
            continue
        checked = sum(1 for item in items
                      if VERIFY.search(item.text) or COMMAND_ARROW.search(item.text))
        if checked >= len(items) - 1 or (not titles and _speaks_of_steps(doc, items)):
            return Phases(tuple(Phase(number, item.first, item.lines)
                                for number, item in enumerate(items, 1)))
    return Phases(())


def _speaks_of_steps(doc: Document, items: list[Block]) -> bool:
    inside = {id(item) for item in items}
    return any(PHASE_WORDS.search(block.text) for _, block in doc.prose()
               if id(block) not in inside)


def _first_numbered_list(blocks: list[Block]) -> list[Block]:
    """The first numbered list, across indented paragraphs or code that sit between items."""
    items: list[Block] = []
    for block in blocks:
        if block.kind == "item":
            items.append(block)
        elif items and not (block.kind == "code" or block.first.text[:1].isspace()):
            break
    numbered = [item for item in items if item.ordinal is not None]
    if not numbered:
        return []
    outer = min(item.level for item in numbered)
    return [item for item in numbered if item.level == outer]
