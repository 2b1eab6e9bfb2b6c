"""`ralph ci`'s workflow, run: its jobs on this machine in `needs:` order (`tests.e2e.actions`),
each in a fresh clone of a local bare repository standing in for GitHub's, every `run:` step
the generator wrote executed, the loops the real Claude Code CLI against the scripted model.
Both wave-1 branches are pushed and merged in the graph's order, wave 2 starts from their
merge, the summaries are written; a conflicting wave stops the run before the next one, in
a project that is a subdirectory of its repository. The plan job stops a run without the
secret, with a plan changed since, or asked for a wave the plan does not have; the `waves`
input runs only those."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

from finesse.headless.ci.install import CLAUDE_CODE_PACKAGE, CLAUDE_CODE_VERSION
from tests.e2e.actions import Job, Runner
from tests.e2e.fakeapi import FakeModel
from tests.e2e.harness import REPO_ROOT, make_project
from tests.e2e.headless import (
    bash_then_promise,
    by_task,
    conversation,
    ralph_env,
    run_ralph,
)
from tests.helpers.graphs import PROMISE, workflow, write_plan
from tests.helpers.repo import git

pytestmark = pytest.mark.e2e

FINESSE = "git+https://github.com/example/finesse@0123456789abcdef0123456789abcdef01234567"
MODEL = "claude-sonnet-4-5"


def write_workflow(project: Path, env: dict[str, str]) -> str:
    """`ralph ci` on the committed plan `finesse-plans/demo` of `project`; the workflow it
    wrote at the repository's top, committed there."""
    done = run_ralph([sys.executable, str(REPO_ROOT / "scripts" / "ralph.py"), "ci",
                      "--project", str(project), "finesse-plans/demo", "--finesse", FINESSE,
                      "--model", MODEL, "--claude-args", "--allowedTools Bash",
                      "--iteration-timeout", "2m"], cwd=project, env=env)
    assert done.returncode == 0, done.describe()
    top = Path(git(project, "rev-parse", "--show-toplevel"))
    path = top / ".github" / "workflows" / "ralph-demo.yml"
    git(top, "add", str(path))
    git(top, "commit", "-q", "-m", "the ci workflow")
    return path.read_text()


def remote_of(project: Path, tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(project), str(remote))
    return remote


def runner(remote: Path, tmp_path: Path, claude_bin: Path, env: dict[str, str]) -> Runner:
    return Runner(remote=remote, work=tmp_path / "runner", env=env, claude_bin=claude_bin,
                  npm_package=f"{CLAUDE_CODE_PACKAGE}@{CLAUDE_CODE_VERSION}", finesse=FINESSE,
                  inputs={"base": "", "waves": ""}, secrets={"ANTHROPIC_API_KEY": "test-key"})


def machine(claude_home: Path, model: FakeModel) -> dict[str, str]:
    """The runner's environment: the fake API, no credential but the secret the workflow
    passes to its loop step."""
    env = ralph_env(claude_home, model.base_url)
    del env["ANTHROPIC_API_KEY"]
    return env


def results(jobs: dict[str, Job]) -> dict[str, str]:
    return {name: job.result for name, job in jobs.items()}


def describe(jobs: dict[str, Job]) -> str:
    return "\n".join(f"{name}: {job.result}\n{job.describe()}" for name, job in jobs.items())


def summaries(job: Job) -> dict[str, str]:
    return {entry.matrix.get("task", ""): entry.summary for entry in job.entries}


