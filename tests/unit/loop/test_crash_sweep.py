"""The crash-point sweep (issue 19): each scenario of the loop's own hooks is run once to
count its crash points, then, for every k, killed (SIGKILL) right after its k-th git call
(`tests.helpers.faults.FaultyGit`) and, separately, right after each step N of its atomic
writes (the writer's kill points); after each kill the next calls run as usual and every
invariant must hold:

- no user file lost or changed (tracked, untracked-ignored, staged outside the project);
- no red iteration's file in any commit; no green iteration's file ever reverted;
- git usable: the index valid, no index.lock left, HEAD on the loop's branch;
- every loop file parses (or was moved aside);
- each iteration noted at most once in the plan, the ones recorded exactly once, and
  committed at most once;
- no file of ours (a temp file) in the project tree or in a commit.

The whole sweep is `slow` (CI runs it), its points two at a time, each in a copy of the
scenario's prepared project (tests/helpers/sweeps.py); one crash point per scenario always
runs.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from finesse.models import LoopState
from finesse.state.paths import StatePaths
from finesse.state.store import LoopStore
from tests.helpers.faults import FaultyGit, HookRun
from tests.helpers.gate import GATE
from tests.helpers.hooks import env_for, prompt_input, stop_input
from tests.helpers.repo import git, write
from tests.helpers.states import SESSION
from tests.helpers.sweeps import POOL, PointPool, fresh_copy, run_points, worker_slot

PLAN = "# Plan\n\n## Goal\nWork.\n\n## Attempts\n\n## Review\n"
START = f'/ralph-loop Work --gate "{GATE}" --completion-promise DONE --max-iterations 20'
# The user's files, which no crash may touch: (path from the top, content).
USER_FILES = {"app/src/app.py": "print('v1')\n", "app/debug.log": "ignored, the user's\n",
              "app/build/out.bin": "ignored build output\n"}
STAGED_OUTSIDE = ("other/notes.txt", "staged by the user, outside the project\n")


def _monorepo(top: Path) -> Path:
    """A repository whose project is `app/`, with the user's files in place: tracked,
    ignored, and a change staged outside the project."""
    top.mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    write(top, "app/.gitignore", "*.log\nbuild/\n")
    write(top, "app/src/app.py", USER_FILES["app/src/app.py"])
    write(top, "app/tasks/todo.md", PLAN)
    write(top, "other/notes.txt", "v1\n")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "initial")
    for name, text in USER_FILES.items():
        write(top, name, text)
    write(top, *STAGED_OUTSIDE)
    git(top, "add", STAGED_OUTSIDE[0])
    return top / "app"


class Project:
    """The project and the in-process hooks that run before and after the killed one."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def submit(self, prompt: str) -> dict[str, object] | None:
        from finesse.hooks import prompt_submit

        return prompt_submit.handle(prompt_input(prompt, SESSION, str(self.root)),
                                    env_for(self.root), str(self.root))

    def stop(self, reply: str) -> dict[str, object] | None:
        from finesse.hooks import stop

        return stop.handle(stop_input(reply, SESSION, str(self.root)), env_for(self.root),
                           str(self.root))

    def type(self, prompt: str) -> dict[str, object] | None:
        """A prompt of the person's own (none of our commands), as the hook entry
        dispatches it."""
        from finesse.hooks import entry, stop

        raw = prompt_input(prompt, SESSION, str(self.root))
        if not entry.interrupted_here(json.loads(raw), str(self.root)):
            return None
        return stop.handle_interrupted(raw, env_for(self.root), str(self.root))

    def write(self, name: str, text: str = "work\n") -> None:
        write(self.root, name, text)

    def active(self) -> bool:
        return LoopStore(StatePaths(self.root)).peek(SESSION) is not None


@dataclass
class Scenario:
    name: str
    before: Callable[[Project], None]
    event: str
    raw: Callable[[Path], bytes]
    after: Callable[[Project], None]
    green: dict[str, str] = field(default_factory=dict)  # committed work that must stay
    red: set[str] = field(default_factory=set)  # a red iteration's files: never committed
    kept: dict[str, str] = field(default_factory=dict)  # files that must stay as they are
    committed: set[str] = field(default_factory=set)  # in HEAD at the end, whatever the kill


def _stop_raw(reply: str) -> Callable[[Path], bytes]:
    return lambda root: stop_input(reply, SESSION, str(root), stop_hook_active=True)


def _green_before(project: Project) -> None:
    project.submit(START)
    project.write("green.txt", "green work\n")


def _green_after(project: Project) -> None:
    project.write("broken.txt", "red\n")  # the work after the crash breaks the gate
    project.stop("Approach: the stop after the crash")
    project.stop("Approach: still broken")
    project.stop("Approach: broken again")  # reverted by now, whichever stop it was
    project.write("green2.txt", "more green work\n")
    project.stop("Approach: green again")


