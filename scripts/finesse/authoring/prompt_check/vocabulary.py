"""The words the prompt checks look for, in one place so that the checks agree on them.

Every pattern is case-insensitive and is matched against one sentence (or one line, for the
iteration limit) of the prompt, so a phrase never spans two unrelated sentences.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100,
    **{f"twenty-{word}": 20 + value for word, value in
       (("one", 1), ("two", 2), ("three", 3), ("four", 4), ("five", 5), ("six", 6),
        ("seven", 7), ("eight", 8), ("nine", 9))},
}
NUMBER = rf"(\d+|{'|'.join(sorted(NUMBER_WORDS, key=len, reverse=True))})"

_APOSTROPHE = r"['\u2019]"  # straight or curly: people paste text from documents
CODE_SPAN = re.compile(r"`[^`]*`")
# A tag's text runs to its closing tag and never over another opening one: each scan stops
# at the next tag, so a run of unclosed tags is read in linear time.
PROMISE_TAG = re.compile(r"<promise>((?:[^<]|<(?!/?promise>))*+)</promise>", _I)

# Telling the agent to output something, and telling it not to.
_EMIT = (
    r"(?:output|print|emit|say|write|send|reply|respond|return|type|include|claim|declare|"
    r"announce|signal|give|produce|end\s+(?:your\s+\w+\s+)?with)"
)
_NEGATION = (
    rf"(?:do\s+not|don{_APOSTROPHE}?t|never|must\s+not|mustn{_APOSTROPHE}?t|should\s+not|"
    rf"shouldn{_APOSTROPHE}?t|may\s+not|cannot|can{_APOSTROPHE}?t|under\s+no\s+circumstances)"
)
EMIT_WORDS, NEGATION_WORDS = _EMIT, _NEGATION  # for patterns built elsewhere
EMIT = re.compile(rf"\b{_EMIT}\b", _I)
# "Do not stop or claim you are done": a negation governs an emit verb up to three words on.
NEGATED_EMIT = re.compile(rf"\b{_NEGATION}\s+(?:[\w-]+\s+){{0,3}}?{_EMIT}\b", _I)
# "Done = all true → output <promise>X</promise>": an arrow reads as "then".
# "At that point output ..." points at the condition the sentence before states.
_AT_THAT_POINT = r"at\s+(?:that|this)\s+(?:point|stage|moment)"
CONDITION = re.compile(
    rf"\b(?:when|whenever|once|after|if|as\s+soon\s+as|upon|then|{_AT_THAT_POINT})\b|→|=>|->|"
    r"\bon\s+(?:completion|success|finishing)\b",
    _I)

# Commands, and results that only a command can produce.
# "make" and "find" are English words too: "make sure it works" and "find out" name none.
_NOT_A_MAKE = (r"(?!\s+(?:sure|certain|it|them|this|that|these|those|the|a|an|your|you|any|no|"
               r"every|all|one|changes?|progress|edits?|targeted|small|minimal|sense|use)\b)")
_NOT_A_FIND = r"(?!\s+(?:out|the|a|an|what|where|which|why|how|it|them|any|all)\b)"
_COMMAND_WORDS = (
    r"pytest|tox|nox|ruff|mypy|flake8|black|python3?|pip|uv|npm|npx|yarn|pnpm|node|jest|tsc|"
    rf"eslint|cargo|go\s+(?:test|vet|build|run)|make{_NOT_A_MAKE}|gradle|gradlew|mvn|dotnet|"
    r"bundle|rake|rspec|"
    rf"rubocop|curl|wget|grep|rg|git|diff|wc|test\s+-[a-z]|ls|find{_NOT_A_FIND}|bash|sh|docker|"
    r"kubectl|"
    r"terraform|buf|swift|xcodebuild|php|composer|phpunit|shellcheck|bats|vitest|mkdocs|"
    r"molecule|ansible-lint|dbt|sqlfluff|bin/rails|rails|valgrind|staticcheck|golangci-lint"
)
_COMMAND = re.compile(rf"`[^`]+`|\$\s+\w|\b(?:{_COMMAND_WORDS})\b", _I)
_EXIT_STATUS = re.compile(
    r"\bexit(?:s|ed)?\s+(?:with\s+)?(?:code\s+|status\s+)?0\b|\bexit\s+code\b", _I
)

# 1 binary-completion-criteria
CRITERIA_TITLE = re.compile(
    r"\b(?:criteria|criterion|definition\s+of\s+done|done|complete|completion|finish(?:ed)?|"
    r"success|exit|acceptance)\b|\bthe\s+bar\b|\bfinish\s+line\b",
    _I,
)
CRITERIA_INTRO = re.compile(
    r"\b(?:all|each|every|both)\s+(?:of\s+)?(?:the\s+following|these|them|below)\b|"
    r"\bthe\s+following\s+(?:are|is|hold)\b|\bcriteria\b|\bwhen\s+all\b",
    _I,
)
ARROW = re.compile(r"→|=>|->")
# "Then output ...", "Only then output ...", "At that point output ...": the sentence
# before holds the condition.
THEN = re.compile(rf"^[*_]*(?:(?:and\s+)?only\s+)?(?:then|{_AT_THAT_POINT})\b", _I)
SUBAGENT_NOTE = re.compile(r"\[subagent\s+opportunity\]", _I)

# 3 failure-instructions: `stuck`.

# 4 ordered-phases
_ROMAN = "VIII|VII|III|II|IV|VI|IX|I|V|X"
_ORDINAL = (rf"\d{{1,2}}|{'|'.join(sorted(NUMBER_WORDS, key=len, reverse=True))}|"
            rf"(?-i:{_ROMAN})(?=\W)|(?-i:[A-H])(?=\W)")
_WORK_UNIT = r"(?:phase|stage|step|milestone|part|task|checkpoint|gate|wave|chunk|sprint|scenario)"
# After an outline number ("1.2 Phase 2 — ..."); as a YAML key ("phase_2_stats:").
PHASE_MARKER = re.compile(
    r"^\s*+(?:#{1,6}\s++|(?:[-*+\u2192\u2022\u25b6\u25ba\u27a4>]|\d{1,3}[.)]|"
    r"\d{1,3}(?:\.\d{1,3})+[.)]?)\s+)?(?:\*\*|__)?\s*"
    rf"{_WORK_UNIT}(?:\s+|_)(?P<number>{_ORDINAL})(?![^\W_])",
    _I,
)
# Milestones named by a letter and a number: "**M1 — Generators.**", "- P2: ...", or set
# apart by spaces as in a column ("M1  Artifact Registry ...").
LETTERED_MARKER = re.compile(
    r"^\s*+(?:#{1,6}\s++|[-*+]\s++)?(?:\*\*|__)?\s*+(?P<letter>[A-Z])(?P<number>\d{1,2})\b"
    r"(?:(?:\*\*|__)?\s*(?:[\u2014\u2013:.)]|-\s)| {2,}|\t)")
# The same marker opening a sentence inside a paragraph: "... in three phases. Phase 1: ..."
INLINE_PHASE_MARKER = re.compile(
    rf"^[*_]*(?:phase|stage|step|part)\s+({_ORDINAL})\b[*_]*\s*(?::|\u2013|\u2014|-|\.|is\b|"
    r"adds\b|makes\b|moves\b)", re.IGNORECASE)
# Sequence words opening the sentences of a prose plan: "First, ... Then ... Finally, ...".
SEQUENCE_START = re.compile(
    r"^[*_]*(?:first(?:ly)?\b|first\s+of\s+all\b|to\s+start\b|start\s+(?:by|with)\b|"
    r"begin\s+(?:by|with)\b|the\s+first\b|"
    r"(?:stage|step|phase|part)\s+(?:one|1)\b)", _I)
SEQUENCE_NEXT = re.compile(
    r"^[*_]*(?:second(?:ly)?|third(?:ly)?|fourth(?:ly)?|next|then|after\s+that|afterwards|"
    r"subsequently|finally|last(?:ly)?|once\s+(?:that|this|it|those|these)|move\s+on|"
    # "Once the serializer works, move on to the file side."
    r"once\s+(?:the\s+)?[\w-]+(?:\s+[\w-]+)?\s+(?:works?|is\s+(?:done|in|green|finished|"
    r"working)|pass(?:es)?)|"
    r"the\s+(?:second|third|fourth|fifth|next|final|last)|"
    r"(?:stage|step|phase|part)\s+(?:two|three|four|five|[2-9]))\b", _I)
# Saying that the order does not matter undoes any numbering.
UNORDERED = re.compile(
    r"\b(?:no\s+particular\s+order|(?:in\s+)?(?:any|whatever|whichever)\s+order|"
    r"order\s+(?:does\s+not|doesn\W?t)\s+matter|pick\s+whichever)\b", _I)
PHASE_WORDS = re.compile(r"\b(?:phases?|steps?|stages?|milestones?)\b", _I)
# A heading saying its list is in order: "Requirements (in order)", "Order of work", a
# label that is the word itself ("Order:", "Order (finish each area first):").
IN_ORDER = re.compile(
    r"^[\W_]*order\b(?!\s+(?:does|doesn|is\s+not|isn))|"
    r"\bin\s+(?:this\s+|that\s+|the\s+following\s+|strict\s+|the\s+given\s+)?order\b|"
    r"\border\s+of\s+(?:work|operations|business)\b|\bin\s+sequence\b|\bsequentially\b|"
    r"\bone\s+after\s+(?:the\s+)?(?:other|another)\b|\btop\s+to\s+bottom\b|"
    r"\bone\s+(?:at\s+a\s+time|by\s+one)\b|\bstep\s+by\s+step\b|\bin\s+turn\b|"
    r"\bsequen(?:ce|tial)\b", _I)
# Headings over a list that is not the work: rules, scope, notes...
NOT_WORK = re.compile(
    r"\b(?:rules?|guardrails?|constraints?|don['\u2019]?ts|do\s+not|never|scope|files|"
    r"boundar\w*|bounds|notes?|context|background|stuck|blocked|wrong|limits?|git|commits?)\b",
    _I)
PHASE_LIST_TITLE = re.compile(
    r"\b(?:phases?|steps?|stages?|plan|requirements?|tasks?|milestones?|order|roadmap|"
    r"todo|to-do|work\s+items?)\b",
    _I,
)

# 5 verification-commands
# A command and an arrow to what it shows: "`bats test/` → all ok".
COMMAND_ARROW = re.compile(r"`([^`]+)`\s*(?:\u2192|->|=>)")
VERIFY = re.compile(
    r"\b(?:verif(?:y|ied|ication)|check(?:ed)?|validated?|confirm(?:ed)?|proven?)\b[*_]*\s*"
    r"(?::|with\b|by\b|using\b)|\bdone\s+when\b|(?:→|->)\s*(?=`)",
    _I,
)
# 6 guardrails: a sentence that opens with a prohibition, after any list marker or label.
# "No new dependencies.", "Avoid a focus-trap library." prohibit too; "No memory between
# runs" and "No progress for 3 iterations" do not.
GUARDRAIL = re.compile(
    r"^(?:[-*+>]\s+|\d+[.)]\s+)?(?:\[[ xX]\]\s+)?[\s*_]*(?:[A-Za-z][\w' -]{0,25}:\s*[*_]*\s*)?"
    r"(?:(?:also|and|but|again|finally|please|kindly|just)\b,?\s+)?"
    rf"(?:(?:you\s+(?:must|should|may)\s+(?:not|never)|do\s+not|don{_APOSTROPHE}?t|never|"
    r"must\s+not|under\s+no\s+circumstances|avoid)\b|"
    r"no\s+(?!(?:memory|progress|recollection|need|matter|more|longer|problem|one|iterations?|"
    r"remaining|leftover|occurrences?|callers?|usages?|instances?|references?|matches|"
    r"luck|change\s+(?:needed|required))\b)(?=[\w`]))",
    _I,
)
# A prohibition inside a sentence ("Tests must not be deleted", "Editing migrations is
# forbidden", "Refrain from new dependencies"), or a label that is one ("Prohibited: editing
# migrations, adding dependencies").
GUARDRAIL_INSIDE = re.compile(
    r"\b(?:is|are)\s+(?:strictly\s+)?(?:forbidden|prohibited|not\s+allowed|banned|"
    r"off\s+the\s+table|not\s+permitted)\b|"
    rf"\bmust\s+(?:not|never)\b|\byou\s+(?:may|should)\s+(?:not|never)\b|\bmustn{_APOSTROPHE}?t\b|"
    r"\brefrain\s+from\b|\bstay\s+away\s+from\b|\bunder\s+no\s+circumstances\b|"
    rf"\b(?:don{_APOSTROPHE}?t|do\s+not)\s+want\b|"
    rf"\b(?:careful|care|sure(?:\s+you)?)\s+(?:not\s+to|(?:you\s+)?(?:don{_APOSTROPHE}?t|do\s+not|"
    r"never))\b|\bresist\s+(?:the\s+urge|(?:a\s+few\s+|the\s+|any\s+)?temptations?)\b|"
    # After a colon: "A few temptations to resist: don't rewrite ..., don't delete ...".
    rf":\s+(?:do\s+not|don{_APOSTROPHE}?t|never)\s+[a-z]|"
    rf"^[-*+_\s]*(?:prohibited|forbidden|not\s+allowed|banned|never|don{_APOSTROPHE}?ts|"
    r"do\s+not|avoid)[*_]*\s*:", _I)
# A heading over rules that forbid: "Don'ts", "Don't:", "Never", "Forbidden", "Hard rules:
# never", a bare "No:".
PROHIBITION_TITLE = re.compile(
    rf"\b(?:don{_APOSTROPHE}?ts?|do\s+not|never|forbidden|prohibited|not\s+allowed|banned|"
    r"off[- ]limits|avoid)\b|^[\s*_#]*+(?:no|nope)[\s*_]*+:?[\s*_]*+$", _I)
PROMISE_TALK = re.compile(r"<promise>|\bpromise\b|\bcompletion\s+signal\b", _I)
# "Do not lie even if you think you should exit" is attribute 10's rule, not a guardrail.
HONESTY_TALK = re.compile(r"\b(?:lie|lying|truth\w*|honest\w*)\b", _I)

# 8 cold-start: `cold_start`.

# 9 iteration-limit: each pattern captures the number. They are matched against a line
# with its emphasis markup taken out ("**Max iterations:** 14"). A loop's turns are its
# iterations, loops, cycles, rounds, passes or runs ("Stop after 12 loops", "Budget: 14 runs").
_TURNS = r"(?:loop\s+)?(?:iterations?|loops?|cycles|rounds|passes|runs|restarts|go-?rounds)"
LIMITS = (
    re.compile(rf"--max[-_]iterations(?:=|\s+){NUMBER}", _I),
    re.compile(
        rf"\bmax(?:imum)?[\s_-]*(?:number\s+of\s+)?iterations?\s*(?:[:=]|is|of)?\s*{NUMBER}", _I
    ),
    # "Iteration cap: 8", "The iteration limit for this task is 15".
    re.compile(rf"\b(?:iterations?|loop)\s*(?:limit|cap|budget|max(?:imum)?)"
               r"(?:\s+(?:for|on|of)\s+(?:[\w-]+\s+){1,3}?(?=is\b|[:=]))?\s*(?:[:=]|is|of)?"
               rf"\s*{NUMBER}", _I),
    re.compile(rf"\byou\s+(?:have|get)\s+(?:at\s+most\s+|up\s+to\s+)?{NUMBER}\s+{_TURNS}\b",
               _I),
    re.compile(rf"\b(?:reach(?:es|ed)?|hits?|by|past)\s+iteration\s+(?:#\s*)?{NUMBER}\b", _I),
    re.compile(
        r"\b(?:at\s+most|no\s+more\s+than|up\s+to|max(?:imum)?(?:\s+of)?|limit(?:ed)?"
        r"(?:\s+(?:to|of))?|cap(?:ped)?(?:\s+(?:at|to|of))?|budget(?:\s+of)?|within)"
        rf"\s*:?\s*{NUMBER}\s+{_TURNS}\b",
        _I,
    ),
    re.compile(rf"\b{NUMBER}[\s-]+{_TURNS}\s*(?:max(?:imum)?|at\s+most|limit|cap|tops|"
               r"in\s+total)\b", _I),
    re.compile(rf"\b(?:exceed|beyond|past|more\s+than)\s+{NUMBER}\s+{_TURNS}\b", _I),
    re.compile(rf"\b(?:by|at|after)\s+the\s+{NUMBER}(?:st|nd|rd|th)\s+(?:iteration|loop)\b",
               _I),
    re.compile(rf"\b(?:stops?|halts?|give\s+up|ends?)\s+(?:after|at)\s+{NUMBER}\s+(?:{_TURNS}|attempts)\b",
               _I),
    # The BLOCKED-after-N rule: "If unable to make progress after [N] iterations, ..."
    re.compile(r"\b(?:progress|blocked|stuck)\b.{0,40}?\b(?:after|for|within|in)\s+"
               rf"{NUMBER}\+?\s+(?:consecutive\s+|more\s+)?{_TURNS}\b", _I),
)
_EMPHASIS = re.compile(r"[*_]{1,3}(?=\S)|(?<=\S)[*_]{1,3}")


def without_emphasis(text: str) -> str:
    """`text` with `*`/`_` emphasis markers taken out (not the underscores inside words)."""
    return _EMPHASIS.sub(lambda m: m.group(0) if _inside_word(text, m) else "", text)


def _inside_word(text: str, match: re.Match[str]) -> bool:
    before = text[match.start() - 1 : match.start()]
    after = text[match.end() : match.end() + 1]
    return before.isalnum() and after.isalnum()



def mentions_command(text: str) -> bool:
    return bool(_COMMAND.search(text) or _EXIT_STATUS.search(text))


_PROGRAM = re.compile(rf"^(?:`|\$\s|\.{{0,2}}/|(?:{_COMMAND_WORDS})\b)", _I)
_ARGUMENT = re.compile(r"^(?:-{1,2}\w|[\w.*-]*/|\w+::|[\w-]+\.\w{1,4}$)")


def looks_like_command(text: str) -> bool:
    """Whether `text` (what follows a `Verify:` label) is a command rather than prose:
    a code span, a known program or `./script`, a word followed by flags or paths
    (`bats tests/`, `molecule test -s default`), or a few bare words that are no sentence
    (`just check`). "read through the lexer and make sure it looks right" is prose."""
    text = text.strip(" *_:")
    if _PROGRAM.search(text):
        return True
    words = text.split()
    if not words or not words[0].islower():
        return False
    if any(_ARGUMENT.search(word) for word in words[1:5]):
        return True
    return len(words) <= 3 and not text.endswith((".", "!", "?", ","))


_ROMANS = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9,
           "X": 10}


def number_value(word: str) -> int:
    """1 for "1", "one", "I" or "A" (a stage lettered A, B, C...)."""
    if word.isdigit():
        return int(word)
    if word in _ROMANS:
        return _ROMANS[word]
    if len(word) == 1:
        return ord(word.upper()) - ord("A") + 1
    return NUMBER_WORDS[word.lower()]
