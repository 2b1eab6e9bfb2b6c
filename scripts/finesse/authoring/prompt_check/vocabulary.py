"""The words the prompt checks look for, in one place so that the checks agree on them.

Every pattern is case-insensitive and is matched against one sentence (or one line, for the
iteration limit) of the prompt, so a phrase never spans two unrelated sentences.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "twenty-five": 25, "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100,
}
_NUMBER = rf"(\d+|{'|'.join(sorted(NUMBER_WORDS, key=len, reverse=True))})"

_APOSTROPHE = r"['\u2019]"  # straight or curly: people paste text from documents
CODE_SPAN = re.compile(r"`[^`]*`")
PROMISE_TAG = re.compile(r"<promise>(.*?)</promise>", _I)

# Telling the agent to output something, and telling it not to.
_EMIT = (
    r"(?:output|print|emit|say|write|send|reply|respond|return|type|include|claim|declare|"
    r"announce|signal|give|produce|end\s+(?:your\s+\w+\s+)?with)"
)
_NEGATION = (
    rf"(?:do\s+not|don{_APOSTROPHE}?t|never|must\s+not|mustn{_APOSTROPHE}?t|should\s+not|"
    rf"shouldn{_APOSTROPHE}?t|may\s+not|cannot|can{_APOSTROPHE}?t|under\s+no\s+circumstances)"
)
EMIT = re.compile(rf"\b{_EMIT}\b", _I)
# "Do not stop or claim you are done": a negation governs an emit verb up to three words on.
NEGATED_EMIT = re.compile(rf"\b{_NEGATION}\s+(?:[\w-]+\s+){{0,3}}?{_EMIT}\b", _I)
PASSIVE_NEGATED_EMIT = re.compile(
    r"\b(?:must|should|may)\s+(?:not|never)\s+be\s+(?:output|printed|emitted|said|sent)\b", _I
)
ONLY_EMIT = re.compile(r"\bonly\s+(?:[\w-]+\s+){0,2}?(?:output|print|emit|say|write)\b", _I)
# "Done = all true → output <promise>X</promise>": an arrow reads as "then".
CONDITION = re.compile(r"\b(?:when|whenever|once|after|if|as\s+soon\s+as|upon)\b|→|=>|->", _I)

# Commands, and results that only a command can produce.
_COMMAND_WORDS = (
    r"pytest|tox|nox|ruff|mypy|flake8|black|python3?|pip|uv|npm|npx|yarn|pnpm|node|jest|tsc|"
    r"eslint|cargo|go\s+(?:test|vet|build|run)|make|gradle|mvn|dotnet|bundle|rake|rspec|"
    r"rubocop|curl|wget|grep|rg|git|diff|wc|test\s+-[a-z]|ls|find|bash|sh|docker|kubectl|"
    r"terraform|buf|swift|xcodebuild|php|composer|phpunit|shellcheck"
)
_COMMAND = re.compile(rf"`[^`]+`|\$\s+\w|\b(?:{_COMMAND_WORDS})\b", _I)
_EXIT_STATUS = re.compile(
    r"\bexit(?:s|ed)?\s+(?:with\s+)?(?:code\s+|status\s+)?0\b|\bexit\s+code\b", _I
)

# 1 binary-completion-criteria
CRITERIA_TITLE = re.compile(
    r"\b(?:criteria|criterion|definition\s+of\s+done|done|complete|completion|finish(?:ed)?|"
    r"success|exit|acceptance)\b",
    _I,
)
CRITERIA_INTRO = re.compile(
    r"\b(?:all|each|every|both)\s+(?:of\s+)?(?:the\s+following|these|them|below)\b|"
    r"\bthe\s+following\s+(?:are|is|hold)\b|\bcriteria\b|\bwhen\s+all\b",
    _I,
)
VAGUE = re.compile(
    r"\b(?:clean(?:ly)?|good|nice(?:ly)?|robust(?:ly)?|proper(?:ly)?|well[- ](?:written|"
    r"structured|tested|organi[sz]ed|designed|documented)|as\s+appropriate|appropriate(?:ly)?|"
    r"reasonabl[ey]|readable|elegant(?:ly)?|maintainable|high[- ]quality|production[- ]ready|"
    r"sufficient(?:ly)?|polished|correctly|as\s+expected|as\s+needed|where\s+necessary)\b",
    _I,
)

# 3 failure-instructions: "the same error three times", "3+ attempts", "twice in a row".
_COUNT = r"(?:[2-5]|two|three|four|five)"
REPEATED = re.compile(
    rf"\b{_COUNT}\s*(?:\+|or\s+more)?\s+(?:[\w-]+\s+)?(?:times|attempts|tries|iterations|"
    r"rounds|runs|loops|failures|fails|errors|consecutive|in\s+a\s+row)\b|"
    rf"\b{_COUNT}\s*\+?\s*(?:times|x)\b|\b(?:twice|thrice)\b|"
    r"\b(?:third|3rd)\s+(?:time|attempt|try)\b",
    _I,
)
TROUBLE = re.compile(
    r"\b(?:same|again|repeat\w*|keeps?|stuck|fail\w*|errors?|broken|surviv\w*|persist\w*|"
    r"still|comes?\s+back)\b",
    _I,
)

# 4 ordered-phases
PHASE_MARKER = re.compile(
    r"^\s*(?:#{1,6}\s+|(?:[-*+]|\d{1,3}[.)])\s+)?(?:\*\*|__)?\s*"
    rf"(?:phase|stage|step|milestone|part)\s+(\d{{1,2}}|{'|'.join(NUMBER_WORDS)})\b",
    _I,
)
PHASE_LIST_TITLE = re.compile(
    r"\b(?:phases?|steps?|stages?|plan|requirements?|tasks?|milestones?|order|roadmap|"
    r"todo|to-do|work\s+items?)\b",
    _I,
)

# 5 verification-commands
VERIFY = re.compile(
    r"\b(?:verif(?:y|ication)|check(?:ed)?|validate|confirm)\b[*_]*\s*(?::|with\b|by\b|"
    r"using\b)|\bdone\s+when\b",
    _I,
)
EVERY_CHANGE = re.compile(
    r"\b(?:after|following|with)\s+(?:every|each|any)\s+(?:single\s+)?(?:[\w-]+\s+)?"
    r"(?:change|edit|modification|commit|save|fix)",
    _I,
)
RUN = re.compile(r"\b(?:run|re-?run|execute|check|verify)\b|`", _I)

# 6 guardrails: a sentence that opens with a prohibition, after any list marker or label.
GUARDRAIL = re.compile(
    r"^(?:[-*+>]\s+|\d+[.)]\s+)?(?:\[[ xX]\]\s+)?[\s*_]*(?:[A-Za-z][\w' -]{0,25}:\s*[*_]*\s*)?"
    rf"(?:you\s+(?:must|should|may)\s+(?:not|never)|do\s+not|don{_APOSTROPHE}?t|never|must\s+not|"
    r"under\s+no\s+circumstances)\b",
    _I,
)
PROMISE_TALK = re.compile(r"<promise>|\bpromise\b|\bcompletion\s+signal\b", _I)

# 8 cold-start: the agent is told it is iterating, and to look at the current state.
ITERATING = re.compile(
    r"\biterat\w*|\bloop\w*|\bre-?(?:enter\w*|run|read|orient\w*)\b|\bagain\b|\bno\s+memory\b|"
    r"\bremember\w*|\brecollection\b|\bprevious\s+(?:runs?|iterations?|attempts?|sessions?)\b|"
    r"\bfresh\b|\bfrom\s+scratch\b|\bstarts?\s+cold\b|\bresum\w*|\bcontinu\w*|\bpick(?:ing)?\s+"
    r"(?:this|it|up)\b|\bcarr(?:y|ies)\s+over\b|\bin[- ]progress\b",
    _I,
)
CURRENT_STATE = re.compile(
    r"\bgit\s+(?:status|log|diff)\b|\bcurrent\s+state\b|\bwhere\s+(?:things|it|the\s+\w+)\s+"
    r"stands?\b|\bwhat(?:'s|\s+is|\s+has)?\s+(?:already\s+)?(?:been\s+)?(?:done|changed|left)\b|"
    r"\b(?:check|inspect|review|look\s+at|read|run|examine)\b.{0,60}?\b(?:state|status|"
    r"progress|tests?|notes|log|diff|results?|output)\b",
    _I,
)

# 9 iteration-limit: each pattern captures the number.
LIMITS = (
    re.compile(rf"--max[-_]iterations(?:=|\s+){_NUMBER}", _I),
    re.compile(
        rf"\bmax(?:imum)?[\s_-]*(?:number\s+of\s+)?iterations?\s*(?:[:=]|is|of)?\s*{_NUMBER}", _I
    ),
    re.compile(
        rf"\biterations?\s*(?:limit|cap|budget|max(?:imum)?)\s*(?:[:=]|is|of)?\s*{_NUMBER}", _I
    ),
    re.compile(
        r"\b(?:at\s+most|no\s+more\s+than|up\s+to|max(?:imum)?(?:\s+of)?|limit(?:ed)?"
        r"(?:\s+(?:to|of))?|cap(?:ped)?(?:\s+(?:at|to))?|budget(?:\s+of)?|within)"
        rf"\s*:?\s*{_NUMBER}\s+(?:loop\s+)?iterations?\b",
        _I,
    ),
    re.compile(rf"\b{_NUMBER}[\s-]+iterations?\s*(?:max(?:imum)?|at\s+most|limit|cap|tops)\b", _I),
)

# 10 zero-ambiguity: withholding the promise until every criterion holds.
_ALL = r"\b(?:all|every|each|both|100\s*%|fully|completely)\b"
UNTIL_ALL = re.compile(
    rf"\b(?:unless|until|before|except)\b.{{0,80}}?{_ALL}|"
    r"\b(?:if|while|when)\s+(?:any|a\s+single|one|some)\b.{0,60}?\b(?:fail\w*|red|not\s+"
    r"(?:met|pass\w*|true)|unmet|false|broken)\b|"
    rf"\bonly\b.{{0,80}}?\b(?:when|if|once|after)\b.{{0,80}}?{_ALL}",
    _I,
)
DONE_WORDS = r"<promise>|\bpromise\b|\bcompletion\b|\bcomplete\b|\bdone\b|\bfinished\b"


def mentions_command(text: str) -> bool:
    return bool(_COMMAND.search(text) or _EXIT_STATUS.search(text))


def number_value(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS[word.lower()]
