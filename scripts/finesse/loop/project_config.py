"""The loop's settings in the project's `.finesse/config.json`, read with the standard
library (the Stop hook reads `no_html` when a loop ends, and pydantic is never imported on
that path). The whole file is `finesse.authoring.cache.model.FinesseConfig`; the keys read
here are `notify`, `notify_cmd` (at a loop's start) and `no_html` (at its end)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from finesse.errors import UsageError
from finesse.support.files import read_text_if_present

CONFIG = ".finesse/config.json"
CONFIG_LIMIT = 256 * 1024


def read_config(root: Path) -> dict[str, Any]:
    """The config as a JSON object, {} when there is none; a one-line UsageError naming the
    file when it is not a readable JSON object (a FIFO is refused, never opened)."""
    text = read_text_if_present(root / CONFIG, subject=CONFIG, limit=CONFIG_LIMIT)
    if text is None:
        return {}
    try:
        found = json.loads(text)
    except (ValueError, RecursionError):
        raise UsageError(f"{CONFIG} is not valid JSON: fix it or remove it") from None
    if not isinstance(found, dict):
        raise UsageError(f"{CONFIG} must hold a JSON object: fix it or remove it")
    return found


def strings(config: dict[str, Any], key: str) -> list[str]:
    """A key holding one string or a list of strings; a UsageError saying so otherwise."""
    value = config.get(key, [])
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise UsageError(f'{CONFIG}: "{key}" must be a string or a list of strings; fix it or '
                     "remove it")


def html_wanted(root: Path) -> bool:
    """Whether a loop's end writes the HTML report beside the Markdown one: yes, unless the
    config says `"no_html": true`. An unreadable config does not stop the report."""
    try:
        return read_config(root).get("no_html") is not True
    except UsageError:
        return True
