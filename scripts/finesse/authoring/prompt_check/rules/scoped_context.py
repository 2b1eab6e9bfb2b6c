"""Which paths a prompt puts in scope and which it puts off limits.

A path is a code span holding one path-shaped word (`src/app/`, `models.py`, `*.sql`) or a
bare word that is plainly a path (ends in `/`, has a known extension, or two slashes).
Commands in code spans (`pytest tests/ -q`) are not paths. A path is out of scope when its
clause says so ("out of scope", "leave ... alone", "do not touch", "read-only") or when it
sits under a heading that says so, or when a clause points back at it ("`plugins/` is
shared with other teams; leave it alone"); every other path the prompt names is one that
matters. Limiting the work to the paths named ("Only modify files in `src/`") puts every
other path out of scope. In a prompt written as YAML-style keys, each key opens a clause of
its own and says which side its paths are on ("scope_in: src/", "scope_out: vendor/",
"files_off_limits: public/").

A prompt that opens the whole repository to the agent ("You can change whatever you need to,
anywhere in the repository") scopes nothing, whatever paths it names elsewhere
(`opens_everything`), as saying there is no cap fails attribute 9.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from finesse.authoring.prompt_check.document import Document, Line
from finesse.authoring.prompt_check.memo import per_text
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict, failed, passed

_I = re.IGNORECASE
_EXTENSIONS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|go|rs|rb|java|kt|swift|c|h|cc|cpp|hpp|cs|php|md|rst|txt|"
    "json|toml|yaml|yml|ini|cfg|lock|sql|sh|html|css|scss|proto|xml|csv|env|example|gradle|"
    "props|csproj|fsproj|sln|cabal|hs|ex|exs|erl|lua|kts|scala|tf|tfvars|tpl|rake|gemspec|vue|"
    "svelte|dart|zig|nim|ml|mli|jl|r|pl|pm|bzl|cmake|mk"
)
_CODE_SPAN = re.compile(r"`([^`]+)`")
# A folder most projects have, so that "src/Contoso.Billing.Legacy" reads as a path.
_ROOT_DIR = re.compile(r"^(?:src|lib|app|apps|tests?|docs?|pkg|cmd|internal|scripts|packages)/\S",
                       re.IGNORECASE)
_HAS_EXTENSION = re.compile(rf"\.(?:{_EXTENSIONS})$", _I)
_BARE_PATH = re.compile(
    # The lookbehind keeps a match from starting inside a word: without it a run of "*"
    # or "." would be tried from every position, which takes quadratic time.
    rf"(?<![\w/.*`-])(?:\.{{0,2}}/)?(?:[\w.*-]+/)+(?:[\w.*-]+)?|"
    rf"(?<![\w/.*`-])[\w*-]+\.(?:{_EXTENSIONS})\b",
    _I,
)
# A YAML-style key ("scope_out: ...", "files_off_limits: ...") starts a clause of its own;
# its words are read as words ("files off limits").
_SNAKE_KEY = r"[a-z][a-z\d]*(?:_[a-z\d]+)+:(?=\s)"
_CLAUSE_BREAK = re.compile(rf";\s+|(?<!\s)\s++—\s+|(?<!\s)\s++(?={_SNAKE_KEY})", _I)
_KEY_AT_START = re.compile(rf"^\s*+{_SNAKE_KEY}", _I)
_OUT = re.compile(
    r"\bout[- ]of[- ]scope\b|\bnot\s+in\s+scope\b|\bscope\s+out\s*:|\boff[- ]limits\b|"
    r"\bread[- ]only\b|"
    # "Leave `deploy/` alone", "leave those two exactly as they are", "keep X unchanged".
    r"\bhands\s+off\b|\b(?:leave|keep)\b.{0,80}?\b(?:alone|untouched|unchanged|intact|"
    r"as[- ]is|as\s+(?:it|they)\s+(?:is|are|was|were|stands?)|be(?=\s*(?:[.;,!)]|$)))\b|"
    r"\b(?:not|never|don['\u2019]?t|mustn['\u2019]?t)\b[^.;:]{0,25}?\b(?:touch|chang|modif|edit|updat|delet|"
    r"remov|renam|rewrit|reformat|push|commit)\w*|"
    r"\b(?:fine|good|ok(?:ay)?)\s+as\s+(?:it|they)\s+(?:is|are|stands?)\b|"
    r"\bleave\s+(?:them|it|those|these)\s*[.;!]?\s*$|"
    r"\bstays?\s+as\s+(?:(?:it|they)\s+(?:is|are)|is)\b|\bstays?\s+(?:unchanged|untouched|the\s+same)\b|"
    r"\b(?:must|should)\s+stay\b|\boutside\s+(?:of\s+)?(?:this|the)\s+(?:task|scope|work|change)\b|"
    r"\bowned\s+by\s+(?:another|other|a\s+different)\b|"
    r"\b(?:untouchable|frozen|excluded|ignore)\b|\bnothing\s+(?:else|outside)\b|"
    r"\bnot\s+(?:allowed|permitted)\b|\b(?:forbidden|prohibited)\b|"
    r"(?:\bnot|n['\u2019]t)\s+(?:a\s+)?part\s+of\s+(?:this|the\s+(?:task|work|change|scope|job))\b|"
    r"\bout\s+of\s+bounds\b|\bno[- ]go\b|\bmay\s+not\b|"
    r"\b(?:not|never|don['\u2019]?t)\s+(?:go|come|wander)\s+(?:near|into)\b|\b(?:except|but\s+not)(?:\s+for)?\s+(?=`|\S*/)|"
    r"\bnothing\s+(?:under|in|inside|within|from)\s+(?=`|\S*/)|"
    # A clause that opens with the refusal: "`src/` only; never `dist/`".
    r"^\s*+(?:and\s+|but\s+)?(?:never|not)\s+(?=`|\S*/)",
    _I,
)
# Limiting the work to the paths named makes every other path out of scope: "Only modify
# files in `src/`", "Confine your edits to ...", "Touch only: ...", "Stay in `ops/`".
_RESTRICTED = re.compile(
    # (not "Only commit files you touched": what goes in a commit, not where the work is)
    r"^[\s*_-]*+only\b(?!\s+(?:commit|stage|add|push)\b)|"
    r"\bonly\s+(?:modify|edit|touch|change|work|write)\w*|"
    r"\b(?:modify|edit|touch|change|work|write)\w*\s+(?:files\s+)?only\b|\bconfine\w*\b|"
    r"\bexclusively\b|\bnothing\s+else\b|\bonly\s*[.!]?\s*$|"
    # "Keep your edits to `src/sync/`", "Stay in `ops/scripts/`", "Stick to `lib/`".
    r"\bkeep\s+(?:your\s+|all\s+|the\s+)?(?:edits|changes|work|modifications)\s+(?:to|in|"
    r"within|inside)\b|\b(?:stay|remain)\s+(?:in|within|inside)\b|\bstick\s+to\b",
    _I,
)
# "... are shared with other teams; leave them alone": the paths of the clause before.
_POINTS_BACK = re.compile(r"\b(?:them|it|those|these|they)\b", _I)
_IN = re.compile(
    r"(?<!not\s)\bin[- ]scope\b|\bscope\s+in\s*:|\bonly\s+(?:touch|edit|change|modify|work|write)|"
    r"\b(?:touch|edit|change|modify|work|write)\w*\s+only\b|\bwork(?:ing)?\s+(?:only\s+)?in\b|"
    r"\byou\s+may\s+(?:edit|change|touch|modify|write)|\brelevant\b|\bmatters?\b|\bfocus\s+on\b|"
    r"(?<!not\s)(?<!never\s)\ballowed\b",
    _I,
)
_EVERYTHING_ELSE = re.compile(
    r"\b(?:everything|anything|nothing|all\s+other|any\s+other)\s+(?:else|files?|paths?|"
    r"outside)\b", _I
)
# A short refusal after a clause's paths points back at them: "`vendor/` is third-party —
# hands off".
_SHORT_CLAUSE_WORDS = 3


@dataclass(frozen=True)
class Scope:
    in_scope: tuple[tuple[str, Line], ...]
    out_of_scope: tuple[tuple[str, Line], ...]
    # "... and nothing else", "Only modify files in ...": every path not named is out
    rest_is_out: Line | None


@dataclass(frozen=True)
class _Clause:
    """What one clause says about scope, whatever line it is on."""
    paths: tuple[str, ...]
    said_out: bool  # "Do not modify ...", "Out of scope: ..."
    rest_is_out: bool  # said out, names no path, and means everything else
    points_back: bool  # said out, names no path, and means the clause before ("leave those")
    pronoun: bool  # a pronoun points back, maybe at the sentence before ("Leave these")
    restricts: bool  # names paths, not said out, and keeps the work to them ("Only ...")


@per_text
def _read_clause(clause: str) -> _Clause:
    words = _KEY_AT_START.sub(lambda key: key.group(0).replace("_", " "), clause)
    said_out = bool(_OUT.search(words)) and not _IN.search(words)
    paths = tuple(paths_in(clause))
    bare_out = said_out and not paths
    return _Clause(
        paths, said_out,
        rest_is_out=bare_out and bool(_EVERYTHING_ELSE.search(words)),
        points_back=bare_out and (bool(_POINTS_BACK.search(words))
                                  or len(words.split()) <= _SHORT_CLAUSE_WORDS),
        pronoun=bare_out and bool(_POINTS_BACK.search(words)),
        restricts=bool(paths) and not said_out and bool(_RESTRICTED.search(words)))


@per_text
def _clauses(sentence: str) -> tuple[tuple[int, str], ...]:
    """The sentence's clauses, each with where it starts in the sentence."""
    found, position = [], 0
    for clause in _CLAUSE_BREAK.split(sentence):
        offset = sentence.find(clause, position)
        position = offset + len(clause)
        found.append((offset, clause))
    return tuple(found)


