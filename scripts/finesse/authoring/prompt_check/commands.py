"""The commands a prompt gives, wherever it gives them, and what it calls them.

People give commands in code spans, in code blocks (fenced, or indented under a label such
as "Tests:"), in tables ("| tidy | `run-clang-tidy -p build` |") and in lists
("- Lint: `npm run lint`"), then refer to them by their program ("Rebuild with latexmk after
every change") or by the name they gave them ("tidy and format are clean"). `programs` and
`command_names` find both, so the checks can read such references as the commands they
stand for.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from finesse.authoring.prompt_check.document import LIST_MARKER, Block, Document
from finesse.authoring.prompt_check.tables import tables
from finesse.authoring.prompt_check.vocabulary import CODE_SPAN, mentions_command

_PIECES = re.compile(r"&&|\|\||[|;]|\bthen\b")
# A program's name: not a file name ("mix.lock"), not a constant or an HTTP verb ("GET").
_PROGRAM_WORD = re.compile(r"^(?![A-Z\d_-]+$)[A-Za-z][\w+-]+$")
_ARGUMENT = re.compile(r"^(?:-{1,2}\w|[a-z][\w-]*$|['\"@]|\S*[/.]\S)")
_CODE_NOT_COMMAND = frozenset({"=", "==", ":", "->", "=>", "+=", ":=", "<-"})
# Programs whose names are also everyday English words: named in prose, they are words.
_ENGLISH = frozenset({
    "make", "run", "test", "check", "find", "time", "open", "read", "write", "sort", "head",
    "tail", "echo", "export", "source", "env", "true", "false", "yes", "which", "type",
    "build", "install", "format", "lint", "diff", "kill", "touch", "watch", "sudo", "exec",
    "the", "and", "clean", "verify", "start", "stop", "list", "show", "print", "do", "done",
    "for", "if", "else", "while", "exit", "no", "not", "all", "any", "already", "get", "set",
    "assert", "return", "import", "with", "invalid", "unknown", "image", "json", "config",
    "go", "cd", "rm",
})
_WRAPPERS = frozenset({"sudo", "env", "time", "npx", "exec", "bundle", "poetry", "uv", "pipx"})
_INDENTED = re.compile(r"^(?: {4}|\t)")
_NAMED_ITEM = re.compile(rf"^\s*+{LIST_MARKER}?\s*+[*_]*+(?P<name>[\w][\w +/.-]{{0,30}}?)"
                         r"[*_]*\s*:[*_]*\s*(?=`)")
_MAX_NAME_WORDS = 4
# Labels that say what follows, not which command it is: "- Verify: `...`", "Only: `...`".
_LABEL_WORDS = frozenset({
    "verify", "verification", "check", "checks", "command", "commands", "run", "done", "scope",
    "in scope", "out of scope", "only", "rules", "goal", "task", "notes", "files", "order",
    "steps", "then", "and", "or", "e.g", "example",
})


def invocation(text: str) -> bool:
    """Whether `text` runs a program: `./script ...`, a known program (`pytest -q`), or a
    program word with arguments (`latexmk -pdf main.tex`, `dune build @all`). A lone word
    (`relay`) or a path (`src/app.py`) is none."""
    words = text.strip().lstrip("$ ").split()
    if not words:
        return False
    if words[0].startswith(("./", "../")) or mentions_command(words[0]):
        return True
    return (len(words) >= 2 and bool(_PROGRAM_WORD.match(words[0]))
            and words[1] not in _CODE_NOT_COMMAND
            and any(_ARGUMENT.match(word) for word in words[1:4]))


def command_texts(doc: Document) -> Iterator[str]:
    """Every command the prompt gives: code block lines, indented lines under a label, and
    code spans, that run a program."""
    for index, block in enumerate(doc.blocks):
        if block.kind == "code" or _indented(block, doc, index):
            yield from block_commands(doc, index)
        else:
            yield from (span.strip("`") for span in CODE_SPAN.findall(block.text)
                        if invocation(span.strip("`")))


def block_commands(doc: Document, index: int) -> list[str]:
    """The commands a code block (fenced, or indented four spaces) at `index` gives."""
    block = doc.blocks[index]
    if block.kind != "code" and not _indented(block, doc, index):
        return []
    lines = [line.text.strip().lstrip("$ ") for line in block.lines]
    return [line for line in lines if invocation(line)]


def programs(doc: Document) -> frozenset[str]:
    """The programs the prompt's commands run (`hugo ... && htmltest` runs hugo and
    htmltest), lower-cased, less those that are everyday words."""
    found: set[str] = set()
    for command in command_texts(doc):
        for piece in _PIECES.split(command):
            words = [word for word in piece.split() if "=" not in word]
            while len(words) > 1 and words[0].lower() in _WRAPPERS:
                words = words[1:]
            if words:
                program = words[0].rsplit("/", 1)[-1].lower()
                if _PROGRAM_WORD.match(program) and program not in _ENGLISH:
                    found.add(program)
    return frozenset(found)


def command_names(doc: Document) -> frozenset[str]:
    """The names a prompt gives its commands: the other cell of a table row that holds one,
    a list item's label ("- tidy: `...`"), a label above a code block ("Lint:")."""
    names: set[str] = set()
    for table in tables(doc):
        for _, row in table.rows:
            if any(_is_command(cell) for cell in row[1:]) and "`" not in row[0]:
                names.add(row[0])
    for index, block in enumerate(doc.blocks):
        named = _NAMED_ITEM.match(block.text) if block.kind == "item" else None
        if named and _is_command(block.text[named.end():].split("`", 2)[1].join("``")):
            names.add(named.group("name"))
        elif (block.kind == "paragraph" and block.text.endswith(":")
              and index + 1 < len(doc.blocks)
              and (doc.blocks[index + 1].kind == "code"
                   or _indented(doc.blocks[index + 1], doc, index + 1))):
            names.add(re.split(r"[(:]", block.text, maxsplit=1)[0])
    cleaned = {name.strip(" *_`").lower() for name in names}
    return frozenset(name for name in cleaned
                     if name and not name.isdigit() and name not in _LABEL_WORDS
                     and len(name.split()) <= _MAX_NAME_WORDS)


def names_in(text: str, names: frozenset[str]) -> bool:
    """Whether `text` refers to one of the prompt's command names ("Run **test** and
    **lint** after every change")."""
    plain = text.replace("*", "").replace("`", "")
    return any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", plain, re.IGNORECASE)
               for name in names)


def _is_command(cell: str) -> bool:
    return any(invocation(span.strip("`")) for span in CODE_SPAN.findall(cell))


def _indented(block: Block, doc: Document, index: int) -> bool:
    """A paragraph indented four spaces, not under a list item: Markdown's indented code."""
    if block.kind != "paragraph" or not all(_INDENTED.match(line.text) for line in block.lines):
        return False
    earlier = [b for b in doc.blocks[:index] if b.kind != "code"]
    return not earlier or earlier[-1].kind != "item"
