"""Judge mode: an orchestrator that never does the work, a fresh worker subagent per
attempt, and a read-only judge subagent that alone can pass it (seed 002), enforced by the
plugin's hooks. `records` holds its state (records room); `contracts`, `prompts`, `steps`,
`decide`, `guard` and `report` are pure (core room); the hooks that drive it are
`finesse.hooks.subagent`, `finesse.hooks.pre_tool_use` and `finesse.hooks.judge_stop`."""
