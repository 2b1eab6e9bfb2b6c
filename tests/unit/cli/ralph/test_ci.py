"""`ralph ci`: the workflow written where GitHub reads it (and rewritten there), printed, or
refused in one line with nothing lost: a workflow the user wrote, another plan's, a FIFO, a
link; the options' errors; and the workflow's own steps as its jobs run them."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from finesse.headless.ci.render import written_for
from tests.helpers.cli import run
from tests.helpers.graphs import workflow, write_plan
from tests.helpers.repo import git, write

FINESSE = "git+https://github.com/example/finesse@abc123"
THREE = (workflow("alpha"), workflow("beta"), workflow("gamma", ["alpha", "beta"]))


def ci(capsys: pytest.CaptureFixture[str], root: Path, *words: str) -> tuple[int, str, str]:
    return run(capsys, "ci", "--project", str(root), "finesse-plans/demo", "--finesse",
               FINESSE, *words)


@pytest.fixture
def planned(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_plan(root, "demo", THREE)
    monkeypatch.chdir(root)
    return root / ".github" / "workflows" / "ralph-demo.yml"


def test_it_writes_the_workflow_where_github_reads_it_and_rewrites_its_own(
    capsys: pytest.CaptureFixture[str], root: Path, planned: Path
) -> None:
    code, out, err = ci(capsys, root, "--jobs", "3")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "Wrote .github/workflows/ralph-demo.yml: 3 sub-workflow(s) in 2 wave(s), at most 3 at "
        "a time per wave, each job up to 75 min.",
        "Commit and push it with finesse-plans/demo/, set the repository secret "
        "ANTHROPIC_API_KEY, then run it from the Actions tab (or `gh workflow run "
        "ralph-demo.yml`).", ]
    first = planned.read_text()
    assert written_for(first) == "finesse-plans/demo"
    assert ("#   ralph ci finesse-plans/demo --jobs 3 --auth api-key --runs-on ubuntu-latest "
            f"--iteration-timeout 20m --finesse {FINESSE}\n") in first
    code, _, _ = ci(capsys, root, "--jobs", "4")
    assert code == 0 and "max-parallel: 4" in planned.read_text()


def test_print_writes_nothing_and_prints_what_it_would_write(
    capsys: pytest.CaptureFixture[str], root: Path, planned: Path
) -> None:
    code, out, err = ci(capsys, root, "--print")
    assert (code, err, planned.exists()) == (0, "", False)
    ci(capsys, root)
    assert out == planned.read_text()
    code, _, err = ci(capsys, root, "--print", "--output", "x.yml")
    assert (code, err) == (2, "ralph ci: --print writes nothing: leave out --output and "
                              "--force\n")


@pytest.mark.parametrize("content", [b"name: mine\non: push\n", b"# \xff\xfe not UTF-8\n",
                                     b""])
def test_a_workflow_the_user_wrote_is_never_overwritten_without_force(
    capsys: pytest.CaptureFixture[str], root: Path, planned: Path, content: bytes
) -> None:
    # Hostile world: the user's own .github/workflows/ralph-demo.yml.
    planned.parent.mkdir(parents=True)
    planned.write_bytes(content)
    code, out, err = ci(capsys, root)
    assert (code, out) == (2, "")
    assert err == ("ralph ci: .github/workflows/ralph-demo.yml is a workflow ralph ci did not "
                   "write: give --output for another file, or --force to replace it\n")
    assert planned.read_bytes() == content
    code, _, _ = ci(capsys, root, "--force")
    assert code == 0 and written_for(planned.read_text()) == "finesse-plans/demo"


def test_another_plans_workflow_is_not_overwritten(
    capsys: pytest.CaptureFixture[str], root: Path, planned: Path
) -> None:
    ci(capsys, root)
    other = planned.read_text().replace("# ralph-ci-plan: finesse-plans/demo",
                                        "# ralph-ci-plan: pkg/finesse-plans/demo")
    planned.write_text(other)
    code, _, err = ci(capsys, root)
    assert (code, planned.read_text()) == (2, other)
    assert err == ("ralph ci: .github/workflows/ralph-demo.yml is the workflow of another plan, "
                   "pkg/finesse-plans/demo/: give --output for another file, or --force to "
                   "replace it\n")


def test_a_fifo_or_a_link_at_the_output_is_refused_without_blocking(
    capsys: pytest.CaptureFixture[str], root: Path, planned: Path, tmp_path: Path
) -> None:
    planned.parent.mkdir(parents=True)
    os.mkfifo(planned)
    began = time.monotonic()
    code, _, err = ci(capsys, root, "--force")
    assert (code, time.monotonic() - began < 5) == (2, True)
    assert err == ("ralph ci: .github/workflows/ralph-demo.yml is not a regular file (a "
                   "directory, FIFO or device): give --output for another file\n")
    planned.unlink()
    target = write(tmp_path, "elsewhere.yml", "kept\n")
    planned.symlink_to(target)
    code, _, err = ci(capsys, root)
    assert (code, err) == (2, "ralph ci: .github/workflows/ralph-demo.yml is a symbolic link: "
                              "give --output for another file, or --force to replace the link "
                              "with the workflow\n")
    assert ci(capsys, root, "--force")[0] == 0
    assert (planned.is_symlink(), target.read_text()) == (False, "kept\n")


def test_a_monorepo_projects_workflow_goes_to_the_repositorys_top(
    capsys: pytest.CaptureFixture[str], monorepo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_plan(monorepo, "demo", THREE)
    top = monorepo.parent
    monkeypatch.chdir(top)
    code, out, _ = run(capsys, "ci", "--project", "pkg", "finesse-plans/demo", "--finesse",
                       FINESSE)
    assert code == 0 and out.startswith("Wrote .github/workflows/ralph-demo.yml: ")
    # Both paths as the user, at the repository's top, names them.
    assert "Commit and push it with pkg/finesse-plans/demo/, set " in out
    assert written_for((top / ".github/workflows/ralph-demo.yml").read_text()) == (
        "pkg/finesse-plans/demo")
    assert not (monorepo / ".github").exists()


def test_a_monorepo_workflows_hints_name_the_project(
    capsys: pytest.CaptureFixture[str], monorepo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workflow's errors tell the user to run `ralph ci` again: from the repository's
    top, where they read it, that command needs `--project pkg` (without it the plan folder
    is looked for at the top, and is not there)."""
    write_plan(monorepo, "demo", THREE)
    monkeypatch.chdir(monorepo.parent)
    assert run(capsys, "ci", "--project", "pkg", "finesse-plans/demo", "--finesse",
               FINESSE)[0] == 0
    text = (monorepo.parent / ".github/workflows/ralph-demo.yml").read_text()
    hints = [line.split("ralph ci ", 1)[1] for line in text.splitlines()
             if "::error::" in line and "ralph ci " in line]
    assert len(hints) == 4  # the credential, the plan, a task unknown to each of 2 waves
    assert all(hint.startswith("--project pkg finesse-plans/demo") for hint in hints), hints


