"""Decomposed tasks: one task split into sub-workflows that run as loops, wave by wave, in
seed 000's nested layout (`finesse-plans/<session>/execution-graph.md`, `wave-<N>/<task>/`).

The rooms, each importing only those above it:

- `model`: the graph's records (`ExecutionGraph`, `Wave`, `SubWorkflow`,
  `DependencyReason`), `GraphError`, `wave_heading`, and `check_graph` (names listed twice,
  dependencies not on an earlier wave, dependencies without a reason);
- `graph`: `execution-graph.md` written (`render_execution_graph`) and read back
  (`parse_execution_graph`, the API a runner uses: see its docstring);
- `decompose`: the decomposed spec (`DecomposedSpec`): waves from dependencies, shared
  settings, each sub-workflow's own scope;
- `folder`: a plan folder on disk, checked as a whole (`validate_workflow_folder`) or loaded
  for a runner (`load_execution_graph`).
"""
