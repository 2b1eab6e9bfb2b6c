"""Hostile text by shape, `size` characters long (about): what a quadratic reader chokes on.
Shared by the prompt checker's untimed growth tests and `bench/validate_bench.py`, so the
benchmark times exactly the shapes the tests count. Standard library only."""

from __future__ import annotations

from collections.abc import Callable


def repeated(unit: str) -> Callable[[int], str]:
    """`unit` repeated to about `size` characters (at least once)."""
    return lambda size: unit * max(1, size // len(unit))


SHAPES: dict[str, Callable[[int], str]] = {
    "spaces": lambda size: " " * (size - 1) + "x",
    "open-tags": repeated("<promise>"),
    "tags": repeated("x\n<promise>A</promise>\n"),
    "code-spans": repeated("`a` "),
    "list-items": repeated("- item\n"),
    "numbered-steps": repeated("1. Run `make test` and fix what fails.\n"),
    "headings": repeated("## Phase\nDo it.\n"),
    "stars": lambda size: "*" * size,
    "sentences": repeated(". "),
    "phases": lambda size: "".join(f"Phase {n}: step {n}. Verify: `make test`\n"
                                   for n in range(1, max(2, size // 40))),
}
