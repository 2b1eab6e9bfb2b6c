"""`ralph ci`: a decomposed plan's waves as a GitHub Actions workflow, many machines at once.

The same execution graph `ralph run --graph` reads (`load_execution_graph`, checked the same
way) becomes one workflow: a `plan` job that checks the credential, the plan and the chosen
waves; per wave a matrix job with one entry per sub-workflow, each a `ralph run` on its own
branch `ralph/<session>/<task>` with the arguments `finesse.headless.plan_args.loop_words`
gives `--graph` too; and per wave a merge job that merges the wave's successful branches in
the graph's order, as `--graph` does, before the next wave starts from the result.

- `plan`: what the generator needs, checked (`load_ci_plan`), with the timeouts.
- `install`: where the jobs install finesse and the pinned Claude Code CLI from.
- `workflow` and `steps`: the workflow as data, and the shell of its `run:` steps.
- `render`: the YAML text, with the header that marks a file `ralph ci` wrote.
- `jobs` and `summary`: what the workflow's steps run (`ralph ci --begin-task`, `--end-task`,
  `--merge-wave`), and the job summaries they write.
"""