def _red_before(project: Project) -> None:
    project.submit(START)
    project.write("broken.txt", "red\n")
    git(project.root, "add", "broken.txt")
    project.write("red_new.txt", "made by the red iteration\n")
    project.stop("Approach: a first try")  # red: repair


def _red_after(project: Project) -> None:
    project.stop("Approach: the stop after the crash")
    project.write("good.txt", "green work\n")
    project.stop("Approach: good work")
    project.stop("Approach: nothing more")


def _repair_before(project: Project) -> None:
    project.submit(START)
    project.write("green.txt", "green work\n")
    project.stop("Approach: green")
    project.write("broken.txt", "red\n")


def _repair_after(project: Project) -> None:
    project.stop("Approach: the stop after the crash")
    (project.root / "broken.txt").unlink(missing_ok=True)
    project.write("fixed.txt", "the repair\n")
    project.stop("Approach: repaired")


def _dirty_before(project: Project) -> None:
    project.write("dirty.txt", "the user's work in progress\n")
    project.write("src/app.py", "print('v2, not committed yet')\n")


def _dirty_after(project: Project) -> None:
    project.stop("Approach: the stop after the crash")
    if not project.active():
        project.submit(f"{START} --allow-dirty")
    project.write("green.txt", "green work\n")
    project.stop("Approach: green")


def _notebook_before(project: Project) -> None:
    project.submit("/ralph-loop Work --max-iterations 20")


def _notebook_after(project: Project) -> None:
    project.stop("Approach: one, after the crash")
    project.stop("Approach: two")


def _prompt_after(project: Project) -> None:
    """The killed stop let Claude stop; the person types a prompt and the agent repairs
    the iteration (the red file gone, if the revert has not removed it) and does more."""
    project.type("Please go on.")
    (project.root / "broken.txt").unlink(missing_ok=True)
    project.write("after.txt", "the agent's work after the prompt\n")
    project.stop("Approach: repaired, and more")


def _cancel_after(project: Project) -> None:
    """The person cancels the loop after the killed stop: it ends on the red iteration's
    tree or on its base, never on a tree reverted half-way."""
    project.submit("/cancel-ralph")
    assert not project.active(), "the cancel did not end the loop"
    left = {name for name in ("broken.txt", "red_new.txt") if (project.root / name).exists()}
    assert left in (set(), {"broken.txt", "red_new.txt"}), f"half reverted: only {left} left"


def _ending_after(project: Project) -> None:
    project.stop("Approach: done <promise>DONE</promise>")
    assert not project.active(), "the loop did not end"
    [ended] = LoopStore(StatePaths(project.root)).history()
    assert ended.outcome == "success" and Path(ended.report_path).is_file(), ended


SCENARIOS = [
    Scenario("green-commit", _green_before, "stop", _stop_raw("Approach: green"),
             _green_after, green={"green.txt": "green work\n",
                                  "green2.txt": "more green work\n"},
             red={"broken.txt"}, committed={"green2.txt"}),
    Scenario("red-revert", _red_before, "stop", _stop_raw("Approach: still red"), _red_after,
             green={"good.txt": "green work\n"}, red={"broken.txt", "red_new.txt"},
             committed={"good.txt"}),
    # Its work after the prompt is never removed unseen by the gate (a revert the kill
    # left half done is finished before the agent works again).
    Scenario("red-revert-then-prompt", _red_before, "stop", _stop_raw("Approach: still red"),
             _prompt_after, green={"after.txt": "the agent's work after the prompt\n"},
             red={"broken.txt"}, kept={"after.txt": "the agent's work after the prompt\n"},
             committed={"after.txt"}),
    Scenario("red-revert-then-cancel", _red_before, "stop", _stop_raw("Approach: still red"),
             _cancel_after, red={"broken.txt", "red_new.txt"}),
    Scenario("repair", _repair_before, "stop", _stop_raw("Approach: broke it"), _repair_after,
             green={"green.txt": "green work\n", "fixed.txt": "the repair\n"},
             committed={"green.txt", "fixed.txt"}),
    Scenario("dirty-snapshot", _dirty_before, "prompt",
             lambda root: prompt_input(f"{START} --allow-dirty", SESSION, str(root)),
             _dirty_after, kept={"dirty.txt": "the user's work in progress\n",
                                 "src/app.py": "print('v2, not committed yet')\n"},
             committed={"dirty.txt", "green.txt"}),
    Scenario("notebook", _notebook_before, "stop", _stop_raw("Approach: one"),
             _notebook_after),
    Scenario("ending", _green_before, "stop", _stop_raw("Approach: done <promise>DONE</promise>"),
             _ending_after, green={"green.txt": "green work\n"}, committed={"green.txt"}),
]


