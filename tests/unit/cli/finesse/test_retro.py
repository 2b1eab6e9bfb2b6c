"""`finesse retro`: the pure readers in memory, then a real git repository with a plan, two
commits after its baseline, a prompt whose Verify commands pass and fail, and loop records."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import git
import pytest
from click.testing import CliRunner

from finesse.cli.finesse import cli
from finesse.models import IterationRecord
from finesse.state.paths import StatePaths
from finesse.state.store import LoopStore
from tests.helpers.states import make_state

# ---------------------------------------------------------------- a real repository

PROMPT = """\
# Loop: the app file

You are iterating on the app file. You have no memory of earlier iterations, so first check \
the current state: `git status`.

Max iterations: 5

Phase 1: create the app file. Verify: `test -f app.txt && echo present`
Phase 2: make the check pass.

Verify:

```sh
echo boom >&2
exit 3
```

Output <promise>APP_DONE</promise> when `test -f app.txt` exits 0.
"""
PLAN = """\
---
prompt_file: "finesse-plans/app.md"
baseline_commit: "{sha}"
---

# Plan: the app file

## Unresolved Warnings

- the budget is high
- no e2e test yet
"""
# A reader leaves an unreadable record where it is (it used to be moved to corrupt/).
BROKEN_NOTE = "skipped .claude/ralph/history/broken.json: not a readable loop record"
REPORT = "# Ralph loop report: success\n\n```\nsome output\n```\n"


def commit(repo: git.Repo, message: str, files: dict[str, str]) -> str:
    root = Path(repo.working_tree_dir or ".")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    repo.index.add(list(files))
    return repo.index.commit(message).hexsha


@pytest.fixture
def project(git_repo: Path) -> dict[str, str]:
    """The plan committed as the baseline, two commits after it, one loop of this plan, one
    of another task after the baseline, one long before it, and a record that is not JSON."""
    repo = git.Repo(git_repo)
    baseline = commit(repo, "plan the app file", {"finesse-plans/app.md": PROMPT,
                                                  "finesse-plans/app-promise.txt": "APP_DONE\n"})
    # The plan is written once its baseline is known, and committed with the first change.
    first = commit(repo, "add the app file", {"app.txt": "app\n",
                                              "finesse-plans/app-plan.md": PLAN.format(
                                                  sha=baseline)})
    second = commit(repo, "readme: say what the app is", {"README.md": "project: an app\n"})
    repo.close()
    (git_repo / "scratch.txt").write_text("notes\n")
    state = git_repo / ".claude" / "ralph"
    store = LoopStore(StatePaths(git_repo))

    def ended(loop_id: str, prompt: str, started: str, finished: str, iterations: int,
              **fields: Any) -> None:
        start, end = datetime.fromisoformat(started), datetime.fromisoformat(finished)
        records = [IterationRecord(number=n, started_at=start, ended_at=end, result="continue")
                   for n in range(1, iterations + 1)]
        store.archive(make_state(git_repo, loop_id=loop_id, prompt=prompt, promise="APP_DONE",
                                 max_iterations=5, started_at=start, updated_at=end,
                                 iteration_started_at=start, ended_at=end,
                                 iterations=records, **fields))

    ended("loop-ours", PROMPT.strip(), "2100-01-01T08:00:00+00:00",
          "2100-01-01T08:30:00+00:00", 2, outcome="success",
          end_message="promise output\nafter 2 iterations")
    ended("loop-other", "another task", "2100-01-01T09:00:00+00:00",
          "2100-01-01T10:00:00+00:00", 1, outcome="limit", end_message="cap reached")
    ended("loop-old", "old task", "2001-01-01T00:00:00+00:00", "2001-01-01T01:00:00+00:00",
          1, outcome="success", end_message="promise output")
    (state / "history" / "broken.json").write_text("{not json")
    (state / "reports").mkdir()
    (state / "reports" / "loop-ours.md").write_text(REPORT)
    (state / "reports" / "loop-old.md").write_text("# old\n")
    (state / "reports" / "stray.md").write_text("# Ralph loop report: error\n")
    stale = state / "reports" / "ancient.md"
    stale.write_text("# ancient\n")
    os.utime(stale, (978307200, 978307200))  # 2001: before the baseline
    return {"root": str(git_repo), "baseline": baseline, "first": first, "second": second}


def expected_json(project: dict[str, str]) -> dict[str, Any]:
    reports = ".claude/ralph/reports"
    return {
        "name": "app",
        "plan": "finesse-plans/app-plan.md",
        "prompt": "finesse-plans/app.md",
        "retro": "finesse-plans/app-retro.md",
        "baseline_commit": project["baseline"],
        "head_commit": project["second"],
        "commits": [{"sha": project["first"], "subject": "add the app file"},
                    {"sha": project["second"], "subject": "readme: say what the app is"}],
        "files_changed": [{"status": "M", "path": "README.md"},
                          {"status": "A", "path": "app.txt"},
                          {"status": "A", "path": "finesse-plans/app-plan.md"}],
        "uncommitted": ["scratch.txt"],
        "phases": [
            {"phase": 1, "title": "create the app file",
             "command": "test -f app.txt && echo present", "result": "pass", "exit_code": 0,
             "duration_seconds": ANY, "output_tail": "present\n"},
            {"phase": 2, "title": "make the check pass", "command": "echo boom >&2\nexit 3",
             "result": "fail", "exit_code": 3, "duration_seconds": ANY,
             "output_tail": "boom\n"},
        ],
        "loops": [
            {"loop_id": "loop-ours", "match": "prompt", "outcome": "success", "iterations": 2,
             "started_at": "2100-01-01T08:00:00+00:00", "ended_at": "2100-01-01T08:30:00+00:00",
             "end_message": "promise output\nafter 2 iterations",
             "report": f"{reports}/loop-ours.md"},
            {"loop_id": "loop-other", "match": "time", "outcome": "limit", "iterations": 1,
             "started_at": "2100-01-01T09:00:00+00:00", "ended_at": "2100-01-01T10:00:00+00:00",
             "end_message": "cap reached", "report": None},
            {"loop_id": "stray", "match": "time", "outcome": None, "iterations": None,
             "started_at": None, "ended_at": None, "end_message": "",
             "report": f"{reports}/stray.md"},
        ],
        "unresolved_warnings": ["the budget is high", "no e2e test yet"],
        "notes": [BROKEN_NOTE],
    }




def run_retro(runner: CliRunner, project: dict[str, str], *args: str) -> Any:
    plan = str(Path(project["root"]) / "finesse-plans" / "app-plan.md")
    return runner.invoke(cli, ["retro", plan, "--project", project["root"], *args],
                         prog_name="finesse")


def test_retro_json_is_the_whole_review(runner: CliRunner, project: dict[str, str]) -> None:
    result = run_retro(runner, project, "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == expected_json(project)
    # A second run leaves its own retro file out of the uncommitted files. The retro only
    # reads: the unreadable record stays where it is, and is noted again.
    again = run_retro(runner, project, "--json")
    assert json.loads(again.stdout) == expected_json(project)
    history = Path(project["root"]) / ".claude" / "ralph" / "history"
    assert (history / "broken.json").read_text() == "{not json"
    assert not (history.parent / "corrupt").exists()


def test_retro_file_has_every_section(runner: CliRunner, project: dict[str, str]) -> None:
    result = run_retro(runner, project)
    assert (result.exit_code, result.stderr) == (0, "")
    base, first, second = project["baseline"], project["first"], project["second"]
    assert result.stdout.splitlines() == [
        f"2 commits and 3 files changed since {base[:12]} (1 more not committed)",
        "Verify: 1 of 2 phases pass: not 2",
        "Loops: 1 of this plan, 2 others since the baseline",
        f"note: {BROKEN_NOTE}",
        "Wrote finesse-plans/app-retro.md",
    ]
    text = (Path(project["root"]) / "finesse-plans" / "app-retro.md").read_text()
    assert re.sub(r" in \d+\.\d s\.", " in N s.", text) == f"""\
