"""SessionStart and SessionEnd launcher (`python3 -S hooks/session.py start|end`).

Both events are rare, but most sessions have no loop: without loop state in the project
there is nothing to re-state or archive, and nothing is imported.
"""

import os
import sys


def main() -> int:
    try:
        raw = sys.stdin.buffer.read()
        root = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
        if not os.path.isdir(os.path.join(root, ".claude", "ralph")):
            return 0
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "scripts"))
        import io

        from finesse.hooks.session import main_end, main_start

        run = main_end if sys.argv[1:2] == ["end"] else main_start
        return run(stdin=io.BytesIO(raw))
    except BaseException:  # never crash into Claude Code
        return 0


if __name__ == "__main__":
    sys.exit(main())
