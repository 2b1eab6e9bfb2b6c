"""A decomposed plan, checked for `ralph ci`: its graph as `ralph run --graph` checks it, where
it sits in the repository, each sub-workflow's `ralph run` arguments, and the timeouts.

The session is the plan folder's name, as `--graph` takes it: the branches are
`ralph/<session>/<task>` and the workflow `ralph-<session>.yml`, so it must be a name git and
GitHub take as it is. The project may be a subdirectory of the repository (a monorepo): the
jobs then work in it, and the plan folder must be inside it.

Timeouts come from the caps. A loop gets `--timeout-minutes` of its iterations times the
iteration timeout (unless the options give their own), so it ends by itself, resumably and
with its report, before its job's `timeout-minutes` (the loop's time plus `SETUP_MINUTES`)
has the runner kill it. A GitHub-hosted job runs at most 6 hours: a loop that would need more
is given less, with a warning.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from finesse.authoring.workflows.folder import GraphWorkflow, LoadedGraph, load_execution_graph
from finesse.authoring.workflows.model import GRAPH_FILE
from finesse.errors import UsageError
from finesse.headless.plan_args import check_plan_words, loop_words
from finesse.support.files import read_bytes, shown_name
from finesse.support.git import Git, work_tree_top

SETUP_MINUTES = 15  # checkout, Node, Python, the CLI and finesse, then the push and summary
GITHUB_HOSTED_MINUTES = 6 * 60  # GitHub's limit for a job on its own runners
SELF_HOSTED_MINUTES = 5 * 24 * 60  # and for a job on a self-hosted runner
MERGE_MINUTES = 20
PLAN_MINUTES = 10
GITHUB_HOSTED = re.compile(r"(ubuntu|windows|macos)-[\w.-]+")
_SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

Auth = Literal["api-key", "oauth"]
SECRETS: dict[str, str] = {"api-key": "ANTHROPIC_API_KEY", "oauth": "CLAUDE_CODE_OAUTH_TOKEN"}


@dataclass(frozen=True)
class Trigger:
    """`--on label:NAME` (a pull request given that label) or `--on push:BRANCH`."""

    kind: Literal["label", "push"]
    value: str


@dataclass(frozen=True)
class CiSettings:
    finesse: str  # the pip requirement the jobs install finesse with
    auth: Auth = "api-key"
    jobs: int = 2  # at most this many sub-workflows of a wave at a time
    runs_on: str = "ubuntu-latest"
    iteration_timeout: int = 20 * 60  # seconds
    triggers: tuple[Trigger, ...] = ()
    run_options: tuple[str, ...] = ()  # `ralph run` options for every loop (--model ...)
    extra: tuple[str, ...] = ()  # loop options for every sub-workflow (--effort ...)

    @property
    def secret(self) -> str:
        return SECRETS[self.auth]


@dataclass(frozen=True)
class CiTask:
    name: str
    wave: int
    depends_on: tuple[str, ...]
    words: tuple[str, ...]  # what follows `ralph run` in its job
    loop_minutes: int


@dataclass(frozen=True)
class CiPlan:
    session: str
    task: str  # the original task, one line
    project: str  # the project from the repository's top: "." or e.g. "pkg"
    plan_dir: str  # the plan folder from the project: e.g. "finesse-plans/todo-api"
    waves: tuple[tuple[CiTask, ...], ...]
    fingerprinted: tuple[str, ...]  # the plan files the workflow was written from
    fingerprint: str  # sha256 of their text, carriage returns left out
    settings: CiSettings
    warnings: tuple[str, ...]

    @property
    def marker(self) -> str:
        """The plan folder from the repository's top: what a workflow file records."""
        return str(PurePosixPath(self.project) / self.plan_dir)

    def job_minutes(self, wave: tuple[CiTask, ...]) -> int:
        return max(task.loop_minutes for task in wave) + SETUP_MINUTES


def session_of(loaded: LoadedGraph) -> str:
    """The plan's session: its folder's name, as `ralph run --graph` takes it
    (`finesse.headless.graph.prepare`); a UsageError when git or GitHub cannot carry it."""
    name = loaded.folder.resolve().name
    if not _SESSION.fullmatch(name) or ".." in name or name.endswith(".lock"):
        raise UsageError(
            f"the plan folder's name {shown_name(name)!r} names its branches "
            "(ralph/<session>/<task>) and its workflow file: rename the folder to letters, "
            "digits, '.', '_' and '-' (for example todo-api), then run ralph ci again")
    return name


def _inside(path: Path, root: Path, what: str) -> PurePosixPath:
    try:
        return PurePosixPath(*path.resolve().relative_to(root.resolve()).parts)
    except ValueError:
        raise UsageError(f"{what} {path} is not inside the project {root}: the jobs check out "
                         "the repository and run in the project, so put it there") from None