# --- judge mode: the main thread's stop that records a judged attempt --------------------------

def _judge_before(project: Project) -> None:
    from tests.helpers.judging import FAIL, WORKER, JudgeSession

    judge = JudgeSession(project.root)
    output = judge.start('"Fix it" --judge --criteria "it is fixed" --verify true')
    assert output is not None and "hookSpecificOutput" in output, output
    judge.worker("w1", {**WORKER, "verifier_runs": [
        {"cmd": "true", "status": "pass", "output_excerpt": ""}]})
    judge.stop()
    judge.judge("j1", FAIL)


def _judge_after(project: Project) -> None:
    from tests.helpers.judging import JudgeSession

    JudgeSession(project.root).stop("Next attempt.")


def _rejected_before(project: Project) -> None:
    from tests.helpers.repo import install_hook

    project.submit(START)
    install_hook(project.root, "prepare-commit-msg", "exit 1")
    project.write("green.txt", "green work\n")


def _rejected_after(project: Project) -> None:
    project.stop("Approach: the stop after the crash")
    project.stop("Approach: and one more")


SCENARIOS.append(Scenario("hook-rejects-commit", _rejected_before, "stop",
                          _stop_raw("Approach: green"), _rejected_after,
                          kept={"green.txt": "green work\n"}))
SCENARIOS.append(Scenario("judge-attempt", _judge_before, "stop",
                          lambda root: json.dumps({
                              "session_id": SESSION, "cwd": str(root),
                              "transcript_path": "/nonexistent/transcript.jsonl",
                              "hook_event_name": "Stop", "stop_hook_active": False,
                              "last_assistant_message": "Next.", "background_tasks": []}
                          ).encode(), _judge_after))
BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}


# --- the invariants -----------------------------------------------------------------------------

def _loops(root: Path) -> list[LoopState]:
    store = LoopStore(StatePaths(root))
    found = list(store.history())
    for path in sorted(store.paths.loops.glob("*.json")):
        found.append(LoopState.from_json(path.read_bytes()))  # parses, or the test fails
    return found


def check_invariants(top: Path, scenario: Scenario, where: str) -> None:
    root = top / "app"
    for name, text in USER_FILES.items():
        if scenario.name == "dirty-snapshot" and name == "app/src/app.py":
            continue  # the user's own change, checked with the scenario's green files
        assert (top / name).read_text() == text, f"{where}: {name} changed"
    assert (top / STAGED_OUTSIDE[0]).read_text() == STAGED_OUTSIDE[1], where
    assert git(top, "diff", "--cached", "--name-only", "--", "other") == STAGED_OUTSIDE[0], (
        f"{where}: the user's staged change outside the project is no longer staged")
    assert not (top / ".git" / "index.lock").exists(), f"{where}: index.lock left"
    git(top, "status", "--porcelain")  # the index is valid (check=True raises otherwise)
    assert git(top, "symbolic-ref", "HEAD") == "refs/heads/main", where
    committed = set(git(top, "log", "--format=", "--name-only", "HEAD").splitlines())
    for name in scenario.red:
        assert f"app/{name}" not in committed, f"{where}: red {name} was committed"
    in_head = set(git(top, "ls-tree", "-r", "--name-only", "HEAD").splitlines())
    for name, text in scenario.green.items():
        # Committed green work is never reverted: once in a commit, in HEAD and the tree
        # for good. (Work the killed hook had not committed yet is the iteration's, and the
        # next stop judges it again: it may be red by then and reverted.)
        if f"app/{name}" in committed:
            assert f"app/{name}" in in_head, f"{where}: committed {name} reverted"
            assert (root / name).read_text() == text, f"{where}: committed {name} changed"
    for name in scenario.committed:
        assert f"app/{name}" in in_head, f"{where}: {name} never committed"
    for name, text in scenario.kept.items():
        assert (root / name).read_text() == text, f"{where}: {name} lost"
    assert not [name for name in committed if name.endswith(".tmp")], where
    left = [str(path) for path in root.rglob("*.tmp")
            if ".claude" not in path.relative_to(root).parts]
    assert left == [], f"{where}: our temp files left in the tree: {left}"
    subjects = git(top, "log", "--format=%s").splitlines()
    plan = (root / "tasks" / "todo.md").read_text()
    loops = _loops(root)
    numbers = {record.number for loop in loops for record in loop.iterations}
    for number in range(1, 30):
        in_commits = sum(s.startswith(f"ralph: iteration {number}:") for s in subjects)
        in_plan = plan.count(f"### Iteration {number} (")
        assert in_commits <= len(loops), f"{where}: iteration {number} committed twice"
        assert in_plan <= max(1, len(loops)), f"{where}: iteration {number} noted twice"
        if number in numbers and len(loops) == 1 and loops[0].notebook:
            assert in_plan == 1, f"{where}: iteration {number} not noted"


