"""The workflow `ralph ci` writes, parsed back: its jobs and `needs:` are the execution graph,
each sub-workflow's `ralph run` is the translation `--graph` uses, the timeouts follow from
the caps, the triggers and the credential are the ones asked for; and the plans it refuses."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from finesse.authoring.workflows.folder import LoadedGraph, load_execution_graph
from finesse.authoring.workflows.model import GraphError
from finesse.errors import UsageError
from finesse.headless.ci.plan import CiSettings, Trigger, load_ci_plan
from finesse.headless.ci.render import PLAN_LINE, render, written_for
from finesse.headless.plan_args import loop_words
from finesse.headless.subworkflow import task_for
from tests.helpers.graphs import workflow, write_plan
from tests.helpers.repo import git

FINESSE = "git+https://github.com/example/finesse@abc123"
THREE = (workflow("alpha", iterations=3), workflow("beta", iterations=5),
         workflow("gamma", ["alpha", "beta"], iterations=4))


def settings(**changes: Any) -> CiSettings:
    return CiSettings(**{"finesse": FINESSE, **changes})


def parsed(root: Path, ci: CiSettings | None = None, folder: str = "finesse-plans/demo"
           ) -> dict[str, Any]:
    data = yaml.safe_load(render(load_ci_plan(root, Path(folder), ci or settings())))
    assert isinstance(data, dict)
    return data


def loop_commands(job: dict[str, Any]) -> dict[str, list[str]]:
    """The `ralph run` words of each task in the job's `case`, as the shell splits them."""
    script = next(step["run"] for step in job["steps"] if step.get("name") == "Run the loop")
    found = {}
    for branch in script.split(";;"):
        lines = [line.strip() for line in branch.splitlines() if line.strip()]
        lines = [line for line in lines if not line.startswith(("case ", "*)", "#"))]
        if lines and lines[0].endswith(")") and not lines[0].startswith("echo"):
            words = shlex.split(" ".join(line.removesuffix("\\") for line in lines[1:]))
            assert words[-2:] == [">", "$RUNNER_TEMP/ralph-run.json"], words
            found[lines[0][:-1]] = words[:-2]
    return found


def test_the_jobs_and_their_needs_are_the_execution_graph(git_repo: Path) -> None:
    loaded = load_execution_graph(write_plan(git_repo, "demo", THREE))
    data = parsed(git_repo, settings(jobs=3))
    jobs = data["jobs"]
    assert {name: job.get("needs", []) for name, job in jobs.items()} == {
        "plan": [], "wave-1": ["plan"], "merge-1": ["plan", "wave-1"],
        "wave-2": ["plan", "merge-1"], "merge-2": ["plan", "merge-1", "wave-2"]}
    # Each wave's matrix holds exactly the graph's wave, in its order, at most --jobs at once.
    waves = [[task for task in jobs[f"wave-{number}"]["strategy"]["matrix"]["task"]]
             for number in (1, 2)]
    assert waves == [[w.name for w in wave] for wave in loaded.waves]
    assert [jobs[f"wave-{n}"]["strategy"] for n in (1, 2)] == [
        {"fail-fast": False, "max-parallel": 3, "matrix": {"task": ["alpha", "beta"]}},
        {"fail-fast": False, "max-parallel": 3, "matrix": {"task": ["gamma"]}}]
    # A wave starts from the merge of the one before; a conflict stops every later wave.
    assert [jobs[name]["if"] for name in ("wave-1", "merge-1", "wave-2", "merge-2")] == [
        "${{ contains(needs.plan.outputs.waves, ',1,') }}",
        "${{ !cancelled() && needs.plan.result == 'success' }}",
        "${{ contains(needs.plan.outputs.waves, ',2,') }}",
        "${{ !cancelled() && needs.plan.result == 'success' && needs.merge-1.result == "
        "'success' }}"]
    checkouts = [jobs[name]["steps"][0]["with"] for name in ("wave-1", "wave-2", "merge-2")]
    assert checkouts == [{"ref": "${{ needs.plan.outputs.commit }}", "fetch-depth": 0},
                         {"ref": "${{ needs.merge-1.outputs.commit }}", "fetch-depth": 0},
                         {"ref": "${{ needs.plan.outputs.base }}", "fetch-depth": 0}]
    assert (data["permissions"], data["concurrency"]) == (
        {"contents": "write"}, {"group": "ralph-demo", "cancel-in-progress": False})


