"""Multi-workflow plans: one task split into sub-workflows that run as loops, wave by wave.

The rooms, each importing only those above it:

- `model`: the graph's records (`ExecutionGraph`, `Wave`, `SubWorkflow`), `GraphError`, and
  `check_graph` (names listed twice, dependencies not on an earlier wave);
- `graph`: `execution-graph.md` written (`render_execution_graph`) and read back
  (`parse_execution_graph`);
- `folder`: a plan folder on disk, checked as a whole (`validate_workflow_folder`).
"""