# --- the sweep ----------------------------------------------------------------------------------

class Sweep:
    def __init__(self, scenario: Scenario, base: Path) -> None:
        self.scenario = scenario
        self.top = base / "top"
        self.template = base / "template"
        self.faults = FaultyGit(base / "fault")
        _monorepo(self.top)
        scenario.before(Project(self.top / "app"))
        shutil.copytree(self.top, self.template, symlinks=True)

    def fresh(self) -> Path:
        shutil.rmtree(self.top)
        shutil.copytree(self.template, self.top, symlinks=True)
        return self.top / "app"

    def run(self, **faults: int | str) -> HookRun:
        root = self.fresh()
        return self.faults.run(self.scenario.event, self.scenario.raw(root), root, **faults)

    def crash_points(self) -> int:
        """The git calls of the fatal hook when nothing kills it."""
        clean = self.run()
        assert clean.code == 0, clean
        return len(clean.calls)

    def check_after(self, killed: HookRun, where: str) -> None:
        project = Project(self.top / "app")
        self.scenario.after(project)
        check_invariants(self.top, self.scenario, where)


# Each point below runs in a worker of the pool (tests/helpers/sweeps.py), in a copy of the
# scenario's project as `before` left it, built once per worker.

def _prepared(name: str, base: Path) -> Path:
    """The top of the scenario's repository, ready for the fatal hook."""
    scenario = BY_NAME[name]

    def build(top: Path) -> None:
        _monorepo(top)
        scenario.before(Project(top / "app"))

    return fresh_copy(worker_slot(base), build)


def _fatal_hook(name: str, base: Path, **faults: int | str) -> tuple[Path, HookRun]:
    scenario = BY_NAME[name]
    top = _prepared(name, base)
    root = top / "app"
    faulty = FaultyGit(top.parent / "fault")
    return top, faulty.run(scenario.event, scenario.raw(root), root, **faults)


def _then(name: str, top: Path, where: str) -> None:
    """The calls after the crash, then every invariant."""
    scenario = BY_NAME[name]
    scenario.after(Project(top / "app"))
    check_invariants(top, scenario, where)


def git_point(name: str, base: Path, call: int) -> str:
    top, killed = _fatal_hook(name, base, kill_at=call)
    assert killed.killed, f"{name}: not killed at git call {call}"
    where = f"{name}, killed after git call {call} ({killed.calls[-1]})"
    _then(name, top, where)
    return where


def write_point(name: str, base: Path, step: int) -> str:
    top, run = _fatal_hook(name, base, die_after_write=step)
    _then(name, top, f"{name}, killed after write step {step}" if run.killed
          else f"{name}, not killed")
    return "killed" if run.killed else "not killed"


def sweep_git(scenario: Scenario, base: Path) -> int:
    points = Sweep(scenario, base / "calibrate").crash_points()
    assert points > 0
    run_points(git_point, [(scenario.name, base, call) for call in range(1, points + 1)])
    return points


def sweep_writer(scenario: Scenario, base: Path, limit: int = 60) -> int:
    """Every write step of the fatal hook killed in turn, `POOL` steps a round, until a step
    past its last write (the run is not killed, and still checked)."""
    with PointPool() as pool:
        for first in range(1, limit, POOL):
            steps = range(first, first + POOL)
            outcomes = pool.run(write_point, [(scenario.name, base, step) for step in steps])
            if "not killed" in outcomes:
                last = outcomes.index("not killed")
                assert set(outcomes[last:]) == {"not killed"}, outcomes
                return first + last - 1
    raise AssertionError(f"{scenario.name}: over {limit} write steps")


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_one_crash_point_per_scenario(name: str, tmp_path: Path) -> None:
    """Always run: the scenario's last git call (the kill after everything git did)."""
    sweep = Sweep(BY_NAME[name], tmp_path)
    points = sweep.crash_points()
    killed = sweep.run(kill_at=points)
    assert killed.killed
    sweep.check_after(killed, f"{name}, killed after its last git call")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_git_crash_point(name: str, tmp_path: Path) -> None:
    points = sweep_git(BY_NAME[name], tmp_path)
    print(f"{name}: {points} git crash points held")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_write_crash_point(name: str, tmp_path: Path) -> None:
    steps = sweep_writer(BY_NAME[name], tmp_path)
    print(f"{name}: {steps} write crash points held")
