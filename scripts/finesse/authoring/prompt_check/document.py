"""A Markdown prompt as numbered lines grouped into blocks, so every finding names a line.

Blocks are what a reader sees: headings, paragraphs, list items (with their continuation
lines), and code (fenced blocks, YAML front matter, HTML comments). A short line that ends
in a colon right above a list ("Leave alone:") counts as a heading for that list only, and a
line that is all bold or ALL CAPS ("**Rules**", "SCOPE") as a heading of its own level.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from finesse.authoring.prompt_check.breaks import labelled, sentence_breaks
from finesse.authoring.prompt_check.unwrap import unwrapped
from finesse.support.markdown import Fences, heading, section_ends, split_lines

BlockKind = Literal["heading", "paragraph", "item", "code"]

STRONG_LEVEL = 7  # a bold-only or ALL-CAPS line standing in for a heading
LABEL_LEVEL = 8  # "Label:" above a list; it heads that list and nothing else

# A list item's marker: a bullet or a number of up to three digits and "." or ")".
LIST_MARKER = r"(?:[-*+]|\d{1,3}[.)])"
# The marker at the start of an item's text, with the space after it and any checkbox.
ITEM_MARKER = re.compile(rf"^\s*+{LIST_MARKER}\s++(?:\[[ xX]\]\s++)?")
_ITEM = re.compile(r"^(\s*)([-*+]|(\d{1,3})[.)])\s+\S")
_RULE = re.compile(r"^\s*+([-*_])(?:\s*+\1){2,}+\s*+$")
_BOLD_LINE = re.compile(r"^\s*+(\*\*|__)(?P<title>[^*_].*?)\1[\s:.]*$")
_CAPS_LINE = re.compile(r"^\s*+(?P<title>[A-Z][A-Z0-9 &/'()-]{1,40}?)\s*+:?\s*+$")
_LABEL_MAX_WORDS = 8


@dataclass(frozen=True)
class Line:
    number: int  # 1-based, as an editor shows it
    text: str

    def evidence(self) -> str:
        return f"line {self.number}: {self.text.strip()}"


@dataclass(frozen=True)
class Block:
    kind: BlockKind
    lines: tuple[Line, ...]
    level: int = 0  # heading level; indentation for an item
    ordinal: int | None = None  # the number of a numbered list item
    title: str = ""  # a heading's words without markup

    @cached_property
    def _starts(self) -> list[int]:
        starts, offset = [], 0
        for line in self.lines:
            starts.append(offset)
            offset += len(line.text.strip()) + 1
        return starts

    @cached_property
    def text(self) -> str:
        """The block's lines joined by single spaces, as the reader reads them."""
        return " ".join(line.text.strip() for line in self.lines)

    @property
    def first(self) -> Line:
        return self.lines[0]

    def line_at(self, offset: int) -> Line:
        return self.lines[max(0, bisect.bisect_right(self._starts, offset) - 1)]

    def sentences(self) -> tuple[Sentence, ...]:
        return self._sentences

    @cached_property
    def _sentences(self) -> tuple[Sentence, ...]:
        text = self.text
        breaks = list(sentence_breaks(text))
        breaks += [(start - 1, start) for line, start in zip(self.lines, self._starts, strict=True)
                   if start and labelled(line.text.strip())]
        found: list[Sentence] = []
        start = 0
        for end, resume in sorted(set(breaks)):
            if end > start:
                found.append(Sentence(text[start:end], self, start))
            start = max(start, resume)
        found.append(Sentence(text[start:], self, start))
        return tuple(found)


@dataclass(frozen=True)
class Sentence:
    text: str
    block: Block
    offset: int  # where the sentence starts in block.text

    def line_at(self, position: int = 0) -> Line:
        return self.block.line_at(self.offset + position)


