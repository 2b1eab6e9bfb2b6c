"""`ralph` and `finesse` started under a `python3` older than 3.11 run again under a suitable
interpreter (`finesse.support.interpreters`), or say in one line why they cannot. Standard
library only, in syntax Python 3.6 still compiles: `bin/` imports this module only on an old
interpreter.

The new process is told why it was chosen (RELAUNCHED_VARIABLE, dropped again by
`finesse.cli.launch` once it runs, so nothing it starts inherits it); one that is still too
old says so and never searches again. `ralph doctor` with nothing suitable still prints its
report where this interpreter can import it.
"""

import os
import sys

from finesse.support import interpreters


def main(name: str, script: str, args: "list[str]") -> int:
    """`name` (the tool) at `script`, run with `args` under a suitable interpreter; the
    exit status to leave with when there is none."""
    reason = os.environ.pop(interpreters.RELAUNCHED_VARIABLE, None)
    if reason is None:
        for candidate in interpreters.candidates(os.environ):
            env = dict(os.environ)
            env[interpreters.RELAUNCHED_VARIABLE] = candidate.reason
            try:
                return interpreters.run_replacing([*candidate.argv, script, *args], env=env)
            except OSError:
                continue  # it could not be started: try the next one
    if name == "ralph" and args[:1] == ["doctor"]:
        try:
            from finesse.support.health import report
        except Exception:  # this interpreter cannot load the report: the line below says it
            pass
        else:
            healthy, text = report()
            print(text)
            return 0 if healthy else 1
    print(interpreters.refusal(tuple(sys.version_info[:3]), reason, who=name),
          file=sys.stderr)
    return 1
