"""Attribute 8, the cold-start paragraph: the prompt opens by telling the agent, which re-reads
it with no memory, to look at the current state before doing anything.

The opening is the first paragraph (after a title line), with the headings right above it
("## Every iteration, first"), the whole list when it is a list or introduces one, and the
paragraph after it when the first one says the loop starts fresh but not what to look at
("Each iteration begins with a blank slate." then "Run the tests and ..."), or only who the
agent is ("You are a senior Go engineer working autonomously."). It is a cold
start when it:
- points at the state itself, in any words: `git status`/`git log`, "the current state",
  "where things stand", "pick up where the last iteration left off", "see which phases are
  already done", "find out what is finished", "read `PROGRESS.md`"; or
- says the agent starts without memory (or is iterating), and to run or read something:
  "You have no memory of earlier runs, so run `npm test` first".
A task statement first ("Add a health check to ...") is no cold start, even when one
follows it: the seed's file "starts directly with the cold start paragraph".
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import Block, Document, Line

_I = re.IGNORECASE
_DONE = (r"(?:done|finished|complete[d]?|implemented|in\s+place|left|remaining|remains?|"
         r"pending|passing|failing|green|red|ticked(?:\s+off)?|checked\s+off|next|outstanding|"
         r"missing|working|broken|there)")
# The agent re-reads the prompt with no memory.
ITERATING = re.compile(
    r"\biterat\w*|\bloop\w*|\bre-?(?:enter\w*|run|read|orient\w*|start\w*)\b|\bagain\b|"
    r"\bno\s+memory\b|\bmemory\b|\bremember\w*|\brecollection\b|\bforget\w*|"
    r"\bprevious\s+(?:runs?|iterations?|attempts?|sessions?|passes)\b|"
    r"\bfresh\b|\bfrom\s+scratch\b|\bcold\b|\bblank\s+slate\b|\bempty\s+head\b|\bresum\w*|"
    r"\bcontinu\w*|\bpick(?:ing)?\s+(?:this|it|up)\b|\bcarr(?:y|ies)\s+over\b|\bpersists?\b|"
    r"\bin[- ]progress\b|\bpartly\b|\bearlier\s+(?:runs?|passes|iterations?)\b|"
    r"\b(?:each|every)\s+(?:time|run|session|invocation|pass|turn|round|iteration|start)\b",
    _I,
)
# The first paragraph says only that the loop starts fresh: the next one may go on with it.
_FRESH = re.compile(
    r"\biterat\w*|\bloop\b|\b(?:no|without|zero|blank|empty)\s+(?:memory|recollection)\b|"
    r"\bmemory\s+of\b|\bremember\w*|\bfresh\b|\bblank\s+slate\b|\bempty\s+head\b|"
    r"\bstarts?\s+cold\b|\bcarr(?:y|ies)\s+over\b|\b(?:earlier|previous|prior)\s+(?:runs?|"
    r"passes|iterations?)\b", _I)
# A first paragraph that only says who the agent is: "You are a senior Go engineer."
_PERSONA = re.compile(
    r"^[*_]*(?:you\s+are|you['\u2019]re|act\s+as|role:)\b[^.!?]{0,160}[.!?]?[*_]*$", _I)
# Pointing at the state itself.
STATE = re.compile(
    r"\bgit\s+(?:status|log|diff|show)\b|\bcurrent\s+(?:state|status)\b|"
    r"\bstate\s+of\s+(?:the\s+)?(?:repo\w*|code\w*|tests?|work|tree|project|things)\b|"
    r"\bwhere\s+(?:things|it|you|we|the\s+\w+|work)\s+(?:stands?|are|is|got\s+to|left\s+off)\b|"
    r"\bleft\s+off\b|\bhow\s+far\b|\bpick\s+up\s+(?:where|from)\b|\bresume\s+(?:from|where|at)\b|"
    rf"\bwhat\b[^.;]{{0,40}}?\b(?:already\s+)?(?:been\s+)?(?:{_DONE}|exists?|left\s+behind)\b|"
    r"\b(?:inventory|on\s+disk)\b|"
    rf"\bwhich\b.{{0,60}}?\b(?:are|is|were|have\s+been)\s+(?:already\s+)?{_DONE}\b|"
    r"\balready\s+(?:been\s+)?(?:done|finished|complete[d]?|implemented|in\s+place|exists?|"
    r"ticked|passing)\b|"
    r"\b(?:progress|notes|status|todo|checklist)\w*\.(?:md|txt|json)\b|"
    r"\b(?:progress|notes|status)\s+(?:file|log|notes)\b|\b(?:the\s+)?checklist\b|"
    rf"\b(?:figure|work|find)\s+out\b.{{0,60}}?\b(?:{_DONE}|stands?|where|which|what)\b|"
    r"\bwhich\s+(?:[\w-]+\s+){0,3}?(?:pass|fail|remain|work)\w*\b|\bbearings\b|"
    r"\b(?:determine|identify|establish|assess\w*|decide|confirm|orient\w*|take\s+stock)\b",
    _I,
)
# Running or reading something: the tests, the log, the code.
LOOK = re.compile(
    r"\b(?:check\w*|inspect\w*|review\w*|look\w*\s+(?:at|in|over|through|there)|read\w*|"
    r"run\w*|ran|examin\w*|skim\w*|open\w*|scan\w*|consult\w*|build\w*|compil\w*|"
    r"survey\w*|explor\w*)\b.{0,60}?"
    r"\b(?:state|status|progress|tests?|suite|specs?|notes|log|diff|results?|output|repo\w*|"
    r"code|files?|tree|checklist|history|commits?)\b|"
    r"\b(?:first|before\s+(?:anything|doing|you|touching|changing|starting)|start\s+(?:by|with)|"
    r"begin\s+(?:by|with))\b.{0,80}?`[^`]+`|"
    r"\b(?:run\w*|ran|execut\w*|read\w*|open\w*|check\w*|inspect\w*|look\w*\s+at|review\w*|"
    r"skim\w*|consult\w*)\b[^.]{0,20}?`[^`]+`",
    _I,
)


def is_cold_start(text: str) -> bool:
    """Whether `text` tells the agent to look at the current state (see the module doc)."""
    return bool(STATE.search(text) or (ITERATING.search(text) and LOOK.search(text)))


def opening(doc: Document) -> list[Line]:
    """The opening, as the module doc says, with the titles of the headings right above it."""
    first = doc.opening()
    if not first:
        return []
    index = next(at for at, block in enumerate(doc.blocks) if block.first == first[0])
    lines = _heading_lines(doc, index) + list(first)
    block = doc.blocks[index]
    taken = {line.number for line in lines}
    following = _blocks_after(doc, index)
    code = [Line(line.number, f"`{line.text.strip()}`") for item in following[:1]
            if item.kind == "code" for line in item.lines[1:-1]]
    lines += code
    if block.kind == "item":
        lines += [line for item in following if item.kind == "item"
                  for line in item.lines if line.number not in taken]
    elif (following and (_FRESH.search(block.text) or _PERSONA.match(block.text))
          and not is_cold_start(" ".join(line.text for line in lines))):
        lines += [line for item in following for line in item.lines if line.number not in taken]
    return lines


def _heading_lines(doc: Document, index: int) -> list[Line]:
    lines: list[Line] = []
    for block in reversed(doc.blocks[:index]):
        if block.kind != "heading":
            break
        lines.insert(0, block.first)
    return lines


def _blocks_after(doc: Document, index: int) -> list[Block]:
    """The list or code right after block `index` (or the rest of its list), else the
    paragraph."""
    after: list[Block] = []
    for block in doc.blocks[index + 1:]:
        if block.kind == "item" or (block.kind == "code" and not after):
            after.append(block)
            continue
        if not after and block.kind == "paragraph" and doc.blocks[index].kind != "item":
            after.append(block)
        break
    return after


def cold_start_lines(doc: Document) -> frozenset[int]:
    """The numbers of the lines of the cold start at the top, when the prompt opens with
    one ("First check the state" there is no phase); none when it opens with the task."""
    lines = opening(doc)
    if not lines or not is_cold_start(" ".join(line.text.strip() for line in lines)):
        return frozenset()
    return frozenset(line.number for line in lines)
