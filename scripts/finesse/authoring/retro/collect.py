"""Gathering a retro: the plan and prompt read, the git history reviewed through
`support.git.Repository`, each phase's Verify command run again, the loops matched."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from finesse.authoring.plan_files import PlanFiles
from finesse.authoring.retro.loops import plan_loops
from finesse.authoring.retro.model import Commit, FileChange, PhaseCheck, Result, Retro
from finesse.authoring.retro.plan import baseline_commit, phase_commands, unresolved_warnings
from finesse.authoring.retro.render import render_retro
from finesse.errors import UsageError
from finesse.support.files import is_regular_file, read_text, shown_name
from finesse.support.git import open_repository
from finesse.support.verify import run_command
from finesse.support.writes import write_atomic

TAIL_CHARS = 2000


def collect_retro(plan_path: Path, root: Path, *, timeout: float) -> Retro:
    """Everything the retro shows; UsageError when the plan or its baseline is unusable."""
    files = PlanFiles.of_plan(plan_path)
    plan_text = read_text(plan_path, subject=f"plan file {shown_name(plan_path)}")
    sha = baseline_commit(plan_text)
    if sha is None:
        raise UsageError(f"{plan_path}: no baseline_commit (a line `baseline_commit: <sha>`), "
                         "so there is nothing to compare against")
    notes: list[str] = []
    prompt_text = None
    if is_regular_file(files.prompt):
        prompt_text = read_text(files.prompt, subject=f"prompt file {shown_name(files.prompt)}")
    else:
        notes.append(f"no prompt file {_shown(files.prompt, root)}: no Verify command to run")
    review = _git_review(root, sha, exclude=_shown(files.retro, root))
    phases = _run_phases(prompt_text, root, timeout) if prompt_text is not None else []
    if prompt_text is not None and not phases:
        notes.append("the prompt has no phases: no Verify command to run")
    prompt_files = frozenset({_shown(files.prompt, root), str(files.prompt.resolve())})
    loops = plan_loops(root, prompt_text, prompt_files, review.since, notes)
    return Retro(
        name=files.name, plan=_shown(plan_path, root),
        prompt=_shown(files.prompt, root) if prompt_text is not None else None,
        retro=_shown(files.retro, root), baseline_commit=review.baseline,
        head_commit=review.head, commits=review.commits, files_changed=review.files,
        uncommitted=review.uncommitted, phases=phases, loops=loops,
        unresolved_warnings=unresolved_warnings(plan_text), notes=notes)


def write_retro(plan_path: Path, root: Path, *, timeout: float) -> Retro:
    retro = collect_retro(plan_path, root, timeout=timeout)
    try:
        write_atomic(PlanFiles.of_plan(plan_path).retro, render_retro(retro))
    except OSError as err:
        raise UsageError(f"cannot write {retro.retro}: {err.strerror}") from None
    return retro


def _shown(path: Path, root: Path) -> str:
    """From the project root when under it, else absolute (a name the JSON keeps as is)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


@dataclass(frozen=True)
class _GitReview:
    baseline: str
    head: str
    since: datetime
    commits: list[Commit]
    files: list[FileChange]
    uncommitted: list[str]


def _git_review(root: Path, sha: str, *, exclude: str) -> _GitReview:
    with open_repository(root) as repository:
        if repository is None:
            raise UsageError(f"{root} is not in a git repository; give the project with "
                             "--project DIR")
        base, head = repository.commit(sha), repository.head()
        if base is None or head is None:
            raise UsageError(f"baseline_commit {sha} is not a commit of the repository at "
                             f"{repository.top}")
        commits = [Commit(sha=entry.sha, subject=entry.subject)
                   for entry in repository.log(base, head)]
        files = [FileChange(status=status, path=path)
                 for status, path in repository.name_status(base, head)]
        prefix = repository.relative(root)
        retro = exclude if prefix == "." else f"{prefix}/{exclude}"
        # The loops' own state is left out by the repository; an earlier retro here too.
        uncommitted = [name for name in repository.uncommitted() if name != retro]
        return _GitReview(base, head, repository.committed_at(base), commits, files,
                          uncommitted)


def _run_phases(prompt_text: str, root: Path, timeout: float) -> list[PhaseCheck]:
    ran: dict[str, PhaseCheck] = {}  # the same command in two phases runs once
    checks = []
    for phase in phase_commands(prompt_text):
        if phase.command is None:
            checks.append(PhaseCheck(phase=phase.phase, title=phase.title, command=None,
                                     result="no command", exit_code=None, duration_seconds=0.0,
                                     output_tail=""))
            continue
        if phase.command not in ran:
            done = run_command(phase.command, cwd=root, timeout=timeout, tail_chars=TAIL_CHARS)
            result: Result = ("pass" if done.passed else "timed out" if done.timed_out
                              else "not started" if done.exit_code is None else "fail")
            ran[phase.command] = PhaseCheck(
                phase=phase.phase, title=phase.title, command=phase.command, result=result,
                exit_code=done.exit_code, duration_seconds=round(done.duration_seconds, 2),
                output_tail=done.output_tail)
        checks.append(ran[phase.command].model_copy(
            update={"phase": phase.phase, "title": phase.title}))
    return checks
