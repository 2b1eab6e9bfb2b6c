"""finesse: Ralph loops for Claude Code, and the Finesse prompt-planning tools."""

__version__ = "0.1.0"
