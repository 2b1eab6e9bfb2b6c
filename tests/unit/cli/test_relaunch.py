"""`bin/ralph` and `bin/finesse` under a real `python3` older than 3.11 (issue 24): run again
under a suitable interpreter, with their arguments, stdin and exit status; with none, one
line on stderr and exit 1 (`ralph doctor` still reports where it can); the marker of the
hand-over never reaches what the new process starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from finesse.support import interpreters
from tests.helpers.interpreters import programs, python, version, version_info, wrapper
from tests.helpers.launch import RALPH, REPO_ROOT, Run, hook_env, run_ralph

FINESSE = REPO_ROOT / "bin" / "finesse"


def run_with(program: Path, tool: Path, argv: list[str], env: dict[str, str],
             cwd: Path) -> Run:
    done = subprocess.run([str(program), str(tool), *argv], capture_output=True, env=env,
                          cwd=cwd, timeout=120)
    return Run(done.returncode, done.stdout.decode(), done.stderr.decode())


@pytest.mark.parametrize("old", ["3.8", "3.9"])
def test_the_tools_run_under_the_new_python_beside_an_old_python3(root: Path, tmp_path: Path,
                                                                  old: str) -> None:
    # The tests' own interpreter has the dependencies; a shim named python3.11 runs it.
    bin_dir = programs(tmp_path / "bin", python3=python(old))
    wrapper(bin_dir / "python3.11", sys.executable)
    env = hook_env(root, PATH=f"{bin_dir}:/usr/bin:/bin")
    for tool, argv in ((RALPH, ["status"]), (RALPH, ["status", "--json"]),
                       (FINESSE, ["--help"]), (RALPH, ["no-such-command"])):
        relaunched = run_with(bin_dir / "python3", tool, argv, env, root)
        direct = run_with(Path(sys.executable), tool, argv, hook_env(root), root)
        assert relaunched == direct, argv


@pytest.mark.parametrize("old", ["3.6", "3.9"])
def test_with_nothing_suitable_one_line_and_exit_1(root: Path, tmp_path: Path, old: str) -> None:
    bin_dir = programs(tmp_path / "bin", python3=python(old))
    result = run_with(bin_dir / "python3", RALPH, ["status"],
                      hook_env(root, PATH=str(bin_dir)), root)
    assert result == Run(1, "", interpreters.refusal(
        version_info(python(old)), windows=False,
        who="ralph") + "\n")


def test_ralph_doctor_still_reports_under_an_old_python(root: Path, tmp_path: Path) -> None:
    bin_dir = programs(tmp_path / "bin", python3=python("3.9"))
    result = run_with(bin_dir / "python3", RALPH, ["doctor"], hook_env(
        root, PATH=str(bin_dir), CLAUDE_PLUGIN_DATA=str(tmp_path / "data")), root)
    lines = result.stdout.splitlines()
    assert (result.code, result.stderr) == (1, "")
    assert lines[:2] == [
        f"BAD python: {version(python('3.9'))} at {bin_dir / 'python3'}; finesse needs "
        "Python 3.11 or newer",
        f"BAD hooks' python: python3 ({bin_dir / 'python3'}) is {version(python('3.9'))}, "
        f"older than 3.11, and none was found (looked for {interpreters.looked_for(False)}): "
        "install Python 3.11 or newer or set FINESSE_PYTHON to one",
    ]


def test_a_tool_re_run_under_one_still_too_old_says_so_and_goes_no_further(
        root: Path, tmp_path: Path) -> None:
    bin_dir = programs(tmp_path / "bin", python3=python("3.9"), python3_12=python("3.8"))
    wrapper(bin_dir / "python3.11", sys.executable)  # never reached: no second search
    result = run_with(bin_dir / "python3", RALPH, ["status"], hook_env(root, PATH=str(bin_dir)),
                      root)
    assert result == Run(1, "", interpreters.refusal(
        version_info(python("3.8")), "python3.12 on PATH", who="ralph") + "\n")


def test_the_hand_over_marker_is_dropped_once_the_tool_runs(root: Path) -> None:
    # What the new process starts (a `claude -p`, a hook, another `ralph`) must not take the
    # marker for its own: it would refuse instead of handing over.
    driver = (
        "import os, sys; "
        f"sys.path.insert(0, {str(REPO_ROOT / 'scripts')!r}); "
        "os.environ['FINESSE_RELAUNCHED'] = 'python3.12 on PATH'; "
        "sys.argv = ['ralph', 'status']; "
        "from finesse.cli.launch import run_cli\n"
        "try:\n    run_cli('ralph')\nexcept SystemExit:\n    pass\n"
        "print('FINESSE_RELAUNCHED' in os.environ)"
    )
    done = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True,
                          env=hook_env(root), cwd=root, timeout=60)
    assert done.stdout.splitlines()[-1] == "False"
    assert run_ralph(root, "status").code == 0
