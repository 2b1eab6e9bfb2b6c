"""A stand-in for GitHub Actions: a workflow `ralph ci` wrote, run on this machine.

Jobs run in `needs:` order, a matrix's entries at most `max-parallel` at a time, each entry
in a fresh clone of a local bare repository that stands in for the remote, with a fresh
tools folder first on PATH (nothing of the test's own virtualenv is on it). Every `run:`
step runs as GitHub runs it on Linux (`bash --noprofile --norc -eo pipefail`, in
`defaults.run.working-directory`, with its `env:`, `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY` and
`RUNNER_TEMP`). The `uses:` steps are replaced by what they do:

- actions/checkout: a clone of the remote at `ref` (a branch checked out as that branch, a
  commit detached), the whole history with `fetch-depth: 0`, else that many commits;
- actions/setup-node: `node` (the machine's) and an `npm` whose `install -g` of the pinned
  Claude Code CLI puts that CLI (`claude_bin`, the pinned binary) on PATH; any other npm
  command fails;
- actions/setup-python: a `pip` whose `install` of the expected finesse requirement puts a
  `ralph` running this checkout on PATH; any other pip command fails;
- actions/upload-artifact, download-artifact: a copy into and out of an artifacts folder
  (`pattern`, `merge-multiple`).

`${{ }}` expressions are `tests.e2e.expressions`'. A key, an action, a function or a syntax
the stand-in does not know fails the run: nothing is ignored silently.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.expressions import condition, interpolate
from tests.e2e.harness import REPO_ROOT

WORKFLOW_KEYS = {"name", "on", "permissions", "concurrency", "defaults", "jobs"}
JOB_KEYS = {"name", "needs", "if", "runs-on", "timeout-minutes", "strategy", "outputs", "steps"}
STEP_KEYS = {"name", "id", "if", "uses", "with", "env", "run"}
STEP_SECONDS = 240


@dataclass
class Step:
    name: str
    outcome: str  # success, failure, skipped
    log: str = ""
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class Entry:
    matrix: dict[str, Any]
    steps: list[Step] = field(default_factory=list)
    summary: str = ""
    workspace: Path | None = None

    @property
    def failed(self) -> bool:
        return any(step.outcome == "failure" for step in self.steps)


@dataclass
class Job:
    result: str  # success, failure, skipped
    outputs: dict[str, str] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)

    def describe(self) -> str:
        return "\n".join(f"  [{entry.matrix}] {step.name}: {step.outcome}\n{step.log[-3000:]}"
                         for entry in self.entries for step in entry.steps)


@dataclass
class Runner:
    remote: Path  # the bare repository
    work: Path  # where the jobs' clones and temporary folders go
    env: Mapping[str, str]  # the machine's environment
    claude_bin: Path
    npm_package: str  # what `npm install -g` must be given
    finesse: str  # what `pip install` must be given
    inputs: Mapping[str, str] = field(default_factory=dict)
    secrets: Mapping[str, str] = field(default_factory=dict)
    ref_name: str = "main"
    artifacts: Path = field(init=False)
    lock: threading.Lock = field(default_factory=threading.Lock)
    counter: int = 0

    def __post_init__(self) -> None:
        self.artifacts = self.work / "artifacts"
        self.artifacts.mkdir(parents=True)

    def run(self, text: str) -> dict[str, Job]:
        workflow = yaml.safe_load(text)
        assert set(workflow) <= WORKFLOW_KEYS, set(workflow) - WORKFLOW_KEYS
        defaults = workflow.get("defaults", {}).get("run", {})
        assert defaults.get("shell", "bash") == "bash"
        done: dict[str, Job] = {}
        for name, job in workflow["jobs"].items():
            assert set(job) <= JOB_KEYS, (name, set(job) - JOB_KEYS)
            needs = job.get("needs", [])
            needs = [needs] if isinstance(needs, str) else needs
            assert all(need in done for need in needs), f"{name} comes before its needs"
            done[name] = self._job(job, {need: done[need] for need in needs}, defaults)
        return done

    def _contexts(self, needs: Mapping[str, Job]) -> dict[str, Any]:
        return {"github": {"event_name": "workflow_dispatch", "ref_name": self.ref_name,
                           "head_ref": ""},
                "inputs": dict(self.inputs), "secrets": dict(self.secrets),
                "needs": {name: {"result": job.result, "outputs": job.outputs}
                          for name, job in needs.items()}}

    def _job(self, job: dict[str, Any], needs: Mapping[str, Job],
             defaults: Mapping[str, str]) -> Job:
        contexts = self._contexts(needs)
        ok = all(need.result == "success" for need in needs.values())
        status = {"success": ok, "failure": not ok, "always": True, "cancelled": False}
        if not condition(job.get("if"), contexts, status):
            return Job("skipped")
        matrix = job.get("strategy", {}).get("matrix")
        entries = [{}] if matrix is None else [{"task": task} for task in matrix["task"]]
        assert matrix is None or set(matrix) == {"task"}, matrix
        most = job.get("strategy", {}).get("max-parallel", len(entries))
        with ThreadPoolExecutor(max_workers=most) as pool:
            ran = list(pool.map(lambda values: self._entry(job, values, contexts, defaults),
                                entries))
        result = Job("failure" if any(entry.failed for entry in ran) else "success",
                     entries=ran)
        if "outputs" in job:
            assert matrix is None, "outputs of a matrix job"
            steps = _steps_context(ran[0].steps, job["steps"])
            result.outputs = {key: interpolate(value, {**contexts, "steps": steps}, status)
                              for key, value in job["outputs"].items()}
        return result

    def _entry(self, job: dict[str, Any], matrix: dict[str, Any], contexts: dict[str, Any],
               defaults: Mapping[str, str]) -> Entry:
        with self.lock:
            self.counter += 1
            home = self.work / f"job-{self.counter}"
        workspace, temp, tools = home / "repo", home / "temp", home / "tools"
        for folder in (workspace, temp, tools):  # the workspace is there, empty, from the start
            folder.mkdir(parents=True)
        entry = Entry(matrix, workspace=workspace)
        path = [part for part in self.env.get("PATH", os.defpath).split(os.pathsep)
                if Path(part) != Path(sys.executable).parent]
        machine = {key: value for key, value in self.env.items() if key != "PYTHONPATH"}
        machine.update(PATH=os.pathsep.join([str(tools), *path]), RUNNER_TEMP=str(temp),
                       GITHUB_ACTIONS="true", CI="true", GITHUB_WORKSPACE=str(workspace))
        local = {**contexts, "matrix": matrix, "runner": {"temp": str(temp)}}
        for index, step in enumerate(job["steps"]):
            assert set(step) <= STEP_KEYS, set(step) - STEP_KEYS
            steps = _steps_context(entry.steps, job["steps"])
            failed = entry.failed
            status = {"success": not failed, "failure": failed, "always": True,
                      "cancelled": False}
            name = step.get("name") or step.get("uses") or f"step {index}"
            if not condition(step.get("if"), {**local, "steps": steps}, status):
                entry.steps.append(Step(name, "skipped"))
                continue
            values = {**local, "steps": steps}
            given = {key: interpolate(value, values, status)
                     for key, value in step.get("with", {}).items()}
            env = {key: interpolate(value, values, status)
                   for key, value in step.get("env", {}).items()}
            if "uses" in step:
                entry.steps.append(self._uses(name, step["uses"], given, workspace, tools))
            else:
                where = workspace / defaults.get("working-directory", ".")
                entry.steps.append(self._shell(name, interpolate(step["run"], values, status),
                                               {**machine, **env}, where, temp, entry))
        return entry

    def _shell(self, name: str, script: str, env: dict[str, str], cwd: Path, temp: Path,
               entry: Entry) -> Step:
        with self.lock:
            self.counter += 1
            number = self.counter
        output, summary = temp / f"output-{number}", temp / f"summary-{number}"
        output.touch()
        summary.touch()
        file = temp / f"step-{number}.sh"
        file.write_text(script)
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(file)],
                              cwd=cwd, env={**env, "GITHUB_OUTPUT": str(output),
                                            "GITHUB_STEP_SUMMARY": str(summary)},
                              capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=STEP_SECONDS, check=False)
        entry.summary += summary.read_text()
        outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if line)
        return Step(name, "success" if done.returncode == 0 else "failure",
                    f"$ {script}\n{done.stdout}{done.stderr}(exit {done.returncode})", outputs)

    def _uses(self, name: str, action: str, given: dict[str, str], workspace: Path,
              tools: Path) -> Step:
        kind = action.split("@")[0]
        stand_in: dict[str, Callable[[dict[str, str], Path, Path], str]] = {
            "actions/checkout": self._checkout, "actions/setup-node": self._setup_node,
            "actions/setup-python": self._setup_python, "actions/upload-artifact": self._upload,
            "actions/download-artifact": self._download}
        assert kind in stand_in, f"no stand-in for {action}"
        try:
            log = stand_in[kind](given, workspace, tools)
        except subprocess.CalledProcessError as err:
            return Step(name, "failure", f"{err}\n{err.stdout}{err.stderr}")
        return Step(name, "success", log)

    def _git(self, cwd: Path, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=cwd, env=dict(self.env), check=True,
                              capture_output=True, text=True).stdout

    def _checkout(self, given: dict[str, str], workspace: Path, tools: Path) -> str:
        assert set(given) <= {"ref", "fetch-depth"}, given
        ref, depth = given["ref"], int(given.get("fetch-depth", "1"))
        self._git(workspace, "init", "--quiet")
        self._git(workspace, "remote", "add", "origin", f"file://{self.remote}")
        shallow = [] if depth == 0 else [f"--depth={depth}"]
        is_branch = bool(self._git(self.remote, "branch", "--list", ref).strip())
        wanted = ("+refs/heads/*:refs/remotes/origin/*" if depth == 0 else
                  f"+refs/heads/{ref}:refs/remotes/origin/{ref}" if is_branch else ref)
        self._git(workspace, "fetch", "--quiet", *shallow, "origin", wanted)
        if is_branch:
            self._git(workspace, "checkout", "--quiet", "-B", ref, f"refs/remotes/origin/{ref}")
        else:
            self._git(workspace, "checkout", "--quiet", "--detach", ref)
        return f"checked out {ref}"

    def _setup_node(self, given: dict[str, str], workspace: Path, tools: Path) -> str:
        assert set(given) == {"node-version"}, given
        _script(tools / "npm", f'[ "$*" = "install -g {self.npm_package}" ] || '
                               '{ echo "npm stand-in: not the pinned CLI: npm $*" >&2; exit 1; }\n'
                               f'ln -sf "{self.claude_bin}" "{tools}/claude"\n')
        return "node and npm on PATH"

    def _setup_python(self, given: dict[str, str], workspace: Path, tools: Path) -> str:
        assert set(given) == {"python-version"}, given
        ralph = f'#!/bin/sh\nexec "{sys.executable}" "{REPO_ROOT}/scripts/ralph.py" "$@"\n'
        _script(tools / "pip", f'[ "$*" = "install {self.finesse}" ] || '
                               '{ echo "pip stand-in: not finesse: pip $*" >&2; exit 1; }\n'
                               f"cat > '{tools}/ralph' <<'EOF'\n{ralph}EOF\n"
                               f"chmod +x '{tools}/ralph'\n")
        return "python and pip on PATH"

    def _upload(self, given: dict[str, str], workspace: Path, tools: Path) -> str:
        assert set(given) == {"name", "path"}, given
        target = self.artifacts / given["name"]
        assert not target.exists(), f"artifact {given['name']} uploaded twice"
        shutil.copytree(given["path"], target)
        return f"uploaded {sorted(p.name for p in target.iterdir())}"

    def _download(self, given: dict[str, str], workspace: Path, tools: Path) -> str:
        assert set(given) == {"pattern", "merge-multiple", "path"}, given
        target = Path(given["path"])
        target.mkdir(parents=True, exist_ok=True)
        found = sorted(p for p in self.artifacts.iterdir()
                       if fnmatch.fnmatchcase(p.name, given["pattern"]))
        for artifact in found:
            where = target if given["merge-multiple"] == "true" else target / artifact.name
            shutil.copytree(artifact, where, dirs_exist_ok=True)
        return f"downloaded {[p.name for p in found]}"


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _steps_context(ran: list[Step], declared: list[dict[str, Any]]) -> dict[str, Any]:
    return {spec["id"]: {"outputs": step.outputs, "outcome": step.outcome,
                         "conclusion": step.outcome}
            for step, spec in zip(ran, declared, strict=False) if "id" in spec}
