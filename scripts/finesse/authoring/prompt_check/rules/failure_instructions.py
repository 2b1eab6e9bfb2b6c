"""Attribute 3, self-diagnosing failure instructions: what to do when stuck. The seed asks
for two things, and people word both in many ways:
- change course when the same trouble comes back: a trigger (the same error again, "3+
  attempts", "keeps failing", "stuck", "going in circles", "hit a wall", "a fix doesn't
  work after a few tries", a "When stuck" heading or "Stuck?" label) and, in the same
  paragraph or list item, a remedy (a different approach or angle, "try something else",
  "step back", "rethink", "revert", "re-read the full error", "debug it", "isolate a
  minimal case"); a count of the same error alone ("If the same test fails 3 times, ...")
  is such a rule too;
- give up when blocked: output <promise>BLOCKED</promise> (or another tag given for being
  stuck: "<promise>STUCK</promise>"), or stop, halt, give up or hand back when blocked,
  stuck or making no progress ("No progress in 3 iterations: write it down and stop"), or
  say BLOCKED in so many words ("end your reply with the word BLOCKED").
"If a test fails, fix it" is no trigger (nothing repeats), "explain the problem" no remedy,
and "stop changing code" no giving up.
"""

from __future__ import annotations

import re

from finesse.authoring.prompt_check.document import Document, Line
from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.rules import Rule, Verdict, failed, passed
from finesse.authoring.prompt_check.vocabulary import PROMISE_TAG

