"""Spend in the real CLI: the usage the scripted model reports reaches the loop through the
transcript, a budget ends the loop at the iteration that spends it, and the report's
receipts hold exactly the scripted figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fakeapi import FakeModel, text, usage
from tests.e2e.harness import ClaudeRun, ClaudeRunner

pytestmark = pytest.mark.e2e

# Every reply reports these; on claude-sonnet-4-5 ($3 input, $15 output, $3.75 cache write,
# $0.30 cache read per million tokens) that is 150,000 tokens and an estimated $0.8625.
REPORTED = usage(input=100_000, output=20_000, cache_creation=30_000, cache_read=500_000)


def _ok(run: ClaudeRun) -> None:
    assert run.returncode == 0, run.describe()
    assert run.result is not None and run.result.get("is_error") is False, run.describe()


def _ended(project: Path) -> list[dict[str, Any]]:
    history = project / ".claude" / "ralph" / "history"
    return [json.loads(path.read_text()) for path in sorted(history.glob("*.json"))]


@pytest.mark.parametrize(
    ("budget", "why"),
    [
        ("--max-tokens 400000",
         "450,000 tokens used (input, cache creation and output), the --max-tokens budget is "
         "400,000"),
        ("--max-cost 2",
         "an estimated $2.59 spent, the --max-cost budget is $2.00 (estimated from token prices "
         "dated 2026-12-01)"),
    ],
)
def test_a_budget_ends_the_loop_at_the_iteration_that_spends_it(
        run_claude: ClaudeRunner, project: Path, budget: str, why: str) -> None:
    script = [[text(f"Working, step {n}."), REPORTED] for n in range(1, 7)]
    with FakeModel(script) as model:
        run = run_claude(f'/ralph-loop "Port the parser" --max-iterations 6 --quiesce-after 6 '
                         f"{budget}", cwd=project, model=model)
    _ok(run)
    assert model.call_count == 3, run.describe()
    [loop] = _ended(project)
    assert (loop["outcome"], loop["iteration"]) == ("budget", 3)
    assert loop["end_message"] == (
        f"Ralph loop stopped at iteration 3/6: its budget is spent: {why}.")
    assert [entry["usage"] for entry in loop["iterations"]] == [[{
        "model": "claude-sonnet-4-5", "input": 100_000, "output": 20_000,
        "cache_creation": 30_000, "cache_read": 500_000}]] * 3
    assert [entry["cost"] for entry in loop["iterations"]] == [0.8625] * 3
    report = Path(loop["report_path"]).read_text()
    spend = report.split("## Spend (estimated)\n\n")[1].split("\n\n")[0]
    assert spend == (
        "| iteration | result | tokens | cache reads | estimated cost |\n"
        "| --- | --- | ---: | ---: | ---: |\n"
        "| 1 | continue | 150,000 | 500,000 | $0.86 |\n"
        "| 2 | continue | 150,000 | 500,000 | $0.86 |\n"
        "| 3 | budget | 150,000 | 500,000 | $0.86 |\n"
        "| total | | 450,000 | 1,500,000 | $2.59 |"
    )
    assert "- Spent on rejected completion claims: $0.00 (estimated) (0 claim(s))" in report
    raised = "--max-tokens 800000" if "tokens" in budget else "--max-cost 4"
    assert f"/ralph-resume {raised}" in report
