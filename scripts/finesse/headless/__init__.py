"""`ralph run`: the loop headless, a fresh `claude -p` per iteration (see runner)."""
