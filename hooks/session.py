"""SessionStart and SessionEnd launcher (`python3 -S hooks/session.py start|end`).

Both events are rare, but most sessions have no loop: without loop state in the project
there is nothing to re-state or archive, and nothing is imported.
"""

import os
import sys


def main() -> int:
    try:
        raw = sys.stdin.buffer.read()
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "scripts"))
        from finesse.state.paths import find_project_root

        root = find_project_root(os.environ, os.getcwd())
        if not (root / ".claude" / "ralph").is_dir():
            return 0
        import io

        from finesse.hooks.session import main_end, main_start

        run = main_end if sys.argv[1:2] == ["end"] else main_start
        return run(stdin=io.BytesIO(raw))
    except BaseException:  # never crash into Claude Code
        return 0


if __name__ == "__main__":
    sys.exit(main())
