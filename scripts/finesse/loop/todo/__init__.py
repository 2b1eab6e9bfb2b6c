"""`tasks/todo.md`, the loop's notebook: `sections` reads it, `edit` writes the loop's
attempts and review into it, byte-exact everywhere else."""