@per_text
def _says_out(title: str) -> bool:
    return bool(_OUT.search(title)) and not _IN.search(title)


def find_scope(doc: Document) -> Scope:
    # Keyed by path and line, so a clause that points back moves its paths in linear time.
    in_scope: dict[tuple[str, int], tuple[str, Line]] = {}
    out_of_scope: list[tuple[str, Line]] = []
    rest_is_out: Line | None = None
    for index, block in doc.prose():
        under_out = any(_says_out(h.title) for h in doc.headings_over(index))
        last: list[tuple[str, Line]] = []  # the paths of the sentence before's last clause
        for sentence in block.sentences():
            before: list[tuple[str, Line]] = []  # the paths of the clause before
            for place, (offset, text) in enumerate(_clauses(sentence.text)):
                clause = _read_clause(text)
                if place == 0 and clause.pronoun:
                    # "Templates exist in `templates/`. Do not modify these."
                    before = last
                if not (clause.paths or clause.said_out or before):
                    continue
                line = sentence.line_at(offset)
                paths = [(path, line) for path in clause.paths]
                if clause.rest_is_out:
                    rest_is_out = rest_is_out or line
                if clause.points_back and before:
                    for path, at in before:
                        in_scope.pop((path, at.number), None)
                    out_of_scope += before
                if clause.restricts and not under_out:
                    rest_is_out = rest_is_out or line
                if clause.said_out or under_out:
                    out_of_scope += paths
                else:
                    in_scope.update(((path, at.number), (path, at)) for path, at in paths)
                before = paths
            last = before
    return Scope(tuple(in_scope.values()), tuple(out_of_scope), rest_is_out)


