"""Every Bash command the judge's guard has been shown, in one table: what it decides and
why. A row is added for each way round the guard found (docs/judge-guard.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from finesse.judging.guard import read_only

ALLOWED = "read-only"
REFUSED = "refused"

TABLE: list[tuple[str, str, str]] = [
    # (command, decision, why)
    ("git status", ALLOWED, "a reading git subcommand"),
    ("git diff --stat HEAD", ALLOWED, "diff with no output option"),
    ("git log --oneline -5", ALLOWED, "a count is no option that writes"),
    ("git log --format=%h", ALLOWED, "a format is no option that writes"),
    ("git show HEAD:src/x.py", ALLOWED, "show reads"),
    ("git grep -in needle", ALLOWED, "grep letters that only read"),
    ("git diff --no-textconv HEAD", ALLOWED, "turning a program off runs nothing"),
    ("git diff --output-indicator-new=+ HEAD", ALLOWED, "not an abbreviation of --output"),
    ("cat src/reports.py", ALLOWED, "a reader"),
    ("ls -la src", ALLOWED, "a reader"),
    ("grep -rn csv src", ALLOWED, "grep has no option that writes"),
    ("find . -name '*.py'", ALLOWED, "a quoted glob reaches find as written"),
    ('find . -name "*.py" -print', ALLOWED, "double quotes keep the glob too"),
    ("head -n 20 README.md", ALLOWED, "a reader"),
    ("wc -l src/x.py", ALLOWED, "a reader"),
    ("file -b a.txt", ALLOWED, "file without -C"),
    ("tree -a -L 2", ALLOWED, "tree without -o or -R"),
    ("", REFUSED, "nothing to prove"),
    ("pytest -q", REFUSED, "not a reader"),
    ("rm -rf src", REFUSED, "not a reader"),
    ("echo x > f", REFUSED, "a redirection"),
    ("cat a; rm b", REFUSED, "a second command"),
    ("cat a && touch b", REFUSED, "a second command"),
    ("cat $(touch x)", REFUSED, "a substitution"),
    ("cat `touch x`", REFUSED, "a substitution"),
    ("ls | sh", REFUSED, "a pipe"),
    ("cat a\nrm b", REFUSED, "a second line"),
    ("cat 'unclosed", REFUSED, "unbalanced quotes"),
    ("X=1 cat a", REFUSED, "an assignment is no reader"),
    ("python -c 'open(\"x\",\"w\")'", REFUSED, "not a reader"),
    ("git -c core.pager=sh log", REFUSED, "git's first argument must be a reading subcommand"),
    ("git commit -m x", REFUSED, "commit writes"),
    ("git diff --output=patch.txt", REFUSED, "--output writes the diff"),
    ("git diff --outp=patch.txt", REFUSED, "an abbreviation of --output"),
    ("git diff --ext-diff", REFUSED, "runs the external diff"),
    ("git log -p --textconv", REFUSED, "runs text conversion filters"),
    ("git grep -Ovim x", REFUSED, "-O runs its value as a pager"),
    ("git grep -iOrm x", REFUSED, "-O inside a group of short options runs rm"),
    ("git grep -lO'touch pwned' x", REFUSED, "-O with a quoted value in a group"),
    ("git grep --open-files-in-pager=rm x", REFUSED, "the long spelling of -O"),
    ("git grep --open x", REFUSED, "an abbreviation of --open-files-in-pager"),
    ("git diff HEAD *", REFUSED, "an unquoted glob may expand to --output=pwned"),
    ("git diff HEAD -- src/?.py", REFUSED, "an unquoted ? is a glob"),
    ("find . -fpr[i]nt x", REFUSED, "an unquoted [ may expand to -fprint"),
    ("find . -delete", REFUSED, "-delete removes files"),
    ("find . -exec rm {} +", REFUSED, "-exec runs a program"),
    ("find . -execdir ls", REFUSED, "-execdir runs a program"),
    ("find . -ok rm", REFUSED, "-ok runs a program"),
    ("find . -fprint out", REFUSED, "-fprint writes a file"),
    ("find . -fprint0 out", REFUSED, "-fprint0 writes a file"),
    ("find . -fprintf out %p", REFUSED, "-fprintf writes a file"),
    ("find . -fls out", REFUSED, "-fls writes a file"),
    ("find . -f'print' out", REFUSED, "quotes joined into -fprint"),
    ("tree -o out.txt", REFUSED, "-o writes the listing"),
    ("tree -ao out.txt", REFUSED, "-o inside a group"),
    ("tree -R -H .", REFUSED, "-R writes 00Tree.html in each folder"),
    ("file -C -m magic", REFUSED, "-C compiles a magic file"),
    ("file -bC -m a.txt", REFUSED, "-C inside a group writes a.txt.mgc"),
    ("file --comp -m a.txt", REFUSED, "an abbreviation of --compile"),
    ("file -z a.gz", REFUSED, "-z runs a decompressor"),
]


@pytest.mark.parametrize(("command", "decision", "why"), TABLE,
                         ids=[row[0] or "(empty)" for row in TABLE])
def test_the_guard_decides_as_the_table_says(command: str, decision: str, why: str) -> None:
    assert read_only(command) == (decision == ALLOWED), why


def test_a_file_named_like_an_option_never_reaches_git_as_one(tmp_path: Path) -> None:
    """The shell's glob in this checkout would hand git `--output=pwned`: the guard refuses
    the command, and the expansion is what it would have let through."""
    (tmp_path / "--output=pwned").write_text("x")
    (tmp_path / "-fprint").write_text("x")
    expanded = subprocess.run(["sh", "-c", "printf '%s\\n' * "], cwd=tmp_path, text=True,
                              capture_output=True, check=True).stdout.split()
    assert "--output=pwned" in expanded and "-fprint" in expanded
    assert not read_only("git diff HEAD *")
    assert not read_only("find . -fpr[i]nt x")


def test_the_docs_page_lists_every_reader_and_every_refused_option() -> None:
    from finesse.judging.guard import _GIT_READERS, _READERS

    page = (Path(__file__).resolve().parents[3] / "docs" / "judge-guard.md").read_text()
    for program, dangers in _READERS.items():
        assert f"`{program}`" in page, program
        spelled = [f"-{letter}" for letter in dangers.letters] + [*dangers.long, *dangers.words]
        for option in spelled:
            assert f"`{option}`" in page, (program, option)
    for subcommand in _GIT_READERS:
        assert f"`{subcommand}`" in page, subcommand
