"""The one file Claude Code runs for the plugin's hooks: `python3 -S hooks/launch.py EVENT`
(see hooks.json). It puts the package on the path and hands over to
`finesse.hooks.entry.run`, which decides from the standard library alone whether the event
needs anything more. Whatever happens, it exits 0: a bug lets Claude go on, never traps it.

Runnable by any Python 3 from 3.6 on (tests compile it under 3.6): when the interpreter is
older than 3.11, `finesse.hooks.relaunch` runs the hook under a suitable one instead, or
refuses our commands in one line. On a new enough interpreter that costs one comparison.
"""

import os
import sys


def main() -> int:
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "scripts"))
        if sys.version_info < (3, 11):
            from finesse.hooks import relaunch

            return relaunch.main(os.path.abspath(__file__), sys.argv[1:])
        from finesse.hooks.entry import run

        return run(sys.argv[1] if len(sys.argv) > 1 else "")
    except BaseException:  # never crash into Claude Code: the event goes ahead
        return 0


if __name__ == "__main__":
    sys.exit(main())
