"""`ralph` from a plain checkout: `python3 scripts/ralph.py status`."""

import sys

from finesse.cli.launch import run_cli

if __name__ == "__main__":
    sys.exit(run_cli("ralph"))