# An HTTP route after its method names no file: "read-only GET `/api/sources`".
_ROUTE = re.compile(r"\b(?-i:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+`?/[^\s`]*+`?")


def paths_in(clause: str) -> list[str]:
    """The paths a text names, in code spans or plainly path-shaped (not an HTTP route)."""
    if "/" in clause:
        clause = _ROUTE.sub(" ", clause)
    found = [span for span in _CODE_SPAN.findall(clause) if _is_path(span)]
    prose = _CODE_SPAN.sub(" ", clause)
    for match in _BARE_PATH.finditer(prose):
        word = match.group(0).rstrip(".,:")
        if _is_path(word) and (word.endswith("/") or word.count("/") >= 2
                               or _HAS_EXTENSION.search(word) or _ROOT_DIR.match(word)):
            found.append(word)
    return found


def _is_path(word: str) -> bool:
    word = word.strip()
    if not word or any(c.isspace() for c in word) or "://" in word or word.startswith("-"):
        return False
    if not re.search(r"[A-Za-z]", word):
        return False
    return "/" in word or bool(_HAS_EXTENSION.search(word.rstrip("/")))


# Opening the whole tree: "change whatever you need to, anywhere in the repository", "the
# whole codebase is fair game", "touch any file you like", "modify anything in the repo".
_EVERYWHERE = re.compile(
    r"\banywhere\s+in\s+the\s+(?:repo\w*|codebase|project|monorepo|tree)\b|"
    r"\b(?:whole|entire)\s+(?:repo\w*|codebase|project|monorepo)\s+is\s+(?:fair\s+game|in\s+scope|"
    r"yours|open)\b|\beverything\s+is\s+(?:fair\s+game|in\s+scope)\b|"
    r"\b(?:touch|edit|change|modify)\s+any\s+files?\s+(?:you\s+(?:like|want|need)|at\s+all)\b|"
    r"\bno\s+(?:file|path|scope)\s+(?:restrictions?|limits?)\b|"
    r"\b(?:touch|edit|change|modify)\s+anything\s+(?:(?:you\s+(?:like|want|need)|that\s+helps)\b|"
    r"in\s+the\s+(?:repo\w*|codebase|project|monorepo|tree)\b)", _I)
