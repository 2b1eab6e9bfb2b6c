"""UserPromptSubmit hook launcher: hands our slash commands to the package, ignores the rest.

Started as `python3 -S`. Starting a loop may build the plugin's virtualenv on first use.
"""

import json
import os
import sys


def main() -> int:
    try:
        raw = sys.stdin.buffer.read()
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "scripts"))
        from finesse.loop.grammar import match_command

        prompt = json.loads(raw).get("prompt")
        if not isinstance(prompt, str) or match_command(prompt) is None:
            return 0
        if sys.version_info < (3, 11):
            found = ".".join(map(str, sys.version_info[:3]))
            reason = (
                f"finesse: needs Python 3.11 or newer as python3, found {found}; "
                "see `ralph doctor`"
            )
            print(json.dumps({"decision": "block", "reason": reason}))
            return 0
        from finesse.support.runtime import RuntimeMissing, activate

        try:
            activate(os.environ, may_build=True)
        except RuntimeMissing as err:
            print(json.dumps({"decision": "block", "reason": f"finesse: {err}"}))
            return 0
        import io

        from finesse.hooks.prompt_submit import main as run

        return run(stdin=io.BytesIO(raw))
    except BaseException:  # never crash into Claude Code: the prompt goes ahead
        return 0


if __name__ == "__main__":
    sys.exit(main())
