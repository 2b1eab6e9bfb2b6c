"""The workflow as data: `build_workflow(plan)` is the mapping `render` writes as YAML.

Jobs, in `needs:` order: `plan` (the credential is set, the plan on the base branch is the
one the workflow was written from, the waves chosen; its outputs are the base branch, the
commit the first wave starts from, and the waves as `,1,2,`), then per wave N `wave-N` (a
matrix entry per sub-workflow, at most `--jobs` at a time, each from the same commit) and
`merge-N` (the wave's successful branches merged into the base branch and pushed; its output
is the commit the next wave starts from). `merge-N` runs whatever became of the wave's
entries, but only after the merge before it succeeded: a conflict stops every later wave.
A wave that was not chosen is skipped and its merge job merges nothing.
"""

from __future__ import annotations

from typing import Any

from finesse.headless.ci import steps
from finesse.headless.ci.install import NODE_VERSION, PYTHON_VERSION
from finesse.headless.ci.plan import MERGE_MINUTES, PLAN_MINUTES, CiPlan, CiTask

CHECKOUT = "actions/checkout@v5"
SETUP_NODE = "actions/setup-node@v5"
SETUP_PYTHON = "actions/setup-python@v6"
UPLOAD = "actions/upload-artifact@v6"
DOWNLOAD = "actions/download-artifact@v7"  # the major that reads what UPLOAD writes
BASE = "${{ inputs.base || github.head_ref || github.ref_name }}"

Job = dict[str, Any]
Step = dict[str, Any]


def _literal(text: str) -> str:
    """A string literal of GitHub's expressions."""
    return "'" + text.replace("'", "''") + "'"


def _selected(wave: int) -> str:
    return f"contains(needs.plan.outputs.waves, ',{wave},')"


def _run(name: str, script: str, **more: Any) -> Step:
    return {"name": name, **more, "run": script}


def _setup(plan: CiPlan, ref: str, *, cli: bool) -> list[Step]:
    """Check out `ref` with its whole history (the merges need it, and every `ralph/`
    branch), then Python (and Node with the CLI when `cli`), finesse, and git's identity."""
    setup: list[Step] = [
        {"name": "Check out", "uses": CHECKOUT, "with": {"ref": ref, "fetch-depth": 0}}]
    if cli:
        setup.append({"uses": SETUP_NODE, "with": {"node-version": NODE_VERSION}})
    setup += [{"uses": SETUP_PYTHON, "with": {"python-version": PYTHON_VERSION}},
              _run("Install Claude Code and finesse" if cli else "Install finesse",
                   steps.install(cli), env={"FINESSE": plan.settings.finesse}),
              _run("Set the git identity", steps.identity())]
    return setup


def _plan_job(plan: CiPlan) -> Job:
    secret = plan.settings.secret
    job: Job = {"name": "check the plan", "runs-on": plan.settings.runs_on,
                "timeout-minutes": PLAN_MINUTES}
    labels = [t.value for t in plan.settings.triggers if t.kind == "label"]
    if labels:
        named = " || ".join(f"github.event.label.name == {_literal(label)}" for label in labels)
        job["if"] = f"${{{{ github.event_name != 'pull_request' || {named} }}}}"
    job["outputs"] = {key: f"${{{{ steps.plan.outputs.{key} }}}}"
                      for key in ("base", "commit", "waves")}
    job["steps"] = [
        # First the checkout: a `run:` step works in the project, not there before it.
        {"name": "Check out", "uses": CHECKOUT, "with": {"ref": BASE}},
        _run(f"Check the {secret} secret", steps.credential_check(plan),
             env={"CREDENTIAL_SET": f"${{{{ secrets.{secret} != '' }}}}"}),
        _run("Check the plan and choose the waves", steps.plan_check(plan), id="plan",
             env={"BASE": BASE, "WAVES": "${{ inputs.waves }}"})]
    return job


