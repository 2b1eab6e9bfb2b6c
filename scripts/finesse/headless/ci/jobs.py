"""What the workflow's steps run, in a job's checkout of the repository (its remote is
`origin`, as actions/checkout leaves it, with every branch fetched):

- `begin_task` (`ralph ci PLAN --begin-task NAME`): the sub-workflow's branch
  `ralph/<session>/<task>` is made at the wave's start commit, unless it already has one on
  `origin` (merged before: nothing to do; not merged: refused, as `--graph` refuses it, so
  no earlier work is ever pushed over) or a sub-workflow it depends on did not succeed and
  merge (skipped, as `--graph` skips it).
- `end_task` (`--end-task NAME`): what the loop left uncommitted in the project is committed
  on the branch, the branch is pushed (or, when the push fails, kept as a git bundle in the
  job's artifact), and the loop's output, report and record are kept for the upload.
- `merge_wave` (`--merge-wave N`): the wave's branches whose loop succeeded are merged into
  the base branch in the graph's order, `--no-ff` with the message `--graph` gives them
  (`finesse.headless.worktrees.merge`); the first failure is undone and stops the merging,
  what merged before it is pushed.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from finesse.authoring.workflows.folder import GraphWorkflow, LoadedGraph
from finesse.errors import FinesseError, UsageError
from finesse.headless import worktrees
from finesse.headless.ci.plan import session_of
from finesse.headless.graph import MERGED_BEFORE, Row
from finesse.loop.final_report import title
from finesse.models import LoopState
from finesse.schema import SchemaError, from_dict
from finesse.support import json_text
from finesse.support.files import FileProblem, read_text
from finesse.support.git import Git, head

REMOTE = "origin"
NETWORK_SECONDS = 600.0


def find_task(loaded: LoadedGraph, name: str) -> GraphWorkflow:
    for wave in loaded.waves:
        for workflow in wave:
            if workflow.name == name:
                return workflow
    raise UsageError(f"the plan has no sub-workflow {name!r}: write the workflow again with "
                     "`ralph ci PLAN_DIR`")


def remote_ref(branch: str) -> str:
    return f"refs/remotes/{REMOTE}/{branch}"


def _exists(git: Git, ref: str) -> bool:
    return git.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").code == 0


def _merged(git: Git, ref: str) -> bool:
    return _exists(git, ref) and git.run("merge-base", "--is-ancestor", ref, "HEAD").code == 0


@dataclass(frozen=True)
class Begin:
    workflow: GraphWorkflow
    branch: str
    run: bool
    note: str = ""  # why it does not run


def begin_task(project: Path, loaded: LoadedGraph, name: str) -> Begin:
    workflow = find_task(loaded, name)
    session = session_of(loaded)
    branch = worktrees.branch_name(session, name)
    git = Git(project)
    if _exists(git, remote_ref(branch)):
        if _merged(git, remote_ref(branch)):
            return Begin(workflow, branch, False, f"{MERGED_BEFORE}: its branch is already "
                                                  "merged")
        raise UsageError(f"{REMOTE} already has {branch}, not merged into this wave's start: "
                         f"merge it, or delete it (`git push {REMOTE} --delete {branch}`), "
                         "then run the workflow again")
    missing = [other for other in workflow.depends_on
               if not _merged(git, remote_ref(worktrees.branch_name(session, other)))]
    if missing:
        return Begin(workflow, branch, False, f"depends on {', '.join(missing)}, which did "
                                              "not succeed and merge")
    made = git.run("switch", "--quiet", "-c", branch)
    if made.code != 0:
        raise UsageError(f"git switch -c {branch} failed: {made.reason()}")
    return Begin(workflow, branch, True)


@dataclass(frozen=True)
class LoopOutput:
    """What `ralph run --json` printed: the ended loop and its exit code, or why not."""

    state: LoopState | None
    exit_code: int | None
    problem: str = ""


def read_loop(path: Path) -> LoopOutput:
    try:
        data = json_text.loads(read_text(path, subject=f"ralph run's output {path.name}"))
        state = from_dict(LoopState, data, strict=False)
    except FileProblem as err:
        return LoopOutput(None, None, f"no loop record ({err})")
    except (ValueError, SchemaError) as err:
        return LoopOutput(None, None, f"ralph run's output is not a loop record ({err})")
    code = data.get("exit_code")
    return LoopOutput(state, code if isinstance(code, int) else None)


@dataclass
class End:
    workflow: GraphWorkflow
    branch: str
    loop: LoopOutput
    leftovers: str | None = None  # the commit of what the loop left uncommitted
    pushed: str | None = None  # the branch's commit on origin
    problems: list[str] = field(default_factory=list)


def _keep(project: Path, end: End, loop_json: Path, keep: Path) -> None:
    keep.mkdir(parents=True, exist_ok=True)
    name = end.workflow.name
    sources = [(loop_json, f"{name}.ralph-run.json")]
    state = end.loop.state
    if state is not None:
        record = project / ".claude" / "ralph" / "history" / f"{state.loop_id}.json"
        sources += [(record, f"{name}.record.json")]
        if state.report_path:
            sources += [(Path(state.report_path), f"{name}.report.md")]
    for source, target in sources:
        if source.is_file():
            shutil.copyfile(source, keep / target)


def end_task(project: Path, loaded: LoadedGraph, name: str, loop_json: Path,
             keep: Path) -> End:
    workflow = find_task(loaded, name)
    branch = worktrees.branch_name(session_of(loaded), name)
    end = End(workflow, branch, read_loop(loop_json))
    git = Git(project)
    if git.text("symbolic-ref", "--quiet", "HEAD") != f"refs/heads/{branch}":
        raise UsageError(f"--end-task {name} runs on the branch {branch} that --begin-task "
                         "made, and HEAD is not on it")
    try:
        end.leftovers = worktrees.commit_leftovers(project, name)
    except FinesseError as err:
        end.problems.append(f"the work left uncommitted could not be committed: {err}")
    pushed = git.run("push", "--quiet", REMOTE, f"refs/heads/{branch}:refs/heads/{branch}",
                     timeout=NETWORK_SECONDS)
    if pushed.code == 0:
        end.pushed = head(project)
    else:
        bundle = keep / f"{name}.bundle"
        keep.mkdir(parents=True, exist_ok=True)
        saved = git.run("bundle", "create", str(bundle), f"refs/heads/{branch}", "--not",
                        f"--remotes={REMOTE}")
        end.problems.append(f"git push {REMOTE} {branch} failed ({pushed.reason()}); "
                            + (f"the branch is kept in this job's artifact as {bundle.name}"
                               if saved.code == 0 else
                               f"and so did git bundle ({saved.reason()})"))
    _keep(project, end, loop_json, keep)
    return end


@dataclass
class WaveMerge:
    wave: int
    base: str  # the branch merged into
    selected: bool
    rows: list[Row]
    commit: str = ""  # the base branch's commit afterwards
    stopped: str = ""
    conflicts: list[str] = field(default_factory=list)

    @property
    def merged(self) -> list[Row]:
        return [row for row in self.rows if row.merge_commit]


def _row_outcome(git: Git, row: Row, reports: Path) -> None:
    output = read_loop(reports / f"{row.name}.ralph-run.json")
    if output.state is not None:
        row.loop, row.outcome = output.state, title(output.state)
        if not row.succeeded:
            row.note = "did not succeed: not merged"
    elif _merged(git, remote_ref(row.branch)):
        row.outcome, row.note = MERGED_BEFORE, "its branch is already merged"
    else:
        row.note = "no loop ran (its job's summary says why)"


def merge_wave(project: Path, loaded: LoadedGraph, number: int, reports: Path,
               selected: set[int]) -> WaveMerge:
    if not 1 <= number <= len(loaded.waves):
        raise UsageError(f"the plan has no wave {number}: write the workflow again with "
                         "`ralph ci PLAN_DIR`")
    session = session_of(loaded)
    start = worktrees.starting_point(project)
    rows = [Row(w.name, w.wave, w.depends_on, worktrees.branch_name(session, w.name), "")
            for w in loaded.waves[number - 1]]
    done = WaveMerge(number, start.short, number in selected, rows)
    git = Git(project)
    for row in rows if done.selected else []:
        _row_outcome(git, row, reports)
        if row.loop is None or not row.succeeded:
            continue
        if done.stopped:
            row.note = f"not merged: {done.stopped}"
            continue
        sha = git.text("rev-parse", "--verify", "--quiet", f"{remote_ref(row.branch)}^{{commit}}")
        if not sha:
            row.note = f"not merged: its branch is not on {REMOTE} (its job's summary says why)"
            continue
        git.run("update-ref", f"refs/heads/{row.branch}", sha)
        merged = worktrees.merge(project, row.branch,
                                 worktrees.merge_message(row.name, row.wave, session))
        if merged.commit is None:
            what = (f"conflicts in {', '.join(merged.conflicts)}" if merged.conflicts
                    else merged.error)
            done.conflicts = merged.conflicts
            row.note = f"merge failed and was undone: {what}"
            done.stopped = (f"merging {row.branch} into {start.short} failed ({what}); every "
                            "branch is left as it is")
            continue
        row.merge_commit, row.note = merged.commit, "merged"
    if done.merged:
        pushed = git.run("push", "--quiet", REMOTE, f"HEAD:refs/heads/{start.short}",
                         timeout=NETWORK_SECONDS)
        if pushed.code != 0:
            done.stopped = (f"git push {REMOTE} {start.short} failed ({pushed.reason()}): "
                            "nothing of this wave is merged on it; re-run this job")
            for row in done.merged:
                row.merge_commit, row.note = None, f"not merged: {done.stopped}"
            done.commit = start.commit  # what the base branch still is on origin
            return done
    done.commit = head(project) or ""
    return done