# Retro: app

- **Plan**: `finesse-plans/app-plan.md`
- **Prompt**: `finesse-plans/app.md`
- **Baseline commit**: `{base}`
- **HEAD**: `{second}`

## Summary

- Commits since the baseline: 2
- Files changed: 3 in those commits, 1 not committed
- Verify commands: 1 of 2 phases pass
- Loops: 1 of this plan, 2 others since the baseline
- Unresolved warnings: 2

## Commits since the baseline

- `{first[:12]}` add the app file
- `{second[:12]}` readme: say what the app is

## Files changed

- M `README.md`
- A `app.txt`
- A `finesse-plans/app-plan.md`

Not committed:

- `scratch.txt`

## Verify commands

### Phase 1: create the app file (pass)

`test -f app.txt && echo present` exited 0 in N s.

```text
present
```

### Phase 2: make the check pass (fail)

`echo boom >&2 exit 3` exited 3 in N s.

```text
boom
```

## Loops

### `loop-ours`: success after 2 iterations

- Matched: by its prompt, this plan's
- Ran: 2100-01-01T08:00:00+00:00 to 2100-01-01T08:30:00+00:00
- End message: promise output after 2 iterations
- Report: `.claude/ralph/reports/loop-ours.md`

````markdown
# Ralph loop report: success

```
some output
```
````

### `loop-other`: limit after 1 iterations

- Matched: by time only (it ended after the baseline commit)
- Ran: 2100-01-01T09:00:00+00:00 to 2100-01-01T10:00:00+00:00
- End message: cap reached
- Report: none

### `stray`: no history entry

- Matched: by time only (it ended after the baseline commit)
- Report: `.claude/ralph/reports/stray.md`

```markdown
# Ralph loop report: error
```

## Unresolved warnings

- the budget is high
- no e2e test yet

## Notes

