"""Stop hook launcher. Runs on every stop of every session that has the plugin, so the
no-loop path is the standard library, one directory listing, and nothing else.

Started as `python3 -S`: no site-packages scan at start-up. Only when this session has a
loop does it load the package and its dependencies.
"""

import json
import os
import sys


def _session_has_loop(raw: bytes) -> bool:
    root = os.environ.get("CLAUDE_PROJECT_DIR")
    try:
        if not root:
            root = _root_from_cwd(json.loads(raw).get("cwd") or os.getcwd())
        names = os.listdir(os.path.join(root, ".claude", "ralph", "loops"))
        if not names:
            return False
        session_id = json.loads(raw).get("session_id")
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(session_id, str) and f"{session_id}.json" in names


def _root_from_cwd(cwd: str) -> str:
    current = os.path.abspath(cwd)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return os.path.abspath(cwd)
        current = parent


def main() -> int:
    try:
        raw = sys.stdin.buffer.read()
        if not _session_has_loop(raw):
            return 0
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "scripts"))
        from finesse.runtime import RuntimeMissing, activate

        try:
            activate(os.environ, may_build=False)
        except RuntimeMissing as err:
            print(json.dumps({"systemMessage": f"finesse: {err}; this stop went ahead"}))
            return 0
        import io

        from finesse.hooks.stop import main as run

        return run(stdin=io.BytesIO(raw))
    except BaseException:  # never crash into Claude Code: the stop goes ahead
        return 0


if __name__ == "__main__":
    sys.exit(main())
