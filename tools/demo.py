"""The main job, offline: a real Ralph loop in the real Claude Code CLI with this plugin.

The model is the project's scripted stand-in on 127.0.0.1 (tests/e2e/fakeapi.py); everything
else is real: the pinned `claude` binary, the plugin's hooks, its first-run virtualenv build
(kept under .cache/demo-plugin-data so only the first demo pays for it), a throw-away git
repository whose files the loop really edits with tool calls. Standard library only.

    python3 tools/demo.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.fakeapi import Block, FakeModel, bash, last_user_text, text  # noqa: E402
from tests.e2e.harness import ClaudeRunner, make_project  # noqa: E402

TASK = "Make test_calc.py pass: calc.add must add. Run python3 test_calc.py to check."
COMMAND = (f'/ralph-loop "{TASK}" --max-iterations 5 --completion-promise DONE '
           '--verify "python3 test_calc.py"')

WRITE_FILES = (
    "printf 'def add(a, b):\\n    return a - b\\n' > calc.py && "
    "printf 'from calc import add\\nassert add(2, 3) == 5, add(2, 3)\\nprint(\"ok\")\\n' "
    "> test_calc.py && python3 test_calc.py"
)
FIX_ADD = "printf 'def add(a, b):\\n    return a + b\\n' > calc.py"


def _say(line: str) -> None:
    print(line, flush=True)


def _turn(label: str, blocks: list[Block]) -> Callable[[dict[str, Any]], list[Block]]:
    """A scripted reply that narrates what the model was given and what it answers."""

    def reply(request: dict[str, Any]) -> list[Block]:
        given = last_user_text(request).strip().splitlines()
        # The plugin's next prompt arrives as the Stop hook's additional context.
        first = next((line[line.index("Ralph iteration"):] for line in given
                      if "Ralph iteration" in line), None)
        if first is None:
            first = given[0] if given else ""
        _say(f"  model call {label}: got {textwrap.shorten(first, 90)!r}")
        for block in blocks:
            if block["type"] == "tool_use":
                _say(f"      -> runs Bash: {textwrap.shorten(block['input']['command'], 80)}")
            else:
                _say(f"      -> says: {textwrap.shorten(block['text'], 80)!r}")
        return blocks

    return reply


SCRIPT = [
    # Iteration 1 claims done too early: the plugin runs the check itself and says no.
    _turn("1", [bash(WRITE_FILES)]),
    _turn("2", [text("Wrote calc.py and its test. Done, I think.\n"
                     "Learning: the test is python3 test_calc.py\n<promise>DONE</promise>")]),
    _turn("3", [bash(FIX_ADD)]),
    _turn("4", [text("Fixed add; the test still has to be run.\n"
                     "Learning: add subtracted instead of adding")]),
    _turn("5", [bash("python3 test_calc.py")]),
    _turn("6", [text("python3 test_calc.py prints ok.\nRESULT: VERIFIED_COMPLETE\n"
                     "<promise>DONE</promise>")]),
]


def _claude() -> Path:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "install_claude.py")],
        check=True, capture_output=True, text=True,
    )
    return Path(done.stdout.strip().splitlines()[-1])


def main() -> int:
    _say("finesse demo: a Ralph loop in the real Claude Code CLI, against a scripted model")
    claude = _claude()
    version = subprocess.run([str(claude), "--version"], capture_output=True, text=True)
    _say(f"Claude Code: {version.stdout.strip()} ({claude})")
    data_dir = ROOT / ".cache" / "demo-plugin-data"
    with tempfile.TemporaryDirectory(prefix="finesse-demo-") as scratch:
        project = make_project(Path(scratch) / "project")
        _say(f"project: a fresh git repository at {project}")
        _say(f"typed in Claude Code: {COMMAND}")
        if not any(data_dir.glob("venv-*/.finesse-complete")):
            _say("(first run: the plugin builds its virtualenv from PyPI; this takes a while)")
        runner = ClaudeRunner(claude, Path(scratch) / "home")
        with FakeModel(SCRIPT) as model:
            run = runner(
                COMMAND, cwd=project, model=model,
                # The plugin's real runtime, not the test shortcut: it builds and uses its
                # own virtualenv, kept across demo runs.
                env={"FINESSE_RUNTIME": "plugin", "FINESSE_DATA_DIR": str(data_dir)},
                timeout=900,
            )
        if run.returncode != 0 or model.exhausted:
            _say("the demo run failed:\n" + run.describe())
            return 1
        history = sorted((project / ".claude" / "ralph" / "history").glob("*.json"))
        loop = json.loads(history[-1].read_text())
        _say(f"\nloop ended: {loop['outcome']} - {loop['end_message']}")
        for record in loop["iterations"]:
            _say(f"  iteration {record['number']}: {record['result']:8} "
                 f"{textwrap.shorten(record['reply_excerpt'], 70)!r}")
        report = Path(loop["report_path"]).read_text()
        _say("from the report:")
        for line in report.splitlines():
            if line.startswith(("- Status:", "- Files modified:", "- Total changes:")):
                _say(f"  {line[2:]}")
        _say(f"model calls: {model.call_count}; calc.py now reads:")
        _say(textwrap.indent((project / "calc.py").read_text(), "    "))
        check = subprocess.run([sys.executable, "test_calc.py"], cwd=project,
                               capture_output=True, text=True)
        _say(f"python3 test_calc.py -> exit {check.returncode} {check.stdout.strip()}")
        return 0 if loop["outcome"] == "success" and check.returncode == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
