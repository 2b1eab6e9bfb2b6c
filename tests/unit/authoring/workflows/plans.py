"""Plans for the workflow tests: a two-wave graph, and its folder written from the corpus."""
from __future__ import annotations

import re
from pathlib import Path

from finesse.authoring.prompt_check.validate import validate_prompt
from finesse.authoring.workflows.folder import WorkflowResult
from finesse.authoring.workflows.graph import render_execution_graph
from finesse.authoring.workflows.model import ExecutionGraph, SubWorkflow, Wave

CORPUS = Path(__file__).parents[1] / "prompt_check" / "corpus"
# name -> (corpus prompt, its promise)
PROMPTS = {
    "csv-export": ("complete-feature-csv-export.md", "EXPORT_DONE"),
    "dst-fix": ("complete-bugfix-dst.md", "DST_FIXED"),
    "billing": ("complete-refactor-billing.md", "REFACTOR COMPLETE"),
    "no-rules": ("missing-guardrails-none.md", "PROPERTIES_DONE"),
}
PLAN_DIR = "finesse-plans/reports"


def corpus_prompt(name: str) -> str:
    """A corpus prompt as a prompt-only file: from its cold-start paragraph on (the corpus
    prompts open with a title, as hand-written prompts do)."""
    lines = (CORPUS / name).read_text().splitlines(keepends=True)
    start = next(n for n, line in enumerate(lines) if not line.startswith("#")
                 and re.search(r"(?i)iterat|re-?run|re-?enter|fresh|no memory", line))
    return "".join(lines[start:])


def graph(layout: str = "nested",
          depends: dict[str, tuple[str, ...]] | None = None) -> ExecutionGraph:
    """csv-export and dst-fix in wave 1, billing in wave 2 after both (unless overridden)."""
    def sub(name: str, kind: str, iterations: int, scope: str,
            default: tuple[str, ...] = ()) -> SubWorkflow:
        return SubWorkflow.model_validate({"name": name, "type": kind, "iterations": iterations,
                                           "scope": scope,
                                           "depends_on": (depends or {}).get(name, default)})

    return ExecutionGraph.model_validate({
        "task": "Ship CSV export, fix the DST bug,\nthen refactor billing on top of both.",
        "plan_dir": PLAN_DIR,
        "layout": layout,
        "waves": [
            Wave(number=1, workflows=(sub("csv-export", "feature", 15, "`app/reports/`"),
                                      sub("dst-fix", "bugfix", 8, "`app/scheduling/`"))),
            Wave(number=2, workflows=(sub("billing", "refactor", 10, "`app/billing/`",
                                          ("csv-export", "dst-fix")),)),
        ],
        "rationale": "billing reads the exported rows and the fixed schedule, so it waits "
                     "for wave 1.",
    })


def write_folder(root: Path, plan: ExecutionGraph, prompts: dict[str, str] | None = None) -> Path:
    """The plan folder of `plan` under root, each sub-workflow from the corpus (by default
    the prompt of its own name; `prompts` maps a name to another corpus entry)."""
    folder = root / PLAN_DIR
    folder.mkdir(parents=True)
    (folder / "execution-graph.md").write_text(render_execution_graph(plan))
    for number, workflow in plan.entries():
        corpus_file, promise = PROMPTS[(prompts or {}).get(workflow.name, workflow.name)]
        text = corpus_prompt(corpus_file)
        if plan.layout == "nested":
            task = folder / f"wave-{number}" / workflow.name
            task.mkdir(parents=True)
            (task / "prompt.md").write_text(text)
            (task / "promise.txt").write_text(promise + "\n")
            (task / "plan.md").write_text(f"# {workflow.name}\n\nbaseline_commit: abc1234\n")
        else:
            (folder / f"{workflow.name}.md").write_text(text)
            (folder / f"{workflow.name}-promise.txt").write_text(promise + "\n")
    return folder


def expected_result(name: str, wave: int | None, prompt: str,
                    corpus_name: str | None = None) -> WorkflowResult:
    corpus_file, promise = PROMPTS[corpus_name or name]
    report = validate_prompt(corpus_prompt(corpus_file), promise=promise)
    return WorkflowResult(name=name, wave=wave, prompt=prompt, report=report)


NESTED_RESULTS = [
    expected_result("csv-export", 1, "wave-1/csv-export/prompt.md"),
    expected_result("dst-fix", 1, "wave-1/dst-fix/prompt.md"),
    expected_result("billing", 2, "wave-2/billing/prompt.md"),
]