def test_a_value_github_would_evaluate_as_an_expression_is_refused(
    capsys: pytest.CaptureFixture[str], root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub evaluates `${{ ... }}` in a `run:` script before bash reads it: a plan's
    verify command holding one had a secret pasted into the script (shlex quotes for the
    shell, not for GitHub). Refused in one line, nothing written."""
    leaky = workflow("alpha")
    leaky["phases"][1]["verify"] = (
        "test -f alpha/done.txt && echo ${{ secrets.ANTHROPIC_API_KEY }}")
    write_plan(root, "demo", (leaky, workflow("beta")))
    monkeypatch.chdir(root)
    code, out, err = ci(capsys, root)
    assert (code, out) == (2, "")
    assert err == ("ralph ci: '${{' in alpha's ralph run arguments: GitHub Actions would "
                   "evaluate it as an expression in the workflow; write it without (a shell "
                   "variable is $NAME or ${NAME})\n")
    code, _, err = ci(capsys, root, "--model", "${{ github.token }}")
    assert (code, err) == (2, "ralph ci: '${{' in --model: GitHub Actions would evaluate it as "
                              "an expression in the workflow; write it without (a shell "
                              "variable is $NAME or ${NAME})\n")
    code, _, err = ci(capsys, root, "--claude-args", "--append-system-prompt '${{ env.X }}'")
    assert code == 2 and err.startswith("ralph ci: '${{' in --claude-args: GitHub")
    assert not (root / ".github").exists()


def test_an_output_github_does_not_read_says_so(
    capsys: pytest.CaptureFixture[str], root: Path, planned: Path
) -> None:
    code, out, _ = ci(capsys, root, "--output", "ci/ralph.yml")
    assert code == 0 and (root / "ci" / "ralph.yml").is_file()
    assert out.splitlines()[1] == ("GitHub runs only the workflows in .github/workflows/ at "
                                   "the repository's top: move it there to use it.")


@pytest.mark.parametrize(("words", "message"), [
    (["--on", "tag:v1"], "--on takes label:NAME (a pull request given the label NAME) or "
                         "push:BRANCH (the plan pushed to BRANCH), not 'tag:v1'"),
    (["--on", "push:"], "--on takes label:NAME"),
    (["--iteration-timeout", "5"], "--iteration-timeout needs a duration from 10 s"),
    (["--claude-args", "'unclosed"], "--claude-args"),
    (["--max-iterations", "4"], "ralph ci takes each sub-workflow's --max-iterations from its "
                                "plan: drop it"),
    (["--begin-task", "alpha", "--merge-wave", "1"], "--begin-task is a step of the workflow "
                                                     "on its own"),
    (["--end-task", "alpha"], "--end-task needs --loop-json"),
])
def test_bad_options_are_refused_in_one_line_and_nothing_is_written(
    capsys: pytest.CaptureFixture[str], root: Path, planned: Path, words: list[str],
    message: str
) -> None:
    code, out, err = ci(capsys, root, *words)
    assert (code, out, planned.exists()) == (2, "", False)
    assert err.startswith(f"ralph ci: {message}") and err.count("\n") == 1, err


def test_the_workflows_steps_write_their_outputs_and_summaries(
    capsys: pytest.CaptureFixture[str], root: Path, planned: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    output, summary = tmp_path / "output", tmp_path / "summary"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    git(root, "switch", "--quiet", "--detach")
    code, out, _ = run(capsys, "ci", "--project", str(root), "finesse-plans/demo",
                       "--begin-task", "gamma")
    assert (code, out, output.read_text()) == (
        0, "gamma: not run: depends on alpha, beta, which did not succeed and merge\n",
        "run=false\n")
    assert summary.read_text() == (
        "### wave 2 · gamma: not run\n\ndepends on alpha, beta, which did not succeed and "
        "merge (`ralph/demo/gamma`).\n\n")
    code, out, _ = run(capsys, "ci", "--project", str(root), "finesse-plans/demo",
                       "--begin-task", "alpha")
    assert (code, out, output.read_text()) == (
        0, "alpha: on the new branch ralph/demo/alpha\n", "run=false\nrun=true\n")


def test_a_plan_not_committed_is_written_with_a_warning(
    capsys: pytest.CaptureFixture[str], root: Path, planned: Path
) -> None:
    plan = root / "finesse-plans" / "demo" / "wave-1" / "alpha" / "plan.md"
    plan.write_text(plan.read_text() + "\nMore.\n")
    code, _, err = ci(capsys, root)
    assert (code, planned.is_file()) == (0, True)
    assert err == ("warning: finesse-plans/demo/ has changes that are not committed: the jobs "
                   "check out what is pushed, so commit and push the plan with the workflow\n")
