"""The retro of a plan after its loop has run: what changed since the plan's baseline commit.

Inputs, all read as they are and never changed:

- the plan, `finesse-plans/<name>-plan.md` (or a sub-workflow's `plan.md`): its baseline is
  the first line, outside code fences, of the form `baseline_commit: <sha>` (the front matter
  `finesse new` writes; the sha may be quoted) or `- **baseline_commit**: <sha>` (a Markdown
  field; `Baseline commit` is read the same). Its `Unresolved Warnings` section is copied.
- the prompt beside it, `<name>.md` (or `prompt.md`): each phase's Verify command is run
  again: the first code span after the first label in the phase that the checker takes for
  one (`Verify:`, `Check with`, `Verification:`...), or the fenced block right under a label
  that ends its line. The same command in two phases runs once.
- the project's git history: commits from the baseline to HEAD, the files they changed, and
  the files changed but not committed (leaving out `.claude/ralph/`, the loops' own state,
  and the retro file itself). Paths are from the git top level.
- the loops, as the loop store keeps them (`finesse.state.store.LoopStore.history`). A loop is
  this plan's when its prompt is this plan's prompt (blanks aside) or its `prompt_file` is
  this prompt; any other loop that ended after the baseline commit's time is listed too,
  marked as matched by time only. Each listed loop's report
  `.claude/ralph/reports/<loop_id>.md` is included, as is any report without a history entry
  written after the baseline commit.

The rooms, each importing only those above it:

- `model`: the retro's records (pydantic, strict);
- `plan`: the plan's baseline and warnings, the prompt's phases and Verify commands (pure);
- `loops`: which ended loops belong to the plan, and their reports;
- `report`: the retro as Markdown (pure);
- `collect`: the git review, the commands run again, and `collect_retro` / `write_retro`.
"""
