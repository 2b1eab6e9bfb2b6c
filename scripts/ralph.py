"""`ralph` from a plain checkout: `python3 scripts/ralph.py status`. Uses the plugin's own
virtualenv when the dependencies are not importable here; `doctor` works even without it."""

import os
import sys


def main() -> int:
    from finesse import runtime

    try:
        import click  # noqa: F401
        import pydantic  # noqa: F401
    except ImportError:
        try:
            runtime.activate(os.environ, may_build=False)
        except runtime.RuntimeMissing as err:
            if sys.argv[1:2] == ["doctor"]:
                from finesse.doctor import main as doctor

                return doctor()
            print(f"ralph: {err}", file=sys.stderr)
            return 1
    from finesse.cli.ralph import main as ralph

    return ralph()


if __name__ == "__main__":
    sys.exit(main())
