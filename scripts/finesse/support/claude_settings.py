"""Claude Code's settings files, where a status line is configured: the user's
`~/.claude/settings.json`, the project's `.claude/settings.json` and
`.claude/settings.local.json`. Read without ever failing; written only on request
(`ralph statusline --install`), atomically, every other key kept as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from finesse.errors import UsageError
from finesse.support import json_text
from finesse.support.files import read_text_if_present
from finesse.support.writes import write_atomic

MARK = "statusline"  # our command is `.../ralph statusline ...`


def settings_files(root: Path, home: Path) -> list[Path]:
    return [root / ".claude" / "settings.local.json", root / ".claude" / "settings.json",
            home / ".claude" / "settings.json"]


def load(path: Path) -> dict[str, Any]:
    """A settings file's object; {} when absent; a UsageError when it is not JSON (it is
    the user's file: never overwritten then)."""
    text = read_text_if_present(path, subject=str(path), limit=4 * 1024 * 1024)
    if text is None:
        return {}
    try:
        data = json_text.loads(text)
    except json_text.TooDeep:
        raise UsageError(f"{path} is not valid JSON (nested too deeply): fix it by hand "
                         "first") from None
    except ValueError:
        raise UsageError(f"{path} is not valid JSON: fix it by hand first") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} does not hold a JSON object: fix it by hand first")
    return data


def status_command(data: dict[str, Any]) -> str | None:
    line = data.get("statusLine")
    if isinstance(line, dict) and isinstance(line.get("command"), str):
        return str(line["command"])
    return None


def ours(command: str | None) -> bool:
    return command is not None and "ralph" in command and MARK in command


def statusline_configured(root: Path, home: Path) -> bool:
    """Whether some settings file runs `ralph statusline` as the status line."""
    for path in settings_files(root, home):
        try:
            if ours(status_command(load(path))):
                return True
        except UsageError:
            continue
    return False


def set_status_line(path: Path, data: dict[str, Any], command: str) -> None:
    """Point `statusLine` at `command`; its other keys (padding, refreshInterval) stay."""
    updated = dict(data)
    line = data.get("statusLine")
    updated["statusLine"] = {**(line if isinstance(line, dict) else {}),
                             "type": "command", "command": command}
    # Through a link into a dotfiles folder, the link's target; its mode (a 0600 file
    # holding a token) kept.
    write_atomic(path, json.dumps(updated, indent=2) + "\n")
