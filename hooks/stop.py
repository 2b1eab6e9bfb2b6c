"""Stop hook launcher. It runs on every stop of every session that has the plugin, so the
no-loop path is one directory listing and a byte search, with nothing imported.

Started as `python3 -S`: no site-packages scan at start-up. The active-loop path uses the
package's standard-library modules only; it needs no virtualenv and never builds one.
"""

import os
import sys


def _project_root() -> str:
    root = os.environ.get("CLAUDE_PROJECT_DIR")
    if root:
        return root
    current = start = os.getcwd()
    while not os.path.exists(os.path.join(current, ".git")):
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent
    return current


def _may_have_loop(raw: bytes) -> bool:
    """False when no loop of this project can be this session's: no JSON parsing needed.

    Loop files are named `<session_id>.json`, and ids are plain ASCII, so a session whose
    id appears nowhere in the input as a quoted string has no loop here.
    """
    try:
        names = os.listdir(os.path.join(_project_root(), ".claude", "ralph", "loops"))
    except OSError:
        return False
    return any(
        name.endswith(".json") and b'"%s"' % name[:-5].encode() in raw for name in names
    )


def main() -> int:
    try:
        raw = sys.stdin.buffer.read()
        if not _may_have_loop(raw):
            return 0
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "scripts"))
        import io

        from finesse.hooks.stop import main as run

        return run(stdin=io.BytesIO(raw))
    except BaseException:  # never crash into Claude Code: the stop goes ahead
        return 0


if __name__ == "__main__":
    sys.exit(main())
