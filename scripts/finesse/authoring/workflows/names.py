"""What a decomposed plan's folders may be called: one rule for `finesse new` (which writes
them), `finesse validate` (which checks them) and `ralph run --graph` (which runs them), so
that what validates runs.

- The plan folder's name is the session: `ralph run --graph` makes a branch
  `ralph/<session>/<task>` per sub-workflow, so the name must be a component git accepts in
  a branch name between two others (the rules of `git check-ref-format` for a component):
  not empty, no `..`, no `@{`, no ASCII control character, space, `~ ^ : ? * [ \\`, not
  starting with `.`, not ending with `.lock`, and no `/` (one folder).
- A wave's folder is `wave-<N>`, N written as `str(N)` (`wave-1/`, never `wave-01/`): the
  runner finds a sub-workflow's files at `wave-<N>/<task>/` from the wave's number.
"""

from __future__ import annotations

WAVE_PREFIX = "wave-"
_REFUSED_CHARS = frozenset(" ~^:?*[\\/\x7f") | frozenset(chr(code) for code in range(32))


def wave_folder(number: int) -> str:
    """The folder of wave `number`."""
    return f"{WAVE_PREFIX}{number}"


def wave_number(folder: str) -> int | None:
    """The wave a folder holds, when its name is exactly `wave_folder(N)`; else None."""
    digits = folder.removeprefix(WAVE_PREFIX)
    if digits == folder or not (digits.isascii() and digits.isdigit()) or len(digits) > 9:
        return None
    number = int(digits)
    return number if wave_folder(number) == folder and number >= 1 else None


def looks_like_wave(folder: str) -> bool:
    """A folder meant as a wave (`wave-` then digits) whatever its spelling (`wave-01`)."""
    digits = folder.removeprefix(WAVE_PREFIX)
    return digits != folder and digits.isascii() and digits.isdigit()


def branch_component_problem(name: str) -> str | None:
    """Why git refuses `name` as one component of a branch name; None when it accepts it."""
    if not name:
        return "it is empty"
    bad = sorted({char for char in name if char in _REFUSED_CHARS})
    if bad:
        shown = ", ".join("a space" if c == " " else repr(c) for c in bad)
        return f"it holds {shown}"
    for part, why in (("..", "`..`"), ("@{", "`@{`")):
        if part in name:
            return f"it holds {why}"
    if name.startswith("."):
        return "it starts with `.`"
    if name.endswith(".lock"):
        return "it ends with `.lock`"
    return None


def plan_folder_problem(name: str) -> str | None:
    """One line saying why a plan folder called `name` cannot run, or None."""
    problem = branch_component_problem(name)
    if problem is None:
        return None
    return (f"the plan folder's name {name!r} cannot name the branches ralph run --graph "
            f"makes (ralph/<session>/<task>): {problem}; rename the folder (kebab-case)")
