"""A checkout of the plugin to measure: how Claude Code starts its Stop hook, and which loop
state its schema accepts.

Two layouts exist: `hooks/launch.py stop` (one launcher for every event) and, before it,
`hooks/stop.py`. The loop state is strict (unknown fields refused), so each checkout gets a
state file holding only the fields of its own `LoopState`, read from its
`scripts/finesse/models.py` without importing it, in its format: version 1 kept the
transcript cursor in three flat fields, version 2 in one `cursor` record. A checkout whose
`LoopState` has no transcript cursor cannot be measured on the paths that need one: its
scenarios say so.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CURSOR_FIELDS = frozenset({"transcript_offset", "transcript_identity", "recent_message_ids"})


@dataclass(frozen=True)
class PluginRoot:
    name: str  # "main" (this checkout) or "compare" (--compare-root)
    path: Path
    entry: tuple[str, ...]  # the hook's arguments after `python3 -S`
    state_fields: frozenset[str]  # LoopState's fields
    iteration_fields: frozenset[str]  # IterationRecord's fields

    @property
    def layout(self) -> str:
        return " ".join([str(Path(self.entry[0]).relative_to(self.path)), *self.entry[1:]])

    @property
    def has_cursor(self) -> bool:
        """Whether a loop can hold a usage cursor (where the last stop read to)."""
        return "cursor" in self.state_fields or self.state_fields >= CURSOR_FIELDS

    @property
    def records_usage(self) -> bool:
        """Whether a stop records the iteration's token usage from the transcript."""
        return self.has_cursor and "usage" in self.iteration_fields

    def hook_argv(self, python: str) -> list[str]:
        return [python, "-S", *self.entry]

    def state(self, fields: dict[str, Any]) -> bytes:
        """A loop state file this checkout's schema accepts, from the fields of a version 1
        file: in version 2 with a `cursor` record when the checkout has one; fields it lacks
        are left out."""
        fields = dict(fields)
        if "cursor" in self.state_fields:
            fields["version"] = 2
            if "transcript_offset" in fields:
                fields["cursor"] = {"offset": fields.pop("transcript_offset"),
                                    "identity": fields.pop("transcript_identity", ""),
                                    "recent_ids": fields.pop("recent_message_ids", [])}
        return json.dumps({key: value for key, value in fields.items()
                           if key in self.state_fields}, indent=2).encode()


def _fields(source: str, class_name: str) -> frozenset[str]:
    """The annotated fields of a dataclass in `source`, by name (nothing is imported)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return frozenset(
                item.target.id for item in node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                and "ClassVar" not in ast.unparse(item.annotation)
            )
    return frozenset()


def load_root(path: Path, name: str) -> PluginRoot:
    """The checkout at `path`; ValueError when it has no Stop hook or no loop schema."""
    path = path.resolve()
    if (path / "hooks" / "launch.py").is_file():
        entry: tuple[str, ...] = (str(path / "hooks" / "launch.py"), "stop")
    elif (path / "hooks" / "stop.py").is_file():
        entry = (str(path / "hooks" / "stop.py"),)
    else:
        raise ValueError(f"{path}: neither hooks/launch.py nor hooks/stop.py: not a finesse "
                         "checkout")
    models = path / "scripts" / "finesse" / "models.py"
    try:
        source = models.read_text(encoding="utf-8")
    except OSError as err:
        raise ValueError(f"{path}: cannot read scripts/finesse/models.py ({err})") from err
    state_fields = _fields(source, "LoopState")
    if not state_fields:
        raise ValueError(f"{models}: no LoopState dataclass")
    return PluginRoot(name, path, entry, state_fields, _fields(source, "IterationRecord"))
