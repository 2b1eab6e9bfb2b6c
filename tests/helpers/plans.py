"""Written plans (`tasks/todo.md`) in a test project, committed as a user would."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.repo import git

# Everything but Attempts and Review belongs to the user and must come back byte for byte:
# unicode, a fence holding a heading-like line, an odd heading, no newline at the end.
BEFORE_ATTEMPTS = """\
# Ship the tax fix ✓

Intro — with “quotes” and a tab\there.

## Goal
Totals include tax. Ünïcödé.

## Acceptance Criteria
- [ ] `test -f done.txt` passes

## Plan
1. Write done.txt
   ```sh
   ## Review (inside a fence: not a heading)
   echo ok > done.txt
   ```

## Verification Commands
- `test -f README.md`

"""
ATTEMPTS = "## Attempts\n- (none yet)\n\n"
REVIEW = "## Review\nReviewer notes kept by hand.\n\n### Odd heading ###\n"
AFTER_REVIEW = "## Notes\nTrailing notes, no newline at the end"
PLAN = BEFORE_ATTEMPTS + ATTEMPTS + REVIEW + AFTER_REVIEW


def commit_plan(root: Path, text: str) -> Path:
    """Write `text` as the project's tasks/todo.md and commit it."""
    path = root / "tasks" / "todo.md"
    path.parent.mkdir()
    path.write_bytes(text.encode("utf-8"))
    git(root, "add", "tasks/todo.md")
    git(root, "commit", "-q", "-m", "plan")
    return path


def plan_parts(path: Path) -> tuple[str, str, str]:
    """The plan as (before Attempts, Attempts and Review, after Review)."""
    text = path.read_bytes().decode("utf-8")
    start = text.index("## Attempts\n")
    end = text.index("## Notes\n")
    return text[:start], text[start:end], text[end:]