def test_the_workflow_runs_two_waves_merges_them_in_order_and_summarises_each_job(
    claude_bin: Path, claude_home: Path, tmp_path: Path
) -> None:
    project = make_project(tmp_path / "proj")
    write_plan(project, "demo", [workflow("alpha"), workflow("beta"),
                                 workflow("gamma", ["alpha", "beta"])])
    answer = by_task({
        "the alpha part": bash_then_promise("mkdir -p alpha && echo a > alpha/done.txt",
                                            PROMISE),
        "the beta part": bash_then_promise("mkdir -p beta && echo b > beta/done.txt", PROMISE),
        "the gamma part": bash_then_promise(
            "mkdir -p gamma && cat alpha/done.txt beta/done.txt > gamma/done.txt", PROMISE)})
    with FakeModel([answer] * 6) as model:
        env = machine(claude_home, model)
        text = write_workflow(project, env)
        remote = remote_of(project, tmp_path)
        began = time.monotonic()
        jobs = runner(remote, tmp_path, claude_bin, env).run(text)
        took = time.monotonic() - began
    print(f"two-wave workflow e2e: {took:.1f} s for the jobs")
    assert results(jobs) == {"plan": "success", "wave-1": "success", "merge-1": "success",
                             "wave-2": "success", "merge-2": "success"}, describe(jobs)
    assert model.call_count == 6
    branches = dict(line.split() for line in git(
        remote, "for-each-ref", "--format=%(refname:short) %(objectname)").splitlines())
    assert set(branches) == {"main", "ralph/demo/alpha", "ralph/demo/beta", "ralph/demo/gamma"}
    assert git(remote, "log", "--first-parent", "--format=%s", "main").splitlines() == [
        "ralph: merge gamma (wave 2 of demo)", "ralph: merge beta (wave 1 of demo)",
        "ralph: merge alpha (wave 1 of demo)", "the ci workflow", "plan demo", "initial"]
    # Wave 2 started from wave 1's merge: gamma read both files.
    assert git(remote, "show", "main:gamma/done.txt") == "a\nb"
    for name in ("alpha", "beta", "gamma"):
        assert git(remote, "log", "-1", "--format=%s", f"ralph/demo/{name}") == (
            f"ralph: {name}: the work left uncommitted at its end")
        tracked = git(remote, "ls-tree", "-r", "--name-only", f"ralph/demo/{name}").split()
        assert [path for path in tracked if path.startswith(".claude")] == []
    # Each loop ran in its own job's clone, none in the project.
    where = {re.search(r"Primary working directory: (\S+)", conversation(body))
             .group(1) for body in model.calls}  # type: ignore[union-attr]
    assert len(where) == 3 and not any(str(project) == place for place in where)
    wave_one = summaries(jobs["wave-1"])
    for name in ("alpha", "beta"):
        pushed = branches[f"ralph/demo/{name}"][:12]
        lines = wave_one[name].splitlines()
        assert lines[:6] == [
            f"### wave 1 · {name}: success (verified)", "",
            "- Iterations: 1 of 3", lines[3], "- Exit code: 0 (a verified success)",
            f"- Branch: `ralph/demo/{name}`, pushed to origin at `{pushed}`"]
        assert re.fullmatch(r"- Tokens: [\d,]+ \(\$[\d.,]+ \(estimated\)\)", lines[3])
        assert "<details><summary>The loop's report (" in wave_one[name]
    merges = git(remote, "log", "--first-parent", "--format=%H", "-3", "main").split()
    assert jobs["merge-1"].entries[0].summary == "\n".join([
        "### merge wave 1 into `main`: 2 of 2 branch(es) that ran merged", "",
        "| sub-workflow | outcome | branch | merge commit | note |",
        "| --- | --- | --- | --- | --- |",
        f"| alpha | success (verified) | `ralph/demo/alpha` | `{merges[2][:12]}` | merged |",
        f"| beta | success (verified) | `ralph/demo/beta` | `{merges[1][:12]}` | merged |",
        "", ""])
    assert jobs["merge-2"].outputs == {"commit": merges[0]}
    kept = sorted(path.name for path in (tmp_path / "runner" / "artifacts").rglob("*")
                  if path.is_file())
    assert kept == sorted(f"{name}.{kind}" for name in ("alpha", "beta", "gamma")
                          for kind in ("ralph-run.json", "record.json", "report.md",
                                       "summary.md"))
    record = json.loads((tmp_path / "runner" / "artifacts" / "ralph-demo-gamma" /
                         "gamma.ralph-run.json").read_text())
    assert (record["outcome"], record["verified"], record["exit_code"]) == ("success", True, 0)


def test_a_conflicting_wave_stops_before_the_next_in_a_monorepo_project(
    claude_bin: Path, claude_home: Path, tmp_path: Path
) -> None:
    top = make_project(tmp_path / "repo")
    project = top / "pkg"
    project.mkdir()
    (project / "app.txt").write_text("app\n")
    write_plan(project, "demo", [workflow("alpha"), workflow("beta"),
                                 workflow("gamma", ["alpha", "beta"])])
    answer = by_task({
        "the alpha part": bash_then_promise(
            "mkdir -p alpha && echo a > alpha/done.txt && echo alpha > shared.txt", PROMISE),
        "the beta part": bash_then_promise(
            "mkdir -p beta && echo b > beta/done.txt && echo beta > shared.txt", PROMISE),
        "the gamma part": bash_then_promise("echo never > gamma.txt", PROMISE)})
    with FakeModel([answer] * 6) as model:
        env = machine(claude_home, model)
        text = write_workflow(project, env)
        before = git(top, "rev-parse", "HEAD")
        remote = remote_of(top, tmp_path)
        jobs = runner(remote, tmp_path, claude_bin, env).run(text)
    assert results(jobs) == {"plan": "success", "wave-1": "success", "merge-1": "failure",
                             "wave-2": "skipped", "merge-2": "skipped"}, describe(jobs)
    assert not any("the gamma part" in conversation(body) for body in model.calls)
    branches = git(remote, "for-each-ref", "--format=%(refname:short)").split()
    assert set(branches) == {"main", "ralph/demo/alpha", "ralph/demo/beta"}
    assert git(remote, "rev-parse", "main^1") == before  # alpha's merge only
    assert git(remote, "log", "-1", "--format=%s", "main") == (
        "ralph: merge alpha (wave 1 of demo)")
    assert git(remote, "show", "main:pkg/shared.txt") == "alpha"
    assert git(remote, "show", "ralph/demo/beta:pkg/shared.txt") == "beta"
    merge = jobs["merge-1"].entries[0]
    alpha_merge = git(remote, "rev-parse", "main")[:12]
    assert merge.summary == "\n".join([
        "### merge wave 1 into `main`: stopped: merging ralph/demo/beta into main failed "
        "(conflicts in pkg/shared.txt); every branch is left as it is", "",
        "| sub-workflow | outcome | branch | merge commit | note |",
        "| --- | --- | --- | --- | --- |",
        f"| alpha | success (verified) | `ralph/demo/alpha` | `{alpha_merge}` | merged |",
        "| beta | success (verified) | `ralph/demo/beta` | - | merge failed and was undone: "
        "conflicts in pkg/shared.txt |", "",
        "Conflicting files: `pkg/shared.txt`", "",
        "**The waves after this one do not run.** Merge `ralph/demo/beta` into `main` "
        "yourself (`git fetch origin && git switch main && git merge --no-ff "
        "origin/ralph/demo/beta`) and push, then run this workflow again: branches already "
        "merged count as done.", "", ""])
    assert "::error::merge wave 1: merging ralph/demo/beta into main failed" in (
        merge.steps[-1].log)