# Any limit in the same sentence takes the opening back: "anywhere in the repo except `infra/`".
_BUT_LIMITED = re.compile(
    r"\b(?:not|never|except|but\s+not|outside|only|apart\s+from|other\s+than|besides|save)\b|"
    r"n['\u2019]t\b", _I)


def opens_everything(doc: Document) -> Line | None:
    """The line of a sentence that lets the agent change anything anywhere, if any."""
    for sentence in doc.sentences():
        if _opens(sentence.text):
            return sentence.line_at()
    return None


@per_text
def _opens(sentence: str) -> bool:
    return bool(_EVERYWHERE.search(sentence)) and not _BUT_LIMITED.search(sentence)


def check(prompt: Prompt) -> Verdict:
    opened = opens_everything(prompt.doc)
    if opened is not None:
        return failed(opened, "name the paths the work is in and the paths to leave alone "
                             "instead of opening the whole repository")
    scope = find_scope(prompt.doc)
    out_line = scope.out_of_scope[0][1] if scope.out_of_scope else scope.rest_is_out
    if scope.in_scope and out_line is not None:
        return passed(out_line)
    if scope.in_scope:
        return failed(scope.in_scope[0][1], "say which paths to leave alone, e.g. "
                                           "'Out of scope: `migrations/`, `vendor/`'")
    if out_line is not None:
        return failed(out_line, "say which paths the work is in, e.g. 'In scope: `src/app/`, "
                               "`tests/`'")
    return failed(None, "name the paths that matter and the paths to leave alone, e.g. "
                       "'In scope: `src/app/`. Out of scope: `migrations/`'")


RULE = Rule(
    id=7,
    key="scoped-context",
    definition=("Tell the agent which files matter and which to leave alone: \"The relevant "
                "files are src/api/, src/models/, and tests/api/. Do not modify anything in "
                "src/ui/.\""),
    check=check,
    passes=(
        "In scope: `cli/main.py`, `tests/test_cli.py`. Out of scope: `vendor/`.\n",
        "The relevant files are src/api/ and tests/api/. Do not modify anything in src/ui/.\n",
        "Work in `app/views.py`. Templates already exist in `templates/`. Do not modify "
        "these.\n",
    ),
    fails=(
        "Change whatever you need to, anywhere in the repository.\n",
        "The relevant files are src/api/ and tests/api/.\n",
        # the sentence after the paths keeps them in scope
        "Work in `app/views.py`. Templates already exist in `templates/`. Reuse these.\n",
        # an HTTP route is no path, and "read-only" about it no scope
        "Work in `app/views.py`. Users see the list of sources (read-only GET `/api/sources`).\n",
        "Only commit `app/views.py` and `NOTES.md`.\n",
    ),
)