_I = re.IGNORECASE
_COUNT = r"(?:[2-5]|two|three|four|five)"
# "three genuinely different fix attempts", "after 3 fixes": up to three words between.
REPEATED = re.compile(
    rf"\b{_COUNT}\s*(?:\+|or\s+more)?\s+(?:[\w-]+\s+){{0,3}}?(?:times|attempts|tries|"
    r"iterations|rounds|runs|loops|failures|fails|errors|fixes|approaches|consecutive|"
    r"in\s+a\s+row)\b|"
    rf"\b{_COUNT}\s*\+?\s*(?:times|x)\b|\b(?:twice|thrice)\b|"
    r"\b(?:third|3rd)\s+(?:time|attempt|try)\b|"
    # Repetition without a count: "if the same error keeps coming back".
    r"\bkeeps?\s+(?:coming\s+back|failing|recurring|reappearing|happening)\b|"
    r"\brepeatedly\b|\bagain\s+and\s+again\b",
    _I,
)
TROUBLE = re.compile(
    r"\b(?:same|again|repeat\w*|keeps?|stuck|fail\w*|errors?|broken|surviv\w*|persist\w*|"
    r"still|comes?\s+back)\b",
    _I,
)
# Trouble that comes back, or no way forward: what a rule for being stuck starts from.
TRIGGER = re.compile(
    rf"{REPEATED.pattern}|"
    r"\b(?:stuck|blocked|going\s+(?:round\s+)?in\s+circles|circl\w+|spinning|thrash\w*|"
    r"hit(?:ting)?\s+(?:a|the\s+same)\s+wall|dead\s+end|no\s+(?:progress|headway|luck)|"
    r"(?:several|multiple|a\s+few|few|more\s+than\s+(?:one|once))\s+(?:[\w-]+\s+)?"
    r"(?:tries|attempts|times|fixes|iterations)|more\s+than\s+once|repeated\w*|"
    r"(?:same|recurring|persistent)\s+(?:[\w-]+\s+)?(?:error|failure|problem|issue|test|"
    r"message|wall|exception|bug|trace\w*)|(?:comes?|coming)\s+(?:back|up\s+again)|"
    r"(?:doesn|didn|isn|won)['\u2019]?t\s+(?:work|help|budge)|not\s+working|"
    r"(?:repeat\w*|retry\w*|re-?attempt\w*)\s+the\s+same\s+(?:attempt|fix|approach|thing)|"
    r"can(?:no|['\u2019]?)t\s+(?:fix|figure|get|make|solve|find|see))\b",
    _I,
)
# Changing course, or diagnosing before the next try.
REMEDY = re.compile(
    r"\b(?:different|alternative|another|other|new|fresh)\s+(?:[\w-]+\s+)?(?:approach|"
    r"strategy|route|fix|way|angle|tack|tactics?|method|solution|hypothesis|direction|"
    r"design|idea|plan|path)\b|\ban\s+alternative\b|\bstep\s+back\b|"
    r"\bchange\s+(?:your\s+|the\s+|of\s+)?(?:approach|strategy|tack|tactics|course|something|"
    r"direction|plan)\b|\b(?:rethink|reconsider|re-?examine|re-?think|re-?plan)\w*\b|"
    r"\b(?:try|do)\s+(?:something|anything)\s+(?:else|different)\b|\bswitch\w*\b|"
    r"\babandon\w*\b|\brevert\w*\b|\broll\w*\s+back\b|\bundo\b|\bsmaller\s+steps?\b|"
    # Setting the attempt aside: "git stash with a message noting the issue", "pick a
    # different eligible task instead".
    r"\bgit\s+stash\b|\b(?:pick|take|choose|move\s+on\s+to)\s+(?:a|another)\s+(?:different\s+)?"
    r"(?:[\w-]+\s+)?(?:task|item|story)\s+instead\b|"
    r"\bre-?read\w*\b|\bread\w*\s+(?:[\w`'-]+\s+){0,4}?(?:in\s+full|carefully|fully|"
    r"top\s+to\s+bottom|closely|completely)\b|"
    r"\b(?:read|study|inspect|examine)\w*\s+(?:the\s+)?(?:full|whole|entire|complete|actual|"
    r"raw)\b|\bdebug\w*\b|\bisolat\w*\b|\bbisect\w*\b|\bminimal\s+(?:case|repro\w*|example)\b|"
    r"\badd\w*\s+(?:[\w-]+\s+)?(?:prints?|logging|logs|debug\w*|tracing)\b",
    _I,
)
WHEN_STUCK = re.compile(r"\b(?:if|when|whenever|once)\b", _I)
# Giving up: stop (or hand over) when blocked, rather than loop forever.
GIVE_UP = re.compile(
    r"\b(?:blocked|blockers?|stuck|(?:no|zero|without|make|making)\s+(?:any\s+)?"
    r"(?:progress|headway)|nothing\s+(?:moving|moves|changes|improves|works)|"
    r"can(?:no|\W?)t\s+(?:proceed|continue|get\s+(?:past|further|any\s+further)|progress|"
    r"finish|go\s+on|make\s+(?:progress|headway)|get\s+(?:[\w-]+\s+){0,3}?to\s+(?:pass|work))|"
    r"no\s+way\s+forward|unable\s+to|"
    r"(?:stall|stuck)\w*|hopeless\w*|impossible)\b", _I)
# "stop", not "stop changing code": a gerund after it says what to stop doing ("stop
# working" still gives up).
STOP = re.compile(
    r"\b(?:stop(?!\s+(?!working|iterating|looping)\w+ing\b)|halt|give\s+up|end\s+(?:the\s+)?(?:loop|run|iteration)|"
    r"exit\s+the\s+loop|hand\s+(?:it\s+|this\s+)?(?:back|over)|escalat\w*|"
    r"end\s+(?:your|the|this)\s+(?:turn|session)|"
    r"exit(?!s|ed|\s+(?:code|status|with|0|1))|quit|bail\w*|"
    r"(?:ask|wait\s+for)\s+(?:a|the|your)\s+(?:human|user|maintainer|reviewer|operator)|"
    # Saying BLOCKED in so many words: "end your reply with the word BLOCKED".
    r"(?:end|finish|close|sign\s+off)\s+(?:your\s+)?(?:reply|response|answer|message|output)"
    r"\s+with\s+(?:the\s+(?:word|line|text)\s+)?[\"'`*]*(?-i:BLOCKED)|"
    r"(?:output|print|say|write|reply|answer|respond)\s+(?:with\s+)?(?:the\s+(?:word|line)\s+)?"
    r"[\"'`*]*(?-i:BLOCKED)\b(?![\"'`*]*\s*</))\b", _I)