def plan_only(tmp_path: Path, claude_bin: Path, claude_home: Path, *,
              inputs: dict[str, str] | None = None, secrets: dict[str, str] | None = None,
              edit: dict[str, str] | None = None) -> dict[str, Job]:
    """The workflow of a fresh three-task plan, run with other `inputs` or `secrets`, or
    after the plan was changed (`edit`: text appended to files) and committed; no loop is
    expected to start (no model would answer it)."""
    project = make_project(tmp_path / "proj")
    write_plan(project, "demo", [workflow("alpha"), workflow("beta"),
                                 workflow("gamma", ["alpha", "beta"])])
    env = ralph_env(claude_home, "http://127.0.0.1:9")
    del env["ANTHROPIC_API_KEY"]
    text = write_workflow(project, env)
    for path, more in (edit or {}).items():
        (project / path).write_text((project / path).read_text() + more)
        git(project, "commit", "-q", "-am", "changed the plan")
    stand_in = runner(remote_of(project, tmp_path), tmp_path, claude_bin, env)
    stand_in.inputs = inputs if inputs is not None else stand_in.inputs
    stand_in.secrets = secrets if secrets is not None else stand_in.secrets
    return stand_in.run(text)


def test_the_plan_job_stops_the_run_without_the_secret_or_with_a_changed_plan(
    claude_bin: Path, claude_home: Path, tmp_path: Path
) -> None:
    cases = [(plan_only(tmp_path / "secret", claude_bin, claude_home, secrets={}),
              "::error::The repository secret ANTHROPIC_API_KEY is not set"),
             (plan_only(tmp_path / "edit", claude_bin, claude_home,
                        edit={"finesse-plans/demo/wave-1/beta/plan.md": "\nmore\n"}),
              "::error::The plan finesse-plans/demo/ has changed since this workflow was "
              'written: run "ralph ci finesse-plans/demo" again'),
             (plan_only(tmp_path / "waves", claude_bin, claude_home,
                        inputs={"base": "", "waves": "1, 3"}),
              "::error::There is no wave 3 in this plan: give some of 1, 2")]
    for jobs, error in cases:
        assert results(jobs) == {"plan": "failure", "wave-1": "skipped", "merge-1": "skipped",
                                 "wave-2": "skipped", "merge-2": "skipped"}, describe(jobs)
        assert error in jobs["plan"].describe()


def test_the_waves_input_runs_only_those_waves(
    claude_bin: Path, claude_home: Path, tmp_path: Path
) -> None:
    # Wave 2 alone, wave 1 never run: gamma's dependencies are not merged, so it is skipped.
    jobs = plan_only(tmp_path, claude_bin, claude_home, inputs={"base": "", "waves": "2"})
    assert results(jobs) == {"plan": "success", "wave-1": "skipped", "merge-1": "success",
                             "wave-2": "success", "merge-2": "success"}, describe(jobs)
    assert jobs["plan"].outputs["waves"] == ",2,"
    assert jobs["merge-1"].entries[0].summary == (
        "### merge wave 1 into `main`: not chosen\n\nWave 1 was not among the waves this run "
        "was given.\n\n")
    assert summaries(jobs["wave-2"]) == {"gamma": (
        "### wave 2 · gamma: not run\n\ndepends on alpha, beta, which did not succeed and "
        "merge (`ralph/demo/gamma`).\n\n")}
    assert [step.name for step in jobs["wave-2"].entries[0].steps
            if step.outcome == "skipped"] == ["Run the loop", "Push the branch and summarise",
                                              "Upload the report"]
