"""The package's layout holds: every module lives in one room, imports only from its own room
or the rooms below it, and no two modules import each other, directly or in a circle. Lazy
imports inside functions count too. The rooms, bottom up, are those of docs/design.md's
Rooms section."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "scripts" / "finesse"

# Bottom up: a module may import from its own room and the rooms before it.
ROOMS = (
    ("records", ("finesse", "finesse.errors", "finesse.record", "finesse.results",
                 "finesse.schema", "finesse.models",
                 "finesse.judging.records")),
    ("support", ("finesse.support",)),
    ("state", ("finesse.state",)),
    ("core", ("finesse.signals", "finesse.prompts", "finesse.spend", "finesse.recording",
              "finesse.engine", "finesse.judging")),
    ("loop", ("finesse.loop",)),
    ("authoring", ("finesse.authoring",)),
    ("headless", ("finesse.headless",)),
    ("hooks", ("finesse.hooks",)),
    ("cli", ("finesse.cli",)),
)
MAX_LINES = 300
# Modules allowed over MAX_LINES: each docstring says why it must be one piece.
LONG_MODULES: frozenset[str] = frozenset({"finesse.support.git"})
# The one door to git: only these modules import GitPython or build a command line that
# starts with `git`. ci.steps writes git commands into a workflow file's text, never runs them.
GIT_DOORS = frozenset({"finesse.support.git", "finesse.support.git_index"})
GIT_TEXT_ONLY = frozenset({"finesse.headless.ci.steps"})


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def room_of(name: str) -> int:
    best: tuple[int, int] | None = None  # (prefix length, rank)
    for rank, (_, prefixes) in enumerate(ROOMS):
        for prefix in prefixes:
            matches = name == prefix or (prefix != "finesse" and name.startswith(prefix + "."))
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), rank)
    assert best is not None, f"{name} is in no room: add it to ROOMS and docs/design.md"
    return best[1]


def imports_of(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """The finesse modules `name` imports (`from finesse.x import y` names finesse.x.y when
    that is a module, else finesse.x)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "finesse":
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if base.split(".")[0] != "finesse":
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield candidate if candidate in known else base


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: {target for target in imports_of(name, path, known)
                   if target in known and target != name}
            for name, path in found.items()}


def test_every_module_is_in_a_room() -> None:
    for name in modules():
        room_of(name)


def test_no_module_imports_from_a_room_above_its_own() -> None:
    upward = sorted(
        f"{source} ({ROOMS[room_of(source)][0]}) -> {target} ({ROOMS[room_of(target)][0]})"
        for source, targets in graph().items() for target in targets
        if room_of(target) > room_of(source)
    )
    assert upward == []


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle() -> None:
    # A package's __init__ importing its own submodules is not a circle of the layout.
    edges = {source: {target for target in targets if not source.startswith(target + ".")}
             for source, targets in graph().items()}
    assert _cycles(edges) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("name", sorted(modules()))
def test_modules_stay_small(name: str) -> None:
    lines = len(modules()[name].read_text(encoding="utf-8").splitlines())
    if name in LONG_MODULES:
        doc = ast.get_docstring(ast.parse(modules()[name].read_text(encoding="utf-8"))) or ""
        assert "one piece" in doc, f"{name}: say in the docstring why it must be one piece"
    else:
        assert lines <= MAX_LINES, f"{name} has {lines} lines: split it, or say why not"


GIT_VERBS = frozenset({
    "add", "branch", "cat-file", "checkout", "clean", "commit", "config", "diff", "grep",
    "hash-object", "init", "log", "ls-files", "merge", "read-tree", "reset", "restore",
    "rev-parse", "show", "stash", "status", "update-index", "worktree", "write-tree"})


def git_uses(path: Path) -> Iterator[int]:
    """Lines where a module imports GitPython or builds a command line whose program is git
    (a list or tuple that starts with "git" and names a git verb or an option)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            imported = [node.module or ""]
        else:
            imported = []
        if any(name.split(".")[0] == "git" for name in imported):
            yield getattr(node, "lineno", 0)
        elif isinstance(node, (ast.List, ast.Tuple)) and node.elts \
                and isinstance(node.elts[0], ast.Constant) and node.elts[0].value == "git":
            words = [e.value for e in node.elts[1:]
                     if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if any(word in GIT_VERBS or word.startswith("-") for word in words):
                yield node.lineno


def test_git_runs_only_through_its_door() -> None:
    found = {name: lines for name, path in modules().items()
             if name not in GIT_DOORS | GIT_TEXT_ONLY and (lines := sorted(set(git_uses(path))))}
    assert found == {}, "run git through finesse.support.git, not here"


def test_the_git_door_check_sees_a_git_command(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import subprocess\nsubprocess.run(['git', 'status'])\n"
                      "from git import Repo\nFIELDS = ('git', 'subagents')\n"
                      "COMMAND = ('git', '-C', 'x', 'log')\n", encoding="utf-8")
    assert sorted(git_uses(sample)) == [2, 3, 5]