- {BROKEN_NOTE}
"""


def test_a_plan_without_prompt_history_or_warnings_still_gets_a_retro(
        runner: CliRunner, git_repo: Path) -> None:
    head = git.Repo(git_repo).head.commit.hexsha
    plan = git_repo / "lonely-plan.md"
    plan.write_text(f"- **baseline_commit**: {head[:7]}\n")
    result = runner.invoke(cli, ["retro", str(plan), "--project", str(git_repo), "--json"],
                           prog_name="finesse")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == {
        "name": "lonely", "plan": "lonely-plan.md", "prompt": None, "retro": "lonely-retro.md",
        "baseline_commit": head, "head_commit": head, "commits": [], "files_changed": [],
        "uncommitted": ["lonely-plan.md"], "phases": [], "loops": [],
        "unresolved_warnings": None,
        "notes": ["no prompt file lonely.md: no Verify command to run"],
    }
    text = (git_repo / "lonely-retro.md").read_text()
    assert "## Commits since the baseline\n\nNone.\n" in text
    assert "## Verify commands\n\nNo phase to verify.\n" in text
    assert "## Loops\n\nNo loop of this plan, and none since the baseline.\n" in text
    assert "## Unresolved warnings\n\nThe plan has no Unresolved Warnings section.\n" in text


def test_a_sub_workflow_plan_md_uses_prompt_md_and_writes_retro_md(
        runner: CliRunner, git_repo: Path) -> None:
    head = git.Repo(git_repo).head.commit.hexsha
    task = git_repo / "finesse-plans" / "s" / "wave-1" / "app"
    task.mkdir(parents=True)
    (task / "plan.md").write_text(f"baseline_commit: {head}\n\n## Unresolved Warnings\n\nNone.\n")
    (task / "prompt.md").write_text(PROMPT)
    result = runner.invoke(cli, ["retro", str(task / "plan.md"), "--project", str(git_repo),
                                 "--timeout", "5", "--json"], prog_name="finesse")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    prefix = "finesse-plans/s/wave-1/app"
    assert (data["name"], data["prompt"], data["retro"], data["unresolved_warnings"]) == (
        "app", f"{prefix}/prompt.md", f"{prefix}/retro.md", [])
    assert [(p["phase"], p["result"]) for p in data["phases"]] == [(1, "fail"), (2, "fail")]
    assert (task / "retro.md").is_file()


def test_a_verify_command_that_outlives_the_timeout_is_reported(
        runner: CliRunner, git_repo: Path) -> None:
    head = git.Repo(git_repo).head.commit.hexsha
    (git_repo / "slow-plan.md").write_text(f"baseline_commit: {head}\n")
    (git_repo / "slow.md").write_text("Phase 1: wait. Verify: `sleep 30`\n")
    result = runner.invoke(cli, ["retro", str(git_repo / "slow-plan.md"), "--project",
                                 str(git_repo), "--timeout", "0.3", "--json"],
                           prog_name="finesse")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["phases"] == [
        {"phase": 1, "title": "wait", "command": "sleep 30", "result": "timed out",
         "exit_code": None, "duration_seconds": ANY, "output_tail": ""}]


@pytest.mark.parametrize(("setup", "message"), [
    ("missing", "finesse retro: plan file {plan}: no such file; give the path of an existing "
                "file"),
    ("no-baseline", "finesse retro: {plan}: no baseline_commit (a line `baseline_commit: "
                    "<sha>`), so there is nothing to compare against"),
    ("unknown-commit", "finesse retro: baseline_commit abcdef1 is not a commit of the "
                       "repository at {root}"),
    ("badly-named", "finesse retro: {plan}: a plan file is named <name>-plan.md (or plan.md "
                    "in a sub-workflow folder), e.g. finesse-plans/csv-export-plan.md"),
    ("not-a-repository", "finesse retro: {root} is not in a git repository; give the project "
                         "with --project DIR"),
])
def test_usage_errors_exit_2_with_one_line(
        runner: CliRunner, git_repo: Path, tmp_path: Path, setup: str, message: str) -> None:
    root = git_repo
    plan = git_repo / ("notes.md" if setup == "badly-named" else "app-plan.md")
    if setup == "no-baseline":
        plan.write_text('baseline_commit: "none (not a git repository)"\n')
    elif setup in ("unknown-commit", "badly-named"):
        plan.write_text("baseline_commit: abcdef1\n")
    elif setup == "not-a-repository":
        root = tmp_path / "plain"
        root.mkdir()
        plan = root / "app-plan.md"
        plan.write_text("baseline_commit: abcdef1\n")
    result = runner.invoke(cli, ["retro", str(plan), "--project", str(root)],
                           prog_name="finesse")
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", message.format(plan=plan, root=root) + "\n")


def test_a_bad_timeout_is_a_usage_error(runner: CliRunner, git_repo: Path) -> None:
    result = runner.invoke(cli, ["retro", "x-plan.md", "--timeout", "0"], prog_name="finesse")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("finesse retro: Invalid value for '--timeout': 0.0 is not ")
