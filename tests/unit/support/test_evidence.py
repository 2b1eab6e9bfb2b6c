"""How a command's result is shown: the failure excerpt the next prompt carries, in a fence
that keeps the output code."""

from __future__ import annotations

from pathlib import Path

from finesse.support.evidence import failure_excerpt
from finesse.support.verify import run_all
from tests.helpers.states import command_result


def test_no_failures_no_excerpt() -> None:
    assert failure_excerpt([command_result("pytest -q", 0, "ok\n")]) == ""
    assert failure_excerpt([]) == ""


def test_failure_excerpt_names_each_failure() -> None:
    results = [
        command_result("ruff check .", 0, "All checks passed!\n"),
        command_result("pytest -q", 1, "F.\nFAILED test_a\n1 failed in 0.1s\n"),
        command_result("sleep 60", None, "", timed_out=True, seconds=300.2),
        command_result("make lint", None,
                       "could not start /bin/sh in /x: that directory does not exist"),
        command_result("slow", None, "partial\n", timed_out=True, seconds=2.54),
    ]
    assert failure_excerpt(results) == (
        "`pytest -q`: exit code 1. Its output:\n"
        "```\nF.\nFAILED test_a\n1 failed in 0.1s\n```\n"
        "\n"
        "`sleep 60`: timed out after 300 s. It printed nothing.\n"
        "\n"
        "`make lint`: could not start. Its output:\n"
        "```\ncould not start /bin/sh in /x: that directory does not exist\n```\n"
        "\n"
        "`slow`: timed out after 2.5 s. Its output:\n"
        "```\npartial\n```\n"
    )


def test_failure_excerpt_fence_outgrows_backticks() -> None:
    output = "see ```python\ncode\n``` and ````` here\n"
    assert failure_excerpt([command_result("echo `date` ``x``", 2, output)]) == (
        "``` echo `date` ``x`` ```: exit code 2. Its output:\n"
        "``````\nsee ```python\ncode\n``` and ````` here\n``````\n"
    )


def test_failure_excerpt_shares_the_budget_and_keeps_the_end() -> None:
    long = "".join(f"line {n:02d}\n" for n in range(40))
    results = [command_result("a", 1, long),
               command_result("b", 1, long, output_bytes=9_000_000)]
    assert failure_excerpt(results, max_chars=50) == (
        f"`a`: exit code 1. The end of its output ({len(long)} bytes in all):\n"
        "```\nline 37\nline 38\nline 39\n```\n"
        "\n"
        "`b`: exit code 1. The end of its output (9000000 bytes in all):\n"
        "```\nline 37\nline 38\nline 39\n```\n"
    )


def test_failure_excerpt_of_a_real_run(tmp_path: Path) -> None:
    results = run_all(["echo fine", "echo broken >&2; exit 4"], cwd=tmp_path, timeout=10)
    assert failure_excerpt(results) == (
        "`echo broken >&2; exit 4`: exit code 4. Its output:\n```\nbroken\n```\n"
    )