def test_each_loop_is_run_with_the_translation_graph_uses(git_repo: Path) -> None:
    loaded = load_execution_graph(write_plan(git_repo, "demo", THREE))
    extra = ["--effort", "high", "--max-cost", "5"]
    data = parsed(git_repo, settings(extra=tuple(extra), iteration_timeout=600,
                                     run_options=("--model", "claude-opus-4-6")))
    for wave, job in zip(loaded.waves, ("wave-1", "wave-2"), strict=True):
        commands = loop_commands(data["jobs"][job])
        assert set(commands) == {w.name for w in wave}
        for entry in wave:
            words = commands[entry.name]
            graph_words = task_for(git_repo, "demo", entry, extra).args  # --graph's
            assert words == ["ralph", "run",
                             *loop_words(entry, extra, relative_to=git_repo),
                             "--timeout-minutes", str(entry.max_iterations * 10),
                             "--iteration-timeout", "10m", "--model", "claude-opus-4-6",
                             "--json"]
            # The same words as --graph's, but the files named from the project root.
            assert [str((git_repo / word).resolve()) if word.startswith("finesse-plans/")
                    else word for word in words[2:2 + len(graph_words)]] == list(graph_words)
    assert loop_commands(data["jobs"]["wave-1"])["alpha"][2:11] == [
        "--prompt-file", "finesse-plans/demo/wave-1/alpha/prompt.md",
        "--completion-promise-file", "finesse-plans/demo/wave-1/alpha/promise.txt",
        "--max-iterations", "3", "--no-plan", "--verify", "test -d alpha"]


def test_job_timeouts_follow_from_the_caps(git_repo: Path) -> None:
    write_plan(git_repo, "demo", THREE)
    data = parsed(git_repo, settings(iteration_timeout=30 * 60))
    jobs = data["jobs"]
    # The longest loop of the wave (beta: 5 x 30 min), and 15 min to set up and push.
    assert [jobs[name]["timeout-minutes"] for name in jobs] == [10, 165, 20, 135, 20]
    words = loop_commands(jobs["wave-1"])
    assert [words[name][words[name].index("--timeout-minutes") + 1]
            for name in ("alpha", "beta")] == ["90", "150"]


def test_a_loop_longer_than_a_hosted_job_is_cut_with_a_warning_and_a_given_one_refused(
    git_repo: Path
) -> None:
    write_plan(git_repo, "demo", [workflow("alpha", iterations=25), workflow("beta")])
    plan = load_ci_plan(git_repo, Path("finesse-plans/demo"), settings(iteration_timeout=3600))
    assert [task.loop_minutes for task in plan.waves[0]] == [345, 180]
    assert plan.warnings == (
        "alpha may need 1500 min (25 iterations of up to 1h) and a job on a GitHub-hosted "
        "runner runs at most 360 min: its loop stops (resumably) after 345 min; lower "
        "--iteration-timeout, or give --runs-on a self-hosted runner",)
    assert (plan.waves[0][0].loop_minutes, plan.job_minutes(plan.waves[0])) == (345, 360)
    own = load_ci_plan(git_repo, Path("finesse-plans/demo"),
                       settings(iteration_timeout=3600, runs_on="my-runner"))
    assert (own.warnings, own.job_minutes(own.waves[0])) == ((), 1515)
    with pytest.raises(UsageError, match=r"^--timeout-minutes 400 is more than the jobs have: "
                                         r"a job on a GitHub-hosted runner runs at most 360 "
                                         r"min, 15 of them to set up; give at most 345$"):
        load_ci_plan(git_repo, Path("finesse-plans/demo"),
                     settings(extra=("--timeout-minutes", "400")))


def test_triggers_and_the_oauth_credential(git_repo: Path) -> None:
    write_plan(git_repo, "demo", THREE)
    data = parsed(git_repo, settings(auth="oauth", triggers=(
        Trigger("label", "ralph's"), Trigger("push", "main"))))
    assert data["on"]["pull_request"] == {"types": ["labeled"]}
    assert data["on"]["push"] == {"branches": ["main"], "paths": ["finesse-plans/demo/**"]}
    assert set(data["on"]["workflow_dispatch"]["inputs"]) == {"base", "waves"}
    assert data["jobs"]["plan"]["if"] == (
        "${{ github.event_name != 'pull_request' || github.event.label.name == 'ralph''s' }}")
    loop = next(step for step in data["jobs"]["wave-1"]["steps"]
                if step.get("name") == "Run the loop")
    assert loop["env"] == {"TASK": "${{ matrix.task }}",
                           "CLAUDE_CODE_OAUTH_TOKEN": "${{ secrets.CLAUDE_CODE_OAUTH_TOKEN }}"}
    # The secret reaches that step alone, and is never echoed.
    text = render(load_ci_plan(git_repo, Path("finesse-plans/demo"), settings(auth="oauth")))
    assert text.count("secrets.CLAUDE_CODE_OAUTH_TOKEN }}") == 2  # wave 1 and wave 2
    assert "secrets.CLAUDE_CODE_OAUTH_TOKEN != ''" in text  # the plan job's check
    assert "ANTHROPIC_API_KEY: " not in text


