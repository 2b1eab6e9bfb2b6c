"""The authoring rooms keep their import rules: nothing from the hooks or the CLI, and no
circle between two authoring modules (module-level imports, read from the source)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "scripts" / "finesse"
AUTHORING = PACKAGE / "authoring"
ALLOWED = ("finesse.authoring", "finesse.errors", "finesse.schema", "finesse.models",
           "finesse.signals", "finesse.support", "finesse.state", "finesse.loop")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, *, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("finesse")}


MODULES = {module_name(path): path for path in sorted(AUTHORING.rglob("*.py"))}


def test_authoring_imports_only_the_rooms_below_it() -> None:
    wrong = {name: sorted(target for target in imports(path, top_level_only=False)
                          if not target.startswith(ALLOWED))
             for name, path in MODULES.items()}
    assert {name: targets for name, targets in wrong.items() if targets} == {}


def test_no_import_circle_between_authoring_modules() -> None:
    graph = {name: {target for target in imports(path, top_level_only=True)
                    if target in MODULES and target != name}
             for name, path in MODULES.items()}
    done: set[str] = set()

    def visit(name: str, trail: tuple[str, ...]) -> None:
        assert name not in trail, " -> ".join((*trail, name))
        if name in done:
            return
        for target in graph[name]:
            visit(target, (*trail, name))
        done.add(name)

    for name in graph:
        visit(name, ())


def test_modules_over_300_lines_say_why_in_their_docstring() -> None:
    long = {name: len(path.read_text().splitlines()) for name, path in MODULES.items()
            if len(path.read_text().splitlines()) > 320}
    unexplained = [name for name in long
                   if "one piece" not in (ast.get_docstring(ast.parse(
                       MODULES[name].read_text())) or "")]
    assert unexplained == [], long
