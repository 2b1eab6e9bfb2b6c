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
A task statement first ("Add a health check to ...") is no cold start. One may follow it:
after a title, a task line or `Project:` lines (at most PREAMBLE_BLOCKS short paragraphs and
headings, no list, table or code: nothing asked of the agent yet), a paragraph that says the
agent starts without memory and looks at the state is the attribute met
(`after_task_lines`). That the file must start with it (seed 000: it "starts directly with
the cold start paragraph") is the prompt-only layout check's finding (`layout.py`), which
still fails the file: each defect is reported once, by the check that owns it.
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import Block, Document, Line
from finesse.authoring.prompt_check.memo import per_document, per_text

_I = re.IGNORECASE
_DONE = (r"(?:done|finished|complete[d]?|implemented|in\s+place|left|remaining|remains?|"
         r"pending|passing|failing|green|red|ticked(?:\s+off)?|checked\s+off|next|outstanding)")
# The agent re-reads the prompt with no memory (with a narrow look at the state, below).
ITERATING = re.compile(
    r"\biterat\w*|\bloop\b|\bre-?(?:enter\w*|orient\w*)\b|\bagain\b|"
    r"\b(?:no|without|zero|blank|empty)\s+(?:memory|recollection)\b|\bmemory\s+(?:of|between)\b|"
    r"\bremember\w*|\brecollection\b|\bforget\w*|"
    r"\bprevious\s+(?:runs?|iterations?|attempts?|sessions?|passes)\b|"
    r"\bfresh\b|\bfrom\s+scratch\b|\bcold\b|\bblank\s+slate\b|\bempty\s+head\b|\bresum\w*|"
    r"\bcontinu\w*|\bpick(?:ing)?\s+(?:this|it|up)\b|\bcarr(?:y|ies)\s+over\b|\bpersists?\b|"
    r"\bin[- ]progress\b|\bpartly\b|\bearlier\s+(?:runs?|passes|iterations?)\b|"
    r"\b(?:each|every)\s+(?:time|run|session|invocation|pass|turn|round|iteration|start)\b",
    _I,
)
# Strong signs of a loop without memory: with them, any look at the repo is a cold start.
_FRESH = re.compile(
    r"\biterat(?:ing|es?|ive)\b|\biteration\b(?!\s*(?:limit|cap|budget|count|max\w*|:))|"
    r"\b(?:previous|earlier|prior|between|across|past|other|separate)\s+iterations\b|"
    r"\biterations\s+(?:do\s+not|don['\u2019]t|share|are\s+stateless|start)\b|"
    r"\bloop\b(?!\s+over)|\b(?:no|without|zero|blank|empty)\s+(?:memory|"
    r"recollection)\b|\bmemory\s+(?:of|between)\b|\bremember\w*|\bfresh\b|\bblank\s+slate\b|"
    r"\bempty\s+head\b|\bstarts?\s+cold\b|\bcarr(?:y|ies)\s+over\b|\b(?:earlier|previous|prior)"
    r"\s+(?:runs?|passes|iterations?)\b|\b(?:each|every)\s+(?:iteration|run|pass|time\s+you\s+"
    r"start)\b", _I)
# A first paragraph that only says who the agent is: "You are a senior Go engineer."
_PERSONA = re.compile(
    r"^[*_]*(?:you\s+are|you['\u2019]re|act\s+as|role:)\b[^.!?]{0,160}[.!?]?[*_]*$", _I)
_UNITS = r"(?:phases?|steps?|stages?|items?|tasks?|parts?|milestones?|requirements?|checks?|ones)"
# Pointing at the state itself.
STATE = re.compile(
    r"\bgit\s+(?:status|log|diff|show)\b|\bcurrent\s+(?:state|status)\b|"
    r"\bstate\s+of\s+(?:the\s+)?(?:repo\w*|code\w*|tests?|work|tree|project|things)\b|"
    r"\bwhere\s+(?:things|it|you|we|the\s+\w+|work)\s+(?:stands?|are|is|got\s+to|left\s+off)\b|"
    r"\bleft\s+off\b|\bhow\s+far\b|\bpick\s+up\s+(?:where|from)\b|\bresume\s+(?:from|where|at)\b|"
    rf"\bwhat(?:['\u2019]s|\s+is|\s+has|\s+was)?\s+(?:already\s+)?(?:been\s+)?{_DONE}\b|"
    rf"\bwhat\s+(?:the\s+)?(?:last|previous|earlier)\s+\w+\s+(?:did|left|finished)\b|"
    rf"\bwhich\s+(?:of\s+the\s+)?(?:[\w-]+\s+){{0,2}}?{_UNITS}\s+(?:[\w-]+\s+){{0,3}}?(?:are|is|"
    rf"were|have\s+been)\s+(?:already\s+)?{_DONE}\b|"
    rf"\bwhich\s+(?:of\s+the\s+)?(?:[\w-]+\s+){{0,2}}?{_UNITS}\s+(?:already\s+)?(?:pass|fail|"
    r"remain)\w*\b|"
    r"\balready\s+(?:been\s+)?(?:done|finished|complete[d]?|implemented|in\s+place|ticked|"
    r"passing)\b|"
    r"\b(?:progress|notes|status|todo|checklist|worklog)\w*\.(?:md|txt|json)\b|"
    r"\b(?:progress|notes|status)\s+(?:file|log|notes)\b|\b(?:the\s+)?checklist\b|"
    rf"\b(?:figure|work|find)\s+out\b.{{0,60}}?\b(?:{_DONE}|stands?|where\s+(?:you|things|it))\b|"
    rf"\b(?:determine|identify|establish|assess\w*|decide|confirm|see|note)\b.{{0,60}}?"
    rf"\b(?:{_DONE}|stands?)\b|\bbearings\b|\borient\w*\b|\btake\s+stock\b",
    _I,
)
# Running or reading something: the tests, the log, the code.
# Told, not described: the verb opens a clause or follows "first", "then", "to", "by"...
_TOLD = (r"(?:^|(?<=[.:;,(\u2014\u2013-])\s*|\b(?:first|then|and|please|to|by|should|must|"
         r"always|also|you|now|next|just|so|but|or|simply)\s+)")
_LOOK_VERB = (r"(?:check\w*|inspect\w*|review\w*|look\w*\s+(?:at|in|over|through|there)|"
              r"read\w*|run\w*|ran|examin\w*|skim\w*|open\w*|scan\w*|consult\w*|build\w*|"
              r"compil\w*|survey\w*|explor\w*|execut\w*)")
_LOOK_NOUN = (r"(?:state|status|progress|tests?|suite|specs?|notes|log|diff|results?|output|"
              r"repo\w*|code|files?|tree|checklist|history|commits?)")
LOOK = re.compile(
    rf"{_TOLD}{_LOOK_VERB}\b.{{0,60}}?\b{_LOOK_NOUN}\b|"
    r"\b(?:first|before\s+(?:anything|doing|you|touching|changing|starting)|start\s+(?:by|with)|"
    r"begin\s+(?:by|with))\b.{0,80}?`[^`]+`|"
    rf"{_TOLD}{_LOOK_VERB}\b[^.]{{0,20}}?`[^`]+`",
    _I,
)
# The narrow look that a weaker sign of iterating ("again", "continue") needs.
NARROW_LOOK = re.compile(
    r"\b(?:check|inspect|review|look\s+at|read|run|examine)\b.{0,60}?\b(?:state|status|"
    r"progress|tests?|notes|log|diff|results?|output)\b", _I)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@per_text
def is_cold_start(text: str) -> bool:
    """Whether `text` tells the agent to look at the current state (see the module doc): a
    sign of the loop and a look at the repo count together in one sentence or two in a
    row, not from the two ends of a long background paragraph."""
    if STATE.search(text):
        return True
    sentences = _SENTENCE_END.split(text)
    for at in range(len(sentences)):
        pair = " ".join(sentences[at:at + 2])
        if (_FRESH.search(pair) and LOOK.search(pair)) or (
                ITERATING.search(pair) and NARROW_LOOK.search(pair)):
            return True
    return False


PREAMBLE_BLOCKS = 3
_SECTION_NUMBER = re.compile(r"^\s*+\d{1,2}[.)]\s++[A-Z][\w-]*+(?:\s++[\w-]++){0,3}\s*+$")


def after_task_lines(doc: Document) -> Line | None:
    """The first line of a cold-start paragraph that only task lines come before, if any."""
    # A title or task line that says the loop starts fresh ("# loop prompt: read it every
    # iteration, you have no memory", "You run in a loop with no memory"): what follows may
    # only look at the state.
    fresh_title = False
    for index, block in enumerate(doc.blocks):
        if block.kind == "heading" or _SECTION_NUMBER.match(block.text):
            fresh_title = fresh_title or bool(_FRESH.search(block.text))
            continue  # "1. Applicability": a numbered section's title, written as a list item
        if block.kind == "item" and index and doc.blocks[index - 1].kind == "heading":
            # "on_start:" over "- run: pytest -q", "- run: git log": a label over its list.
            listed = " ".join(item.text for item in doc.list_after(index - 1))
            text = f"{doc.blocks[index - 1].title}: {listed}"
            cold = (fresh_title or bool(_FRESH.search(text))) and is_cold_start(text)
            return doc.blocks[index - 1].first if cold and _preamble(doc, index - 1) else None
        if block.kind != "paragraph" or index > 2 * PREAMBLE_BLOCKS + 1:
            return None
        text = block.text
        items = doc.list_after(index)
        if text.rstrip(" *_").endswith(":"):  # "So first:" over the list of what to look at
            text += " " + " ".join(item.text for item in items)
        elif items and _FRESH.search(text):  # "... from step 0 every time." over "0. Orient."
            text += " " + items[0].text
        if (fresh_title or _FRESH.search(text)) and is_cold_start(text):
            return block.first if _preamble(doc, index) else None
        fresh_title = fresh_title or bool(_FRESH.search(text))  # "You run in a loop ..."
    return None


def _preamble(doc: Document, index: int) -> bool:
    """Whether only task lines come before block `index`: headings and at most
    PREAMBLE_BLOCKS short paragraphs, no table."""
    before = [earlier for earlier in doc.blocks[:index] if earlier.kind != "heading"]
    return len(before) <= PREAMBLE_BLOCKS and all(
        len(earlier.lines) <= 3 and not earlier.text.lstrip().startswith("|")
        for earlier in before)


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
    # A list first is the cold start's own list only when its heading or first item says so.
    if block.kind == "item" and is_cold_start(" ".join(line.text for line in lines)) is False and (
            _FRESH.search(" ".join(line.text for line in lines))
            or LOOK.search(block.text) or STATE.search(block.text)):
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


@per_document
def cold_start_lines(doc: Document) -> frozenset[int]:
    """The numbers of the lines of the cold start at the top, when the prompt opens with
    one ("First check the state" there is no phase); none when it opens with the task."""
    lines = opening(doc)
    if not lines or not is_cold_start(" ".join(line.text.strip() for line in lines)):
        return frozenset()
    return frozenset(line.number for line in lines)


# Orienting before the work: the first instruction reads the state the loop keeps ("0a.
# Study `specs/*`", "Read POLISH.md. Pick the first pending item", "Read learnings.json and
# CLAUDE.md first", "Before anything, read PROGRESS.md and find the current sprint").
_STATE_FILE = (r"(?:`[^`]+`|@[\w./*-]+|\b[\w./*-]+\.(?:md|json|txt|ya?ml|toml|log)\b|"
               r"\bspecs?/|\b(?:the\s+)?(?:plan|progress\s+(?:log|file|notes)|notes|backlog|"
               r"todo\s+list|checklist|fix\s+plan)\b)")
ORIENTS = re.compile(
    r"^[\s>*_-]*(?:\d{1,2}[a-z]?[.)]\s*)?[*_]*(?:first[,:]?\s+|before\s+(?:anything|doing\s+"
    r"anything|you\s+(?:start|begin))[^,.]{0,20},\s*)?(?:read|study|review|re-?read|check|"
    rf"inspect|look\s+(?:at|over)|open|load)[*_]*\s+[^.]{{0,80}}?{_STATE_FILE}|"
    # "**Before starting a task:** Find it in @fix_plan.md and note its status"
    r"^[\s>*_-]*(?:\d{1,2}[a-z]?[.)]\s*)?[*_]*before\s+(?:starting|beginning|picking|you\s+"
    r"(?:start|begin|pick))(?:\s+(?:a|the|any|each|your|work\s+on))?(?:\s+(?:task|item|story|"
    r"iteration|work))?[*_]*\s*[:,][*_]*\s*(?:read|study|review|check|inspect|look\s+(?:at|up|"
    rf"over)|open|find|locate)[*_]*\s+[^.]{{0,80}}?{_STATE_FILE}", _I)
ORIENTING_BLOCKS = 6  # how far into the prompt the first instruction is looked for


def orienting_step(doc: Document) -> Line | None:
    """The line of an orienting first instruction (`ORIENTS`) among the prompt's first
    ORIENTING_BLOCKS paragraphs and list items, if any."""
    seen = 0
    for _, block in doc.prose():
        if block.kind == "heading":
            continue
        for sentence in block.sentences()[:2]:
            if ORIENTS.match(sentence.text):
                return sentence.line_at()
        seen += 1
        if seen >= ORIENTING_BLOCKS:
            break
    return None


# Looking for what is already there before building it, anywhere in the prompt of a loop:
# "Search the codebase before assuming something isn't implemented", "Check the code before
# concluding a feature is missing". With a sign of the loop (`ITERATING`) anywhere, it is
# the seed's "determine what has already been completed".
_ALREADY_THERE = re.compile(
    r"\b(?:search|check|grep|inspect|read|explore|look\s+(?:at|through|in))\w*\b[^.]{0,60}?"
    r"\bbefore\s+(?:assuming|concluding|deciding)\b[^.]{0,60}?\b(?:isn['\u2019]t|is\s+not|"
    r"not\s+(?:yet\s+)?(?:implemented|there|done|built)|missing|absent|unimplemented)", _I)


# The record a loop keeps between iterations: "Update @fix_plan.md with your learnings",
# "Keep .ralph/AGENT.md updated", "Mark items complete in @fix_plan.md".
_KEEPS_RECORD = re.compile(
    r"\b(?:update|keep)\b[^.]{0,30}?(?<![\w./@-])(?:[\w.@-]*/[\w./@-]*|@[\w./-]+|"
    r"[\w.-]+\.(?:md|json|txt)\b)"
    r"[^.]{0,20}?\b(?:with|updated)\b|"
    r"\bmark\b[^.]{0,30}?\b(?:complete\w*|done|finished)\s+in\b", _I)


def looks_before_building(doc: Document) -> Line | None:
    """The line telling the agent of a loop to look for what is already done before it
    builds (`_ALREADY_THERE`), when the prompt says anywhere that it is a loop and names the
    record it keeps between iterations (`_KEEPS_RECORD`)."""
    found = next((sentence.line_at() for sentence in doc.sentences()
                  if _ALREADY_THERE.search(sentence.text)), None)
    if found is None:
        return None
    prose = [block.text for _, block in doc.prose()]
    if not (any(_FRESH.search(text) for text in prose)
            and any(_KEEPS_RECORD.search(text) for text in prose)):
        return None
    return found
