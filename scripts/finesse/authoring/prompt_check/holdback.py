"""The words attribute 10 reads: a rule that holds "done" back until every criterion holds,
and a permission to finish anyway that undoes it (`done` says where it looks for them).

A rule that withholds the promise names it and its condition in one sentence ("Do not output
the completion promise unless every criterion is met", "Never call it done with anything
red", "If anything is red it isn't done"). Beside a signal that already waits for every
criterion ("Output X when ALL of the following are true"), a shorter cue holds it back as
well: a word of time ("not a moment earlier", "Not before.", "until then"), of restriction
("only then", "otherwise keep going"), of strictness ("This must be unequivocally true", "no
exceptions", "not 'almost'"), a refusal while something fails ("anything less is not done"),
or a word against claiming it without having seen it ("don't fudge it", "never on a hunch",
"do not lie"). A mere "don't output it just to get out of the loop" is none of these.
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.vocabulary import EMIT_WORDS, NEGATION_WORDS

_I = re.IGNORECASE
_APOSTROPHE = r"['\u2019]"
ALL = r"\b(?:all|every(?:thing)?|each|both|100\s*%|fully|completely)\b"
# A signal that waits for all of its criteria: "when ALL ...", "when phases 1-4 pass",
# "when M1-M3 are green".
UNIVERSAL = re.compile(
    rf"{ALL}|\b[A-Z]?\d\s*(?:-|\u2013|\u2014|to|through)\s*[A-Z]?\d\b", _I)
# Something still failing: "if any test fails", "while any grep prints something", "with
# anything red", "if even one row doesn't", "any warning left", "anything less".
_FAILING = (rf"(?:\b(?:fail\w*|red|not\s+(?:met|pass\w*|true|green)|unmet|false|broken|left|"
            rf"remain\w*|missing|(?:returns?|prints?|reports?|shows?)\s+\w+)|n{_APOSTROPHE}t\b)")
UNTIL_ALL = re.compile(
    rf"\b(?:unless|until|before|except)\b.{{0,80}}?{ALL}|"
    r"\b(?:if|while|when|with|as\s+long\s+as)\s+(?:even\s+)?(?:any|anything|a\s+single|one|"
    rf"some|a|an)\b.{{0,60}}?{_FAILING}|"
    r"\bany\s+(?:[\w-]+\s+){0,4}?(?:left|remaining|failing|red|open)\b|"
    r"\b(?:anything|something)\s+(?:less|short)\b|\bpartial(?:ly)?\b|"
    # "every check must actually have passed"
    r"\b(?:every|each|all)\s+(?:[\w'\u2019-]+\s+){0,3}?must\s+(?:actually\s+|really\s+)?(?:have\s+)?"
    r"(?:pass|passed|be\s+green|hold)\b|"
    r"\b(?:a|any|one)\s+(?:[\w-]+\s+)?(?:red|failing)\b|"
    rf"\bonly\b.{{0,80}}?\b(?:when|if|once|after)\b.{{0,80}}?{ALL}",
    _I,
)
# "Don't say it's done if it isn't": a claim refused while it is not so.
WHILE_NOT = re.compile(
    rf"\b(?:if|when|while)\s+(?:it|that|this|they)(?:{_APOSTROPHE}s)?\s+(?:is\s+|are\s+)?"
    rf"(?:not|isn{_APOSTROPHE}t|aren{_APOSTROPHE}t)\b|"
    # A check that does not hold: "if p95 isn't under 50ms right now, you're not done".
    rf"\b(?:if|while)\s+[^,.;]{{1,60}}?\b(?:isn{_APOSTROPHE}t|aren{_APOSTROPHE}t|is\s+not|are\s+not|"
    rf"fails?|doesn{_APOSTROPHE}t\s+pass)\b", _I)
# Holding the promise (or the word "done") back.
PASSIVE_NEGATED_EMIT = re.compile(
    r"\b(?:must|should|may)\s+(?:not|never)\s+be\s+(?:output|printed|emitted|said|sent)\b", _I
)
ONLY_EMIT = re.compile(
    rf"\bonly\s+(?:[\w-]+\s+){{0,2}}?{EMIT_WORDS}\b|"
    rf"\b{EMIT_WORDS}\s+(?:[\w<>/-]+\s+){{0,4}}?only\s+(?:when|if|once|after)\b|"
    r"\b(?:done|complete|finished|valid|true)\b[^.]{0,20}?\bonly\s+(?:when|if|once|after)\b",
    _I)
NEGATED_CLAIM = re.compile(
    rf"\b{NEGATION_WORDS}\s+(?:[\w-]+\s+){{0,2}}?(?:call|treat|consider|mark|declare|claim|"
    r"report|say)\w*\s+(?:it|this|that|the\s+\w+|yourself|the\s+\w+\s+\w+|(?:it|this|that)"
    r"(?:'s|\s+is))?\s*(?:as\s+)?(?:done|finished|complete|completed|completion)\b", _I)
# Marking the work done held back until its check passes: "Do NOT mark a task complete
# unless tests pass", "Never set `"passes": true` without its gate actually passing", "Never
# say 'complete' or 'done' until @fix_plan.md reflects reality".
GATED_CLAIM = re.compile(
    rf"\b{NEGATION_WORDS}\s+(?:[\w-]+\s+){{0,2}}?(?:mark|set|declare|claim|say|call|report)\w*\s+"
    r"[^.]{0,40}?(?:\b(?:done|finished|complete|completed)\b|[\"'`]?passes[\"'`]?\s*:\s*true)"
    r"[^.]{0,40}?\b(?:unless|until|without)\b(?:[^.]|\.(?=\w)){0,60}?\b(?:pass(?:es|ed|ing)?|green|"
    r"succeed\w*|reflects?)\b", _I)
# "Outputting the promise before every check passes is forbidden", "Printing it any earlier,
# or with anything failing, is a lie — don't."
GERUND_REFUSAL = re.compile(
    r"\b(?:outputt?|print|emitt|claim|declar|say|writ)ing\b.{0,100}?(?:\b(?:is|would\s+be)\s+"
    r"(?:a\s+lie|lying|forbidden|not\s+allowed|wrong|a\s+failure)\b|[\u2014-]\s*don['\u2019]?t\b)",
    _I)
EARLY = re.compile(r"\b(?:early|earlier|prematurely|too\s+soon|before)\b", _I)
# "You're not done", "it isn't done", "that is not finished", "= not done", "keep going".
NOT_DONE = re.compile(
    rf"(?:\b(?:you{_APOSTROPHE}re|you\s+are|it{_APOSTROPHE}s|it|(?:that|this|which|the\s+\w+)"
    rf"(?:{_APOSTROPHE}s)?|(?:is|are)|less)|=)\s*(?:is\s+|are\s+)?(?:not|n{_APOSTROPHE}t|"
    rf"isn{_APOSTROPHE}t|aren{_APOSTROPHE}t)\s+(?:yet\s+|really\s+)?(?:done|finished|complete)\b|"
    r"\bkeep\s+(?:working|going|iterating|looping|fixing)\b", _I)
# Beside a signal that waits for every criterion, in its completion section: the shorter
# cues (the module docstring). "before" and "until" hold back only what they point at:
# "not before", "before that", "until then", not "commit before you output it".
_POINTED = r"(?:that|then|this|those|these|they|all|every\w*|each|both)"
CUE = re.compile(
    r"\b(?:earlier|early|sooner|prematurely|too\s+soon|in\s+advance|ahead\s+of\s+time|"
    r"jump\w*\s+the\s+gun|only\s+(?:when|if|once|after|then|at|valid|true|counts?)|"
    rf"{EMIT_WORDS}\s+(?:[\w<>/-]+\s+){{0,3}}?only|unless|otherwise|"
    rf"only\s+{EMIT_WORDS}\s+(?:it\s+|this\s+|that\s+|the\s+promise\s+)?(?:when|if|once|after)|"
    rf"(?:before|until|till)\s+{_POINTED}|not\s+(?:a\s+moment\s+|one\s+second\s+)?"
    r"(?:before|earlier|sooner)|"
    r"assum\w*|guess\w*|hop(?:e|ing)\s+(?:it|they|that))\b|"
    rf"\b(?:{NEGATION_WORDS}|not)\s+(?:[\w<>/-]+\s+){{0,3}}?(?:{EMIT_WORDS}|call|claim|"
    r"declare|mark)\w*\b.{0,40}?\b(?:before|until|till)\b", _I)
# Cues strong enough to hold back such a signal from anywhere after it, or from any sentence
# about the promise: they speak of nothing else.
STRONG_CUE = re.compile(
    r"\b(?:unequivocal(?:ly)?|no\s+exceptions?|without\s+exception|no\s+partial|"
    r"partial\w*\s+\w+\s+(?:does\s+not|doesn['\u2019]t|is\s+not|isn['\u2019]t)\s+count|"
    r"every\s+single|each\s+and\s+every|non-negotiable|fudg\w*|hunch|lie|lying|lies|fib\w*|"
    r"(?:has|have|needs?)\s+to\s+be\s+(?:literally\s+|actually\s+|really\s+)?true|"
    r"stretch\w*\s+the\s+truth|pretend\w*|fake|faking|cheat\w*|bluff\w*|"
    r"not\s+(?:a|one)\s+(?:moment|second|minute|iteration)\s+(?:before|earlier|sooner))\b|"
    r"\bnot\s+[\"'\u201c]?(?:mostly|almost|nearly|approximately|partially)\b|"
    r"^[*_\"'(\u201c]*(?:(?:not|never)\s+(?:before|earlier|sooner|until)|only\s+(?:if|when|once|"
    r"then|after)|until\s+(?:then|that)|and\s+not\s+before|otherwise|if\s+not)\b|"
    r"\bif\s+(?:that|this|it|any\s+of\s+(?:that|this|it|them))(?:['\u2019]s|\s+is|\s+are)?\s+"
    r"not\s+(?:true|so|the\s+case|met)\b|"
    # "If it isn't true, don't write it", "If it isn't, don't print it".
    r"\bif\s+(?:that|this|it)\s+(?:isn['\u2019]t|is\s+not)\s*(?:true|so)?\s*,\s*"
    r"(?:do\s+not|don['\u2019]t|never)\b|"
    rf"\b{NEGATION_WORDS}\s+(?:[\w-]+\s+){{0,3}}?{EMIT_WORDS}\b[^.]{{0,40}}?\b(?:early|"
    r"prematurely|too\s+soon|before\s+then)\b", _I)
# Permission to finish when not everything holds.
LENIENT = re.compile(
    rf"\b{EMIT_WORDS}\s+(?:[\w<>/-]+\s+){{0,4}}?anyway\b|\bgo\s+ahead\s+and\s+{EMIT_WORDS}\b|"
    r"\b(?:close|good)\s+enough\s+(?:is|are|will\s+do)\b|"
    r"\b(?:fairly|reasonably|pretty|mostly|somewhat)\s+(?:confident|sure|certain)\b|"
    r"\bbasically\s+(?:there|done|finished|complete|green|works?|working|fine|ok)\b|"
    rf"\b{EMIT_WORDS}\s+(?:[\w<>/-]+\s+){{0,3}}?(?:when|once|if)\s+you\s+(?:think|feel|"
    r"believe|reckon|guess)\b|"
    r"\b(?:fine|ok|okay|acceptable)\s+to\s+(?:call\s+it\s+(?:done|finished|complete)|"
    rf"{EMIT_WORDS})\b|"
    r"\b(?:leftovers?|minor\s+(?:issues|failures|warnings|problems|gaps))\s+(?:is|are)\s+"
    r"(?:fine|ok|okay|acceptable)\b", _I)
NEGATED_BEFORE = re.compile(rf"\b(?:no|not|never|n{_APOSTROPHE}t)\W+(?:\w+\W+)?$", _I)