@dataclass(frozen=True)
class Document:
    lines: tuple[Line, ...]
    blocks: tuple[Block, ...]

    @classmethod
    def parse(cls, text: str) -> Document:
        raw_lines = unwrapped(split_lines(text))
        lines = tuple(Line(number, raw) for number, raw in enumerate(raw_lines, 1))
        return cls(lines, tuple(_name_headings(list(_split_blocks(lines)))))

    def prose(self) -> Iterator[tuple[int, Block]]:
        for index, block in enumerate(self.blocks):
            if block.kind != "code":
                yield index, block

    def sentences(self) -> Iterator[Sentence]:
        for _, block in self.prose():
            yield from block.sentences()

    def opening(self) -> list[Line]:
        """The first paragraph after any title, with the list it introduces if it ends in ':'."""
        prose = [(index, block) for index, block in self.prose() if block.kind != "heading"]
        if len(prose) > 1 and _is_title(prose[0][1]):
            prose = prose[1:]
        if not prose:
            return []
        index, first = prose[0]
        lines = list(first.lines)
        if first.kind == "paragraph" and first.text.endswith(":"):
            lines += [line for item in self.list_after(index) for line in item.lines]
        return lines

    def list_after(self, index: int) -> list[Block]:
        """The list items right after block `index`, up to the first block that is not one."""
        return list(self.blocks[index + 1 : self._items_end[index + 1]])

    @cached_property
    def _items_end(self) -> list[int]:  # per position, the first at or after it not an item
        ends = [len(self.blocks)] * (len(self.blocks) + 1)
        for index in range(len(self.blocks) - 1, -1, -1):
            ends[index] = ends[index + 1] if self.blocks[index].kind == "item" else index
        return ends

    @cached_property
    def list_starts(self) -> list[int]:
        """Per block, the index of the first item of the run of items holding it (its own
        index when it is no item)."""
        starts: list[int] = []
        for index, block in enumerate(self.blocks):
            continues = block.kind == "item" and index and self.blocks[index - 1].kind == "item"
            starts.append(starts[-1] if continues else index)
        return starts

    def section(self, index: int) -> list[Block]:
        """The blocks under the heading at `index`."""
        if self.blocks[index].level == LABEL_LEVEL:
            return self.list_after(index)
        return list(self.blocks[index + 1 : self._section_ends[index]])

    @cached_property
    def _section_ends(self) -> list[int]:
        return section_ends([block.level if block.kind == "heading" else None
                             for block in self.blocks])

    def headings_over(self, index: int) -> list[Block]:
        """The headings whose sections hold block `index`, innermost first."""
        return self._headings_over[index]

    @cached_property
    def code_lines(self) -> frozenset[int]:
        """The numbers of the lines inside code blocks, front matter and comments."""
        return frozenset(line.number for block in self.blocks if block.kind == "code"
                         for line in block.lines)

    @cached_property
    def _headings_over(self) -> list[list[Block]]:
        covering: list[list[Block]] = []
        open_headings: list[Block] = []  # outermost first
        label: Block | None = None  # heads the items right below it, nothing else
        for block in self.blocks:
            above = list(reversed(open_headings))
            covering.append([label, *above] if label and block.kind == "item" else above)
            if block.kind == "heading" and block.level == LABEL_LEVEL:
                label = block
            elif block.kind == "heading":
                while open_headings and open_headings[-1].level >= block.level:
                    open_headings.pop()
                open_headings.append(block)
                label = None
            elif block.kind != "item":
                label = None
        return covering


def _is_title(block: Block) -> bool:
    """A lone short line without end punctuation: "Loop prompt: CSV export"."""
    text = block.text
    return (block.kind == "paragraph" and len(block.lines) == 1 and len(text) <= 100
            and not text.endswith((".", "!", "?", ":")))


def _split_blocks(lines: tuple[Line, ...]) -> Iterator[Block]:
    index = 0
    if lines and lines[0].text.strip() == "---":  # YAML front matter
        end = next((i for i in range(1, len(lines)) if lines[i].text.strip() == "---"), None)
        if end is not None:
            yield Block("code", lines[: end + 1])
            index = end + 1
    while index < len(lines):
        text = lines[index].text
        if not text.strip() or _RULE.match(text):
            index += 1
            continue
        fences = Fences()
        if fences.step(text) == "open":
            end = index + 1
            while end < len(lines) and fences.step(lines[end].text) != "close":
                end += 1
            yield Block("code", lines[index : end + 1])
            index = end + 1
            continue
        titled = heading(text)
        if titled:
            yield Block("heading", (lines[index],), titled[0], title=titled[1])
            index += 1
            continue
        item = _ITEM.match(text)
        # An indented item ends at a new sentence indented less than its marker: "  - last
        # check" then "Then, and only then, print ..." leaves the list; "and from that
        # decide ..." goes on with it.
        indent = len(item.group(1).expandtabs()) if item else 0
        end = index + 1
        while end < len(lines) and _continues(lines[end].text) and not (
                indent and len(later := lines[end].text.expandtabs()) - len(later.lstrip()) < indent
                and lines[end].text.lstrip()[:1].isupper()):
            end += 1
        chunk = lines[index:end]
        if item:
            number = int(item.group(3)) if item.group(3) else None
            yield Block("item", chunk, len(item.group(1).expandtabs()), ordinal=number)
        elif text.lstrip().startswith("<!--"):
            yield Block("code", chunk)
        else:
            yield Block("paragraph", chunk)
        index = end


def _continues(text: str) -> bool:
    return bool(
        text.strip()
        and Fences().step(text) is None
        and heading(text) is None
        and not _ITEM.match(text)
        and not _RULE.match(text)
    )


def _is_label(text: str) -> bool:
    """A short line that names the list under it: "Leave alone:", "Steps (in order)",
    "Check after every change"; not a sentence ending in a full stop."""
    text = text.strip()
    return len(text.split()) <= _LABEL_MAX_WORDS and (
        text.endswith(":") or not text.endswith((".", "!", ",", ";")))


def _name_headings(blocks: list[Block]) -> Iterator[Block]:
    for index, block in enumerate(blocks):
        if block.kind != "paragraph" or len(block.lines) != 1:
            yield block
            continue
        text = block.first.text
        strong = _BOLD_LINE.match(text) or _CAPS_LINE.match(text)
        before_list = index + 1 < len(blocks) and blocks[index + 1].kind == "item"
        if strong:
            yield Block("heading", block.lines, STRONG_LEVEL, title=strong.group("title"))
        elif before_list and _is_label(text):
            yield Block("heading", block.lines, LABEL_LEVEL, title=text.strip().rstrip(":"))
        else:
            yield block

