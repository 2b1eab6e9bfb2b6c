"""Finesse planning tools: checks on loop prompts, made without calling a model."""
