"""Gate mode: every green iteration committed, every broken one repaired once or undone.

`step` runs at each stop of a gate loop (the gate commands, then commit, repair or revert)
and reports a `GateStep` that `finesse.engine.decide` turns into counters and ends;
`commits` is the git work, through the one door `finesse.support.git`.
"""
