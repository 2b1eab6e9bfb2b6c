"""Typed arguments split into words, as a shell would, without a shell (the arguments of
our slash commands never reach `/bin/sh` as source text), and counts read from them."""

from __future__ import annotations

import re

from finesse.errors import UsageError

_DECIMAL = re.compile(r"[0-9]+")


def split_words(args: str) -> list[str]:
    """The words of a typed argument string, split as a shell would, in one pass (linear in
    the length: a prompt of megabytes splits in well under a second).

    - Whitespace separates words; `"..."` and `'...'` group them; quoted and unquoted parts
      next to each other make one word; `""` is an empty word. `#` starts no comment.
    - Single quotes keep everything as typed. In double quotes a backslash escapes only `"`
      and `\\`. Outside quotes it escapes a quote, a space or a backslash; any other
      backslash is kept as typed, so `\\d+` and `C:\\Users\\me` stay as they are.
    - An apostrophe is not a quote: a `'` between two letters (don't, O'Brien's), or after a
      letter with no other `'` after it (the users'), is kept as typed.
    An unclosed quote is a UsageError saying what to type instead.
    """
    words: list[str] = []
    current: list[str] = []
    in_word = False
    last_single = args.rfind("'")
    index, length = 0, len(args)
    while index < length:
        char = args[index]
        if char in " \t\n\r":
            if in_word:
                words.append("".join(current))
                current, in_word = [], False
            index += 1
            continue
        in_word = True
        if char == "\\":
            following = args[index + 1] if index + 1 < length else ""
            if following and following in "\"' \\":
                current.append(following)
                index += 2
            else:
                current.append(char)
                index += 1
            continue
        if char == "'":
            after_letter = index > 0 and args[index - 1].isalpha()
            before_letter = index + 1 < length and args[index + 1].isalpha()
            if after_letter and (before_letter or index == last_single):
                current.append(char)  # don't, O'Brien's, the users'
                index += 1
                continue
            closing = args.find("'", index + 1)
            if closing < 0:
                raise _unclosed("'", index)
            current.append(args[index + 1:closing])
            index = closing + 1
            continue
        if char == '"':
            index = _double_quoted(args, index + 1, current)
            continue
        current.append(char)
        index += 1
    if in_word:
        words.append("".join(current))
    return words


def _double_quoted(args: str, index: int, into: list[str]) -> int:
    """Read a double-quoted part from `index` (just after the quote) into `into`; the index
    after its closing quote."""
    start = index
    while True:
        found = min((at for at in (args.find('"', index), args.find("\\", index)) if at >= 0),
                    default=-1)
        if found < 0:
            raise _unclosed('"', start - 1)
        into.append(args[index:found])
        if args[found] == '"':
            return found + 1
        following = args[found + 1] if found + 1 < len(args) else ""
        if following in ('"', "\\"):
            into.append(following)
            index = found + 2
        else:
            into.append("\\")
            index = found + 1


def _unclosed(quote: str, at: int) -> UsageError:
    return UsageError(
        f"the {quote} quote at character {at + 1} is never closed: close it, escape it with a "
        "backslash, or put the prompt in a file and pass --prompt-file PATH"
    )


def parse_count(value: str, flag: str, ceiling: int, example: int = 2) -> int:
    if not _DECIMAL.fullmatch(value) or not 1 <= int(value, 10) <= ceiling:
        raise UsageError(
            f"{flag} needs a whole number from 1 to {ceiling}, not {value!r}: "
            f"for example {flag} {example}"
        )
    return int(value, 10)


def refuse_nul(origin: str, command: str) -> None:
    """A command holding a NUL can never start (no argument or `sh -c` text can carry one):
    refused at the start, not found at every claim or at the loop's end."""
    if "\0" in command:
        raise UsageError(f"{origin} {command!r} holds a NUL character, which no command can: "
                         "retype it")