# A heading or label over rules for trouble: "When stuck", "If something keeps failing".
_TROUBLE_TITLE = re.compile(
    r"\b(?:stuck|blocked|trouble|wrong|fail\w*|unstuck|errors?|recovery|problems?|"
    r"circles|break\w*)\b", _I)


def stuck_lines(prompt: Prompt) -> tuple[Line | None, Line | None]:
    """(the line of the rule for changing course, the line of the rule for giving up)."""
    doc = prompt.doc
    return _changes_course(doc), next((tag.line for tag in prompt.tags if tag.blocked),
                                      None) or _gives_up(doc)


def _changes_course(doc: Document) -> Line | None:
    for sentence in doc.sentences():
        text = sentence.text
        counted = REPEATED.search(text)
        # Not the rule for giving up: "stuck for three loops in a row → BLOCKED" changes no
        # course.
        gives_up = PROMISE_TAG.search(text) or (STOP.search(text) and GIVE_UP.search(text))
        if counted and TROUBLE.search(text) and (not gives_up or REMEDY.search(text)):
            return sentence.line_at(counted.start())
    for index, block in doc.prose():
        if block.kind == "heading":
            continue
        titled = any(_TROUBLE_TITLE.search(heading.title) for heading in doc.headings_over(index))
        trigger = TRIGGER.search(block.text)
        if (trigger or titled) and REMEDY.search(block.text):
            return block.line_at(trigger.start() if trigger else 0)
    return None


def _gives_up(doc: Document) -> Line | None:
    for index, block in doc.prose():
        titled = any(_TROUBLE_TITLE.search(heading.title) for heading in doc.headings_over(index))
        given = GIVE_UP.search(block.text)
        stop = STOP.search(block.text)
        if stop and (given or titled):
            return block.line_at(given.start() if given and given.start() < stop.start()
                                 else stop.start())
    return None


def check(prompt: Prompt) -> Verdict:
    """What to do when stuck: change course when the same trouble comes back, and give up
    (output <promise>BLOCKED</promise>, or stop) when blocked: `stuck_lines`."""
    repeated, gives_up = stuck_lines(prompt)
    if repeated and gives_up:
        return passed(repeated)
    if repeated:
        return failed(repeated, "say when to give up: 'If you are still stuck, output "
                               "<promise>BLOCKED</promise> and explain why'")
    return failed(gives_up, "say what to do after the same error 3 times (note what you "
                           "tried, change approach) and when to output "
                           "<promise>BLOCKED</promise>")


RULE = Rule(
    id=3,
    key="failure-instructions",
    definition=("The agent WILL get stuck. The prompt must say what to do when stuck: \"If "
                "stuck on the same error for 3+ attempts, step back, read the error trace "
                "fully, and try an alternative approach. If blocked for N+ iterations, "
                "document what's blocking progress and output <promise>BLOCKED</promise>.\""),
    check=check,
    passes=(
        "If the same test fails 3 times, write what you tried in `NOTES.md` and change "
        "approach. If still stuck, output <promise>BLOCKED</promise>.\n",
        "When stuck on the same error for 3+ attempts, step back and try an alternative "
        "approach. If blocked for 5 iterations, document the blocker and stop.\n",
        "- If you can't get tests to pass after multiple attempts, git stash with a message "
        "noting the issue and exit.\n",
        "- If blocked: write the blocker into `activity.md` and end your turn.\n- Do not "
        "repeat the same attempt every iteration: pick a different eligible task instead.\n",
    ),
    fails=(
        "If a test fails, fix it.\n",
        "If the same error comes back 3 times, try a different approach.\n",
        # setting the attempt aside, but no giving up
        "- If you can't get tests to pass after multiple attempts, git stash your changes.\n",
    ),
)
