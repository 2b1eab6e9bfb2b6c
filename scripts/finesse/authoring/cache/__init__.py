"""Exploration cache: what a planning session learned about the project, kept while true.

- `model`: the records (seed 000's schema) and the pure rules, `merge` and
  `check_freshness`;
- `store`: the files under `.finesse/`, git's view of what changed, the lock.
"""
