"""Reading a report page back the way a browser would parse its markup: every element with
its attributes, and the text, so a test can say what the page holds as a whole."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Parsed:
    elements: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    text: str = ""

    def with_attribute(self, name: str) -> list[dict[str, str]]:
        return [attrs for _, attrs in self.elements if name in attrs]

    def tags(self) -> set[str]:
        return {tag for tag, _ in self.elements}

    def by_id(self, wanted: str) -> tuple[str, dict[str, str]]:
        return next((tag, attrs) for tag, attrs in self.elements if attrs.get("id") == wanted)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parsed = Parsed()
        self.pieces: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.parsed.elements.append((tag, {key: value or "" for key, value in attrs}))
        if tag == "style":
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.pieces.append(data)


def parse(page: str) -> Parsed:
    reader = _Reader()
    reader.feed(page)
    reader.close()
    reader.parsed.text = "".join(reader.pieces)
    return reader.parsed


def outside_references(parsed: Parsed) -> list[str]:
    """Every attribute that could make a browser fetch something: what is not a link to a
    part of the page itself, or the empty inline icon, is listed."""
    found = []
    for tag, attrs in parsed.elements:
        for name in ("src", "href", "action", "srcset", "poster", "data", "xlink:href"):
            value = attrs.get(name)
            if value is not None and not value.startswith("#") and value != "data:,":
                found.append(f"{tag} {name}={value}")
    return found
