"""The hook launcher under a real `python3` older than 3.11 (issue 24): each event run exactly
as hooks.json has Claude Code run it, its `python3` found on a PATH such as a stock macOS
has (3.9, or 3.8, with Homebrew's `python3.12` beside it). A loop starts and goes on through
the hand-over; with no suitable interpreter our commands are refused in one line and every
other event goes ahead; the order of the search, a candidate that cannot start, one that is
itself too old; the Windows way of handing over (wait, then exit 0); and no search at all
when `python3` is new enough."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from finesse.support import interpreters
from tests.helpers.hooks import continuation, prompt_input, stop_input
from tests.helpers.interpreters import programs, python, tools_path, version, wrapper
from tests.helpers.launch import LAUNCHER, REPO_ROOT, LaunchedSession, Run, hook_env, run_configured
from tests.helpers.states import SESSION, active, only_archived
from tests.helpers.texts import NOTES, UNVERIFIED_END, UNVERIFIED_START

START = "/ralph-loop go --max-iterations 3 --quiesce-after 3"
STARTED = {
    "hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit",
        "additionalContext": (
            "A Ralph loop is running in this session (finesse plugin). You will be given the "
            "same task again each time you stop, until you output the completion promise or "
            "the iteration cap is reached.\n\n"
            "Ralph iteration 1/3: output <promise>RALPH_LOOP_STOP</promise> only when it is "
            f"completely true\n\nThe task, verbatim:\n<ralph-task>\ngo\n</ralph-task>\n\n{NOTES}"
        ),
    },
    "systemMessage": "Ralph loop started: up to 3 iterations, ends on "
                     "<promise>RALPH_LOOP_STOP</promise>. /ralph-status to watch, "
                     "/cancel-ralph to stop.\n" + UNVERIFIED_START,
}


def goes_on(number: int) -> dict[str, object]:
    return continuation(
        f"Ralph iteration {number}/3: output <promise>RALPH_LOOP_STOP</promise> only when it "
        f"is completely true\n\ngo\n\n---\n\n{NOTES}",
        f"Ralph iteration {number}/3",
    )


def refused(version: str, looked_for: str = interpreters.looked_for(windows=False)) -> dict[
        str, str]:
    return {"decision": "block", "reason": (
        f"finesse: needs Python 3.11 or newer; python3 is {version}, and none was found "
        f"(looked for {looked_for}): install Python 3.11 or newer (from python.org, or e.g. "
        "`brew install python@3.12`) or set FINESSE_PYTHON to one; see `ralph doctor`")}


def env_with(root: Path, path: list[Path | str], **extra: str) -> dict[str, str]:
    return hook_env(root, PATH=":".join(str(entry) for entry in path), **extra)


def a_whole_loop(claude: LaunchedSession) -> None:
    """Start, two stops that go on, a third that ends on the promise: each iteration once."""
    assert claude.submit(START).output() == STARTED
    assert active(claude.root).iteration == 1
    for number in (2, 3):
        assert claude.stop(f"Step {number - 1} done.").output() == goes_on(number)
        assert active(claude.root).iteration == number
    done = claude.stop("All done.\n<promise>RALPH_LOOP_STOP</promise>").output()
    ended = only_archived(claude.root)
    assert done == {"systemMessage": "Ralph loop done: <promise>RALPH_LOOP_STOP</promise> at "
                                     "iteration 3/3" + UNVERIFIED_END
                                     + "\nFiles modified: 0 (+0, -0)\n"
                                     f"Report: .claude/ralph/reports/{ended.loop_id}.md"}
    assert (ended.iteration, [r.result for r in ended.iterations]) == (
        3, ["continue", "continue", "success"])


@pytest.mark.parametrize("old", ["3.8", "3.9"])
def test_a_loop_runs_with_python3_old_and_python3_12_beside_it(git_repo: Path, tmp_path: Path,
                                                               old: str) -> None:
    bin_dir = programs(tmp_path / "bin", python3=python(old), python3_12=python("3.12"))
    env = env_with(git_repo, [bin_dir, tools_path(tmp_path / "tools")])
    a_whole_loop(LaunchedSession(git_repo, SESSION, env))


@pytest.mark.parametrize("old", ["3.6", "3.8", "3.9"])
def test_with_nothing_suitable_our_command_is_refused_and_nothing_else_is_touched(
        git_repo: Path, tmp_path: Path, old: str) -> None:
    bin_dir = programs(tmp_path / "bin", python3=python(old))
    env = env_with(git_repo, [bin_dir, tools_path(tmp_path / "tools")])
    for prompt in (START, "/ralph-status", "/finesse:cancel-ralph"):
        result = run_configured("UserPromptSubmit", prompt_input(prompt, cwd=str(git_repo)), env,
                                git_repo)
        assert (result.code, result.stderr) == (0, "")
        assert result.output() == refused(version(python(old)))
    quiet = [run_configured("UserPromptSubmit", prompt_input("Fix the tests"), env, git_repo),
             run_configured("Stop", stop_input("<promise>RALPH_LOOP_STOP</promise>"), env,
                            git_repo),
             run_configured("PreToolUse", b"{}", env, git_repo),
             run_configured("SessionStart", b"garbage", env, git_repo)]
    assert [(run.code, run.stdout, run.stderr) for run in quiet] == [(0, "", "")] * 4
    assert not (git_repo / ".claude").exists()


def test_the_environments_interpreter_comes_before_those_on_path(git_repo: Path,
                                                                tmp_path: Path) -> None:
    # A built environment records its interpreter in pyvenv.cfg: the hooks go back to it, and
    # the shim on PATH, which would be run to ask its version, is never even started.
    data = tmp_path / "plugin-data"
    venv = data / "venv-0123456789abcdef"
    venv.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(
        f"home = {python('3.12').parent}\nversion = {version(python('3.12'))}\n"
        f"executable = {python('3.12')}\n")
    (venv / interpreters.COMPLETE_MARK).write_text("")
    ran = tmp_path / "shim-ran"
    shim = tmp_path / "bin" / "python3.11"
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\ntouch {ran}\nexit 1\n")
    shim.chmod(0o755)
    programs(tmp_path / "bin", python3=python("3.9"))
    env = env_with(git_repo, [tmp_path / "bin", tools_path(tmp_path / "tools")],
                   CLAUDE_PLUGIN_DATA=str(data))
    a_whole_loop(LaunchedSession(git_repo, SESSION, env))
    assert not ran.exists()


def test_finesse_python_comes_first_and_one_too_old_is_passed_over(git_repo: Path,
                                                                  tmp_path: Path) -> None:
    only_old = programs(tmp_path / "old", python3=python("3.9"))
    tools = tools_path(tmp_path / "tools")
    env = env_with(git_repo, [only_old, tools], FINESSE_PYTHON=str(python("3.8")))
    result = run_configured("UserPromptSubmit", prompt_input(START), env, git_repo)
    assert (result.code, result.stderr) == (0, "")
    assert result.output() == refused(version(python("3.9")))
    assert not (git_repo / ".claude").exists()
    env["PATH"] = ":".join([str(programs(tmp_path / "bin", python3=python("3.9"),
                                         python3_12=python("3.12"))), tools])
    a_whole_loop(LaunchedSession(git_repo, SESSION, env))


def test_finesse_python_is_taken_first(git_repo: Path, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    bin_dir = programs(tmp_path / "bin", python3=python("3.9"))
    shim = bin_dir / "python3.13"  # second in line: never even asked its version
    shim.write_text(f"#!/bin/sh\ntouch {ran}\nexit 1\n")
    shim.chmod(0o755)
    env = env_with(git_repo, [bin_dir, tools_path(tmp_path / "tools")],
                   FINESSE_PYTHON=str(python("3.12")))
    a_whole_loop(LaunchedSession(git_repo, SESSION, env))
    assert not ran.exists()


def test_a_launcher_handed_over_to_one_still_too_old_says_so_and_searches_no_more(
        git_repo: Path, tmp_path: Path) -> None:
    # A program named python3.12 is taken at its name's word; this one is a 3.8. Re-run
    # under it, the launcher refuses, naming it, and never looks for another (a shim that
    # would note being asked its version is never asked).
    ran = tmp_path / "ran"
    bin_dir = programs(tmp_path / "bin", python3=python("3.9"), python3_12=python("3.8"))
    shim = bin_dir / "python3.11"
    shim.write_text(f"#!/bin/sh\ntouch {ran}\nprintf 3.11.0\n")
    shim.chmod(0o755)
    env = env_with(git_repo, [bin_dir, tools_path(tmp_path / "tools")])
    result = run_configured("UserPromptSubmit", prompt_input(START), env, git_repo)
    assert (result.code, result.stderr) == (0, "")
    assert result.output() == {"decision": "block", "reason": (
        f"finesse: needs Python 3.11 or newer, and python3.12 on PATH is "
        f"{version(python('3.8'))}: install Python 3.11 or newer (from python.org, or e.g. "
        "`brew install python@3.12`) or set FINESSE_PYTHON to one; see `ralph doctor`")}
    stop = run_configured("Stop", stop_input("done"), env, git_repo)
    assert (stop.code, stop.stdout, stop.stderr) == (0, "", "")
    assert not ran.exists() and not (git_repo / ".claude").exists()


def test_a_candidate_that_cannot_start_is_passed_over(git_repo: Path, tmp_path: Path) -> None:
    bin_dir = programs(tmp_path / "bin", python3=python("3.9"), python3_12=python("3.12"))
    broken = bin_dir / "python3.13"  # a program by its looks, which exec refuses (ENOEXEC)
    broken.write_bytes(b"\x7fELF, but no more of one")
    broken.chmod(0o755)
    env = env_with(git_repo, [bin_dir, tools_path(tmp_path / "tools")])
    a_whole_loop(LaunchedSession(git_repo, SESSION, env))


def test_a_shim_that_does_not_run_its_version_is_passed_over(git_repo: Path,
                                                            tmp_path: Path) -> None:
    # pyenv's python3.13 shim when 3.13 is not the selected version: it exits 127.
    (tmp_path / "bin").mkdir()
    shim = tmp_path / "bin" / "python3.13"
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.13: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    wrapper(tmp_path / "bin" / "python3.12", python("3.12"))  # a shim that does run
    programs(tmp_path / "bin", python3=python("3.9"))
    env = env_with(git_repo, [tmp_path / "bin", tools_path(tmp_path / "tools")])
    a_whole_loop(LaunchedSession(git_repo, SESSION, env))


def _windows_hand_over(stdin: bytes, env: dict[str, str], cwd: Path) -> Run:
    driver = (
        f"import sys; sys.path.insert(0, {str(REPO_ROOT / 'scripts')!r}); "
        "from finesse.hooks import relaunch; "
        f"sys.exit(relaunch.main({str(LAUNCHER)!r}, ['prompt'], windows=True))"
    )
    done = subprocess.run([str(python("3.9")), "-S", "-c", driver], input=stdin,
                          capture_output=True, env=env, cwd=cwd, timeout=60)
    return Run(done.returncode, done.stdout.decode(), done.stderr.decode())


def test_the_windows_hand_over_waits_passes_stdin_and_exits_0(git_repo: Path,
                                                              tmp_path: Path) -> None:
    # Windows has no exec: the new launcher is started with the inherited streams and waited
    # for. Run here with the Windows names (python3.12.exe on PATH).
    bin_dir = programs(tmp_path / "bin", python3_12_exe=python("3.12"))
    env = env_with(git_repo, [bin_dir])
    result = _windows_hand_over(prompt_input(START, cwd=str(git_repo)), env, git_repo)
    assert (result.code, result.stderr) == (0, "")
    assert result.output() == STARTED
    assert active(git_repo).iteration == 1


def test_the_windows_hand_over_exits_0_whatever_the_new_launcher_returns(
        git_repo: Path, tmp_path: Path) -> None:
    program = tmp_path / "bin" / "python3.12.exe"
    program.parent.mkdir()
    program.write_text('#!/bin/sh\nif [ "$2" = "-c" ]; then printf 3.12.0; exit 0; fi\n'
                       "exit 3\n")
    program.chmod(0o755)
    result = _windows_hand_over(prompt_input(START), env_with(git_repo, [program.parent]),
                                git_repo)
    assert (result.code, result.stdout, result.stderr) == (0, "", "")


def test_a_new_enough_python3_searches_nothing(git_repo: Path, tmp_path: Path) -> None:
    # One version check and straight on: FINESSE_PYTHON and the PATH's interpreters are
    # never looked at, the finder is never imported.
    ran = tmp_path / "ran"
    shim = tmp_path / "bin" / "python3.12"
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\ntouch {ran}\nexit 1\n")
    shim.chmod(0o755)
    driver = (
        "import runpy, sys; "
        f"sys.argv = [{str(LAUNCHER)!r}, 'stop']; "
        f"code = runpy.run_path({str(LAUNCHER)!r}, run_name='launch')['main'](); "
        "sys.stderr.write(repr(sorted(m for m in sys.modules if m.startswith('finesse')))); "
        "sys.exit(code)"
    )
    env = hook_env(git_repo, PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin", FINESSE_PYTHON=str(shim))
    done = subprocess.run([sys.executable, "-S", "-c", driver], input=stop_input("done"),
                          capture_output=True, env=env, cwd=git_repo, timeout=60)
    assert (done.returncode, done.stdout) == (0, b"")
    loaded = json.loads(done.stderr.decode().replace("'", '"'))
    assert loaded == ["finesse", "finesse.hooks", "finesse.hooks.entry", "finesse.support",
                      "finesse.support.layout"]
    assert not ran.exists()