def test_a_plan_in_a_monorepo_project_runs_in_the_project(monorepo: Path) -> None:
    # Hostile world: the project is pkg/ of its repository; the workflow is at the top.
    write_plan(monorepo, "demo", THREE)
    plan = load_ci_plan(monorepo, Path("finesse-plans/demo"), settings())
    text = render(plan)
    data = yaml.safe_load(text)
    assert data["defaults"] == {"run": {"shell": "bash", "working-directory": "pkg"}}
    assert written_for(text) == "pkg/finesse-plans/demo"
    assert f"{PLAN_LINE}pkg/finesse-plans/demo\n" in text
    assert loop_commands(data["jobs"]["wave-1"])["alpha"][:5] == [
        "ralph", "run", "--project", ".", "--prompt-file"]
    begin = next(step for step in data["jobs"]["wave-1"]["steps"]
                 if step.get("id") == "begin")
    assert begin["run"] == 'ralph ci --project . finesse-plans/demo --begin-task "$TASK"\n'
    assert data["on"]["workflow_dispatch"]["inputs"]["base"]["default"] == ""
    assert plan.fingerprinted[0] == "finesse-plans/demo/execution-graph.md"


def test_the_plan_job_checks_the_plan_it_was_written_from(git_repo: Path) -> None:
    write_plan(git_repo, "demo", THREE)
    plan = load_ci_plan(git_repo, Path("finesse-plans/demo"), settings())
    assert plan.fingerprinted == (
        "finesse-plans/demo/execution-graph.md", "finesse-plans/demo/wave-1/alpha/plan.md",
        "finesse-plans/demo/wave-1/beta/plan.md", "finesse-plans/demo/wave-2/gamma/plan.md")
    plan_md = git_repo / "finesse-plans/demo/wave-1/beta/plan.md"
    plan_md.write_text(plan_md.read_text().replace("\n", "\r\n"))  # a CRLF checkout: the same
    assert load_ci_plan(git_repo, Path("finesse-plans/demo"), settings()).fingerprint == (
        plan.fingerprint)
    plan_md.write_text(plan_md.read_text() + "\nA change.\n")
    changed = load_ci_plan(git_repo, Path("finesse-plans/demo"), settings())
    assert changed.fingerprint != plan.fingerprint
    assert changed.warnings == ("finesse-plans/demo/ has changes that are not committed: the "
                                "jobs check out what is pushed, so commit and push the plan "
                                "with the workflow",)


def test_a_task_name_with_odd_characters_is_refused_as_the_graph_refuses_it(
    git_repo: Path
) -> None:
    folder = write_plan(git_repo, "demo", THREE)
    graph = folder / "execution-graph.md"
    graph.write_text(graph.read_text().replace("| alpha |", "| alpha; rm -rf ~ |"))
    with pytest.raises(GraphError, match=r"execution-graph.md: line \d+: ") as caught:
        load_ci_plan(git_repo, Path("finesse-plans/demo"), settings())
    assert "\n" not in str(caught.value)
    with pytest.raises(GraphError) as graph_says:
        load_execution_graph(folder)
    assert str(graph_says.value) == str(caught.value)


def rename_plan(root: Path, folder: Path, name: str) -> Path:
    renamed = folder.with_name(name)
    git(root, "mv", str(folder), str(renamed))
    graph = renamed / "execution-graph.md"
    graph.write_text(graph.read_text().replace("finesse-plans/demo/", f"finesse-plans/{name}/"))
    return renamed


@pytest.mark.parametrize("name", ["-todo", "tödo"])
def test_a_plan_folder_no_workflow_file_can_be_named_after_is_refused(git_repo: Path,
                                                                     name: str) -> None:
    renamed = rename_plan(git_repo, write_plan(git_repo, "demo", THREE), name)
    assert isinstance(load_execution_graph(renamed), LoadedGraph)  # --graph's check passes
    with pytest.raises(UsageError, match=r"^the plan folder's name .* names its branches "
                                         r"\(ralph/<session>/<task>\) and its workflow file: "
                                         r"rename the folder"):
        load_ci_plan(git_repo, renamed, settings())


@pytest.mark.parametrize("name", ["todo:api", "todo.lock", "a..b"])
def test_a_plan_folder_no_branch_can_be_named_after_is_refused(git_repo: Path,
                                                              name: str) -> None:
    # The rule --graph and finesse validate share (authoring/workflows/names.py).
    renamed = rename_plan(git_repo, write_plan(git_repo, "demo", THREE), name)
    for load in (load_execution_graph, lambda folder: load_ci_plan(git_repo, folder,
                                                                    settings())):
        with pytest.raises(GraphError, match=r"the plan folder's name .* cannot name the "
                                             r"branches ralph run --graph makes"):
            load(renamed)


def test_loop_options_the_plan_gives_are_refused(git_repo: Path) -> None:
    write_plan(git_repo, "demo", THREE)
    for extra, message in [
        (("--max-iterations", "3"), "ralph ci takes each sub-workflow's --max-iterations "
                                    "from its plan: drop it"),
        (("Build", "it"), "ralph ci runs the plan's own prompts: drop the prompt words "
                          "(Build it)"),
        (("--judge",), "--judge runs inside one Claude Code session"),
    ]:
        with pytest.raises(UsageError) as caught:
            load_ci_plan(git_repo, Path("finesse-plans/demo"), settings(extra=extra))
        assert str(caught.value).startswith(message)


def test_outside_git_no_workflow_is_written(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^ralph ci writes a workflow for a git repository "
                                         r"and .* is not in one"):
        load_ci_plan(tmp_path, Path("finesse-plans/demo"), settings())
