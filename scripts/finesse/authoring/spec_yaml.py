"""A spec's YAML, read within bounds: at most MAX_DEPTH levels of nesting, and at most
`max_chars` characters once every alias (`*name`) is expanded.

The file's own size limit says nothing of what its aliases expand to: a 5 KB file that
reuses a 4 KB string through a list of aliases, in 25 phases, renders a 1.9 MiB prompt. So
the composed node graph is measured before anything is built from it, each node once (a
node reached again through an alias adds its size again, without being walked again), and
a node that contains itself is refused. Nesting is counted as the composer descends, so a
document 100,000 levels deep is refused at level MAX_DEPTH instead of exhausting the stack.
"""

from __future__ import annotations

from typing import Any

import yaml  # type: ignore[import-untyped]

MAX_DEPTH = 100


class SpecYamlError(ValueError):
    """The YAML is well formed but out of bounds; the message is one line."""


class _BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise SpecYamlError(f"it nests deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def expanded_size(root: Any) -> int:
    """The characters of scalars plus one for each node, as if every alias were written
    out. Each distinct node is measured once; SpecYamlError for a node inside itself."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise SpecYamlError("an alias refers to a node that contains it")
        open_nodes.add(key)
        if isinstance(node, yaml.ScalarNode):
            total = 1 + len(node.value)
        elif isinstance(node, yaml.SequenceNode):
            total = 1 + sum(size(item) for item in node.value)
        else:  # a MappingNode: (key, value) pairs
            total = 1 + sum(size(k) + size(v) for k, v in node.value)
        open_nodes.discard(key)
        sizes[key] = total
        return total

    return size(root)  # the depth is bounded by the composer: recursion is safe here


def load_bounded(text: str, max_chars: int) -> Any:
    """The data of one YAML document; yaml.YAMLError when it is malformed, SpecYamlError
    when it is out of bounds."""
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if expanded_size(node) > max_chars:
            raise SpecYamlError(
                f"its aliases (*name) expand past the limit of {max_chars // 1024} KiB of "
                "text: write the repeated text once, or shorten it")
        return loader.construct_document(node)
    finally:
        loader.dispose()