def _loop_minutes(workflow: GraphWorkflow, given: int | None, settings: CiSettings,
                  warnings: list[str]) -> int:
    hosted = GITHUB_HOSTED.fullmatch(settings.runs_on) is not None
    most = (GITHUB_HOSTED_MINUTES if hosted else SELF_HOSTED_MINUTES) - SETUP_MINUTES
    where = (f"a job on a GitHub-hosted runner runs at most {most + SETUP_MINUTES} min" if hosted
             else f"a job on a self-hosted runner runs at most {most + SETUP_MINUTES} min")
    if given is not None:
        if given > most:
            raise UsageError(f"--timeout-minutes {given} is more than the jobs have: {where}, "
                             f"{SETUP_MINUTES} of them to set up; give at most {most}")
        return given
    wanted = math.ceil(workflow.max_iterations * settings.iteration_timeout / 60)
    if wanted <= most:
        return wanted
    warnings.append(
        f"{workflow.name} may need {wanted} min ({workflow.max_iterations} iterations of up to "
        f"{duration_word(settings.iteration_timeout)}) and {where}: its loop stops (resumably) "
        f"after {most} min; lower --iteration-timeout"
        + (", or give --runs-on a self-hosted runner" if hosted else ""))
    return most


def duration_word(seconds: int) -> str:
    """Seconds as `ralph run --iteration-timeout` takes them: 20m, 2h, 90s."""
    for size, unit in ((3600, "h"), (60, "m")):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _words(workflow: GraphWorkflow, root: Path, settings: CiSettings, minutes: int,
           given: int | None) -> tuple[str, ...]:
    timeout = () if given is not None else ("--timeout-minutes", str(minutes))
    return (*loop_words(workflow, settings.extra, relative_to=root), *timeout,
            "--iteration-timeout", duration_word(settings.iteration_timeout),
            *settings.run_options, "--json")


def _fingerprint(root: Path, names: list[str]) -> str:
    """What the `plan` job computes with `cat FILES | tr -d '\\r' | sha256sum`."""
    digest = hashlib.sha256()
    for name in names:
        data = read_bytes(root / name, subject=f"plan file {shown_name(name)}")
        digest.update(data.replace(b"\r", b""))
    return digest.hexdigest()


def _uncommitted(root: Path, plan_dir: str) -> str:
    listed = Git(root).text("status", "--porcelain", "--", plan_dir)
    if listed is None or not listed:
        return ""
    return (f"{plan_dir}/ has changes that are not committed: the jobs check out what is "
            "pushed, so commit and push the plan with the workflow")


EXPRESSION = "${{"  # where GitHub Actions starts an expression, in `run:` and `env:` too


def _no_expression(what: str, *values: str) -> None:
    """GitHub evaluates `${{ ... }}` in the workflow's text before bash reads a script:
    shlex quotes a word for the shell, not for GitHub, so a value holding one (a plan's
    verify command, an option) would have GitHub paste whatever it names there, a secret
    too. Refused in one line; no shell word needs it."""
    if any(EXPRESSION in value for value in values):
        raise UsageError(f"'{EXPRESSION}' in {what}: GitHub Actions would evaluate it as an "
                         "expression in the workflow; write it without (a shell variable is "
                         "$NAME or ${NAME})")


def _no_expressions(settings: CiSettings) -> None:
    for option, value in zip(("", *settings.run_options), settings.run_options,
                             strict=False):  # (--model, its value), (its value, --claude-args)
        _no_expression(option or "the options", value)
    _no_expression("the loop options", *settings.extra)
    _no_expression("--finesse", settings.finesse)
    _no_expression("--runs-on", settings.runs_on)
    _no_expression("--on", *(trigger.value for trigger in settings.triggers))


def load_ci_plan(root: Path, folder: Path, settings: CiSettings) -> CiPlan:
    """The plan folder `folder` of the project `root`, checked for a workflow: a UsageError
    or GraphError (one line, saying what to do) when it cannot be one."""
    if Git(root).text("rev-parse", "--is-inside-work-tree") != "true":
        raise UsageError(f"ralph ci writes a workflow for a git repository and {root} is not "
                         "in one: run `git init`, commit the project and push it to GitHub")
    parsed = check_plan_words(settings.extra, runner="ralph ci")
    _no_expressions(settings)
    loaded = load_execution_graph(folder if folder.is_absolute() else root / folder)
    session = session_of(loaded)
    plan_dir = str(_inside(loaded.folder, root, "the plan folder"))
    project = str(_inside(root, work_tree_top(root), "the project"))
    warnings: list[str] = []
    waves = []
    for wave in loaded.waves:
        tasks = []
        for workflow in wave:
            minutes = _loop_minutes(workflow, parsed.timeout_minutes, settings, warnings)
            words = _words(workflow, root, settings, minutes, parsed.timeout_minutes)
            _no_expression(f"{workflow.name}'s ralph run arguments", *words)
            tasks.append(CiTask(workflow.name, workflow.wave, workflow.depends_on, words,
                                minutes))
        waves.append(tuple(tasks))
    fingerprinted = [f"{plan_dir}/{GRAPH_FILE}"] + [
        str(_inside(workflow.plan, root, "the plan")) for wave in loaded.waves
        for workflow in wave]
    if note := _uncommitted(root, plan_dir):
        warnings.append(note)
    return CiPlan(session, loaded.task, project, plan_dir, tuple(waves), tuple(fingerprinted),
                  _fingerprint(root, fingerprinted), settings, tuple(warnings))
