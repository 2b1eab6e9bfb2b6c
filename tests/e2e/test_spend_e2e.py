"""Spend in the real CLI: the usage the scripted model reports reaches the loop through the
transcript, a budget ends the loop at the iteration that spends it, and the report's
receipts hold exactly the scripted figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fakeapi import FakeModel, text, usage
from tests.e2e.harness import REPO_ROOT, ClaudeRun, ClaudeRunner
from tests.e2e.interactive import GATEWAY_TOKEN, Interactive, window_headers
from tests.helpers.repo import git

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


def test_stop_at_quota_ends_the_loop_when_the_status_line_reports_the_window_full(
        claude_bin: Path, claude_home: Path, project: Path) -> None:
    # Interactive: the status line runs only there. `ralph statusline --install` points the
    # project's settings at it; Claude Code gives it the five-hour window the (fake) gateway
    # reports at 85%; it records the figures; the loop's next stop ends it as `quota`.
    resets = int(time.time()) + 2 * 3600 + 300
    installed = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bin" / "ralph"), "statusline", "--install",
         "--project", str(project)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(claude_home)})
    assert installed.returncode == 0, installed.stderr
    git(project, "add", ".claude/settings.json")
    git(project, "commit", "-qm", "status line")
    recorded_at = project / ".claude" / "ralph" / "quota.json"

    def after_the_status_line(n: int) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
        # The status line runs after each change of the conversation, debounced; a scripted
        # model answers far faster than a real one, so it waits until the figures are in.
        def reply(body: dict[str, Any]) -> list[dict[str, Any]]:
            deadline = time.monotonic() + 30
            while not recorded_at.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            return [text(f"Tidying, step {n}."), REPORTED]
        return reply

    script: list[Any] = [[text("Tidying, step 1."), REPORTED],
                         *(after_the_status_line(n) for n in range(2, 7))]
    headers = window_headers(0.85, resets, 0.2, resets + 5 * 86400)
    history = project / ".claude" / "ralph" / "history"
    with FakeModel(script, headers=headers) as model, Interactive(
            claude_bin, claude_home, project, model.base_url,
            env={"ANTHROPIC_AUTH_TOKEN": GATEWAY_TOKEN}, api_key=False) as session:
        session.wait_for("ralph: no loop", 60)  # our status line, in place
        session.type('/ralph-loop "Tidy the docs" --stop-at-quota 80 --max-iterations 6 '
                     "--quiesce-after 6")
        session.wait_until(lambda: any(history.glob("*.json")), 90)
    [loop] = _ended(project)
    when = datetime.fromtimestamp(resets, UTC).strftime("%Y-%m-%d %H:%M")
    assert loop["outcome"] == "quota", loop["end_message"]
    assert loop["end_message"].endswith(
        f"the five-hour usage window is at 85% (--stop-at-quota 80); it resets at {when} UTC. "
        "Resume after that with /ralph-resume.")
    # Ended at the first stop after the figures were recorded: usually the second (the
    # first stop comes right after the first reply, before the debounced status line).
    assert loop["iteration"] in (1, 2)
    recorded = json.loads(recorded_at.read_text())
    assert (recorded["five_hour"], recorded["seven_day"]) == (85, 20)
    assert model.requests and all("authorization" in request.headers
                                  for request in model.requests)