def _wave_job(plan: CiPlan, wave: tuple[CiTask, ...], start: str, needs: list[str]) -> Job:
    number = wave[0].wave
    task = "${{ matrix.task }}"
    chosen = "steps.begin.outputs.run == 'true'"
    secret = plan.settings.secret
    return {
        "name": f"wave {number}: {task}", "needs": needs, "if": f"${{{{ {_selected(number)} }}}}",
        "runs-on": plan.settings.runs_on, "timeout-minutes": plan.job_minutes(wave),
        "strategy": {"fail-fast": False, "max-parallel": plan.settings.jobs,
                     "matrix": {"task": [entry.name for entry in wave]}},
        "steps": [
            *_setup(plan, start, cli=True),
            _run("Start the branch", steps.begin(plan), id="begin", env={"TASK": task}),
            _run("Run the loop", steps.run_loop(plan, wave), **{"if": f"${{{{ {chosen} }}}}"},
                 env={"TASK": task, secret: f"${{{{ secrets.{secret} }}}}"}),
            _run("Push the branch and summarise", steps.end(plan),
                 **{"if": f"${{{{ always() && {chosen} }}}}"}, env={"TASK": task}),
            {"name": "Upload the report", "if": f"${{{{ always() && {chosen} }}}}",
             "uses": UPLOAD,
             "with": {"name": f"ralph-{plan.session}-{task}",
                      "path": f"${{{{ runner.temp }}}}/{steps.KEEP}/"}}],
    }


def _merge_job(plan: CiPlan, number: int, needs: list[str]) -> Job:
    earlier = [f"needs.{job}.result == 'success'" for job in needs if job.startswith("merge-")]
    condition = " && ".join(["!cancelled()", "needs.plan.result == 'success'", *earlier])
    return {
        "name": f"merge wave {number}", "needs": needs, "if": f"${{{{ {condition} }}}}",
        "runs-on": plan.settings.runs_on, "timeout-minutes": MERGE_MINUTES,
        "outputs": {"commit": "${{ steps.merge.outputs.commit }}"},
        "steps": [
            *_setup(plan, "${{ needs.plan.outputs.base }}", cli=False),
            {"name": "Download the reports", "if": f"${{{{ {_selected(number)} }}}}",
             "uses": DOWNLOAD,
             "with": {"pattern": f"ralph-{plan.session}-*", "merge-multiple": True,
                      "path": f"${{{{ runner.temp }}}}/{steps.REPORTS}"}},
            _run(f"Merge wave {number} into the base branch", steps.merge(plan, number),
                 id="merge", env={"WAVES": "${{ needs.plan.outputs.waves }}"})],
    }


def _triggers(plan: CiPlan) -> dict[str, Any]:
    on: dict[str, Any] = {"workflow_dispatch": {"inputs": {
        "base": {"description": "The branch the waves start from and merge into (empty: the "
                                "branch this run is on)",
                 "required": False, "default": "", "type": "string"},
        "waves": {"description": "The waves to run, such as 2 or 1,2 (empty: every wave)",
                  "required": False, "default": "", "type": "string"}}}}
    if any(t.kind == "label" for t in plan.settings.triggers):
        on["pull_request"] = {"types": ["labeled"]}
    pushed = [t.value for t in plan.settings.triggers if t.kind == "push"]
    if pushed:
        on["push"] = {"branches": pushed, "paths": [f"{plan.marker}/**"]}
    return on


def build_workflow(plan: CiPlan) -> dict[str, Any]:
    jobs: dict[str, Job] = {"plan": _plan_job(plan)}
    start = "${{ needs.plan.outputs.commit }}"
    before: list[str] = []
    for wave in plan.waves:
        number = wave[0].wave
        jobs[f"wave-{number}"] = _wave_job(plan, wave, start, ["plan", *before])
        jobs[f"merge-{number}"] = _merge_job(plan, number, ["plan", *before, f"wave-{number}"])
        start = f"${{{{ needs.merge-{number}.outputs.commit }}}}"
        before = [f"merge-{number}"]
    defaults: dict[str, Any] = {"shell": "bash"}
    if plan.project != ".":
        defaults["working-directory"] = plan.project
    return {"name": f"ralph: {plan.session}", "on": _triggers(plan),
            "permissions": {"contents": "write"},
            "concurrency": {"group": f"ralph-{plan.session}", "cancel-in-progress": False},
            "defaults": {"run": defaults}, "jobs": jobs}
