"""Stop hook benchmark: wall time and peak memory of `hooks/stop.py` as Claude Code runs it.

Numbers, not assertions. In one run, on this machine, it measures:

- the bare start-up of the interpreter the hook runs under (`PY -c pass`), the yardstick;
- the launcher's no-loop path (`PY -S hooks/stop.py`), in a project without loops and in a
  project where another session has a loop (so the stdin JSON is parsed);
- the active-loop path (this session has a loop, the reply has no promise, so the loop
  continues) with only `transcript_path` given, at several transcript sizes, so the hook
  really reads the transcript's tail; and with `last_assistant_message` given, the usual case.

Each figure is the median wall time of the runs, its ratio to the bare start-up median of the
same run, and the child's peak RSS (from `os.wait4`, the children started by a small helper
process so that this one's memory does not leak into the figure). The scenarios are run
round-robin, so a slow spell of the machine hits them all alike. The transcript tail read is
also timed alone, in this process, to tell its cost apart from noise. Targets are printed
PASS/FAIL; the exit status is 0 unless the hook itself failed (non-zero exit, output that is
not JSON, no block decision on the active path, or the loop not continued with the
transcript's final reply): then 1.

    .venv/bin/python bench/stop_hook_bench.py [--runs 21] [--sizes 1,10,100] [--json]
                                              [--importtime]

Everything is written under a temporary directory (also the children's HOME), then removed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = REPO_ROOT / "hooks" / "launch.py"

SESSION_ID = "4d1c2b7e-9a55-4f0e-8c2d-5be1a0c3f9a1"
OTHER_SESSION_ID = "0b8e6f3a-1d2c-4e5f-a6b7-c8d9e0f1a2b3"
PROMISE = "ALL TESTS PASS"
MAX_ITERATIONS = 100_000  # the most a loop file may hold
CLAUDE_VERSION = "2.1.328"
MODEL = "claude-sonnet-4-5"
MB = 1_000_000

DEFAULT_RUNS = 21
DEFAULT_SIZES = "1,10,100"
# A scenario whose single run is slow gets fewer runs (never under MIN_RUNS) so that it
# takes about this long; with the defaults no scenario comes near it.
DEFAULT_BUDGET_SECONDS = 20.0
MIN_RUNS = 5

NO_LOOP_MAX_RATIO = 1.5
ACTIVE_MAX_RATIO = 8.0
SIZE_DRIFT_MAX = 0.15
PEAK_MIB_MAX = 50.0
REFERENCE = (
    "official ralph-loop bash Stop hook: about 9.7x bare at 1 MB and 13.7x at 100 MB "
    "(a quoted figure, not measured here)"
)
REFERENCE_RATIOS = {"1 MB": 9.7, "100 MB": 13.7}

FINAL_REPLY = (
    "I fixed the tokenizer's handling of escaped quotes and the three parser tests that "
    "depended on it now pass. `test_roundtrip_unicode` still fails: the writer drops a "
    "combining mark when it normalises line endings. I have not touched the writer yet; "
    "next I will add a failing case for it and fix `normalise_newlines`."
)


# --------------------------------------------------------------------------- children


# The children are started by a small helper process (`python -E -S`, a few modules), not by
# this one: on Linux a child started with vfork (what subprocess uses) inherits this process's
# RSS high-water mark into its own ru_maxrss at exec, and a plain fork its current RSS. From the
# helper, the floor is the helper's few MiB, under any Python child's own peak. The helper also
# takes the wall time, from just before fork to the reap, so the pipe to it costs nothing.
HELPER = r"""
import json, os, signal, sys, time

def run(req):
    argv, env, data = req["argv"], req["env"], req["stdin"].encode("latin-1")
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_fd = os.open(req["stderr_path"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            os.chdir(req["cwd"])
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            os.dup2(err_fd, 2)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    os.close(in_r)
    os.close(out_w)
    os.close(err_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(in_w, view):]
    except BrokenPipeError:
        pass
    os.close(in_w)
    chunks = []
    while True:
        chunk = os.read(out_r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(out_r)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "max_rss_kib": usage.ru_maxrss,
            "returncode": os.waitstatus_to_exitcode(status),
            "stdout": b"".join(chunks).decode("latin-1")}

for line in sys.stdin.buffer:
    sys.stdout.write(json.dumps(run(json.loads(line))) + "\n")
    sys.stdout.flush()
"""


@dataclass
class Sample:
    seconds: float
    max_rss_kib: int
    returncode: int
    stdout: bytes
    stderr: bytes


class Runner:
    """Runs children through the helper; one child at a time."""

    def __init__(self, python: str, tmp: Path) -> None:
        self.stderr_path = tmp / "child-stderr"
        self.helper = subprocess.Popen(
            [python, "-E", "-S", "-c", HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            cwd=tmp,
        )

    def run(self, argv: Sequence[str], env: dict[str, str], cwd: Path, stdin: bytes) -> Sample:
        assert self.helper.stdin is not None and self.helper.stdout is not None
        request = {"argv": list(argv), "env": env, "cwd": str(cwd),
                   "stdin": stdin.decode("latin-1"), "stderr_path": str(self.stderr_path)}
        self.helper.stdin.write(json.dumps(request).encode() + b"\n")
        self.helper.stdin.flush()
        line = self.helper.stdout.readline()
        if not line:
            raise RuntimeError(f"the measuring helper died (exit {self.helper.wait()})")
        reply = json.loads(line)
        return Sample(
            reply["seconds"], int(reply["max_rss_kib"]), reply["returncode"],
            reply["stdout"].encode("latin-1"), self.stderr_path.read_bytes(),
        )

    def close(self) -> None:
        if self.helper.stdin is not None:
            self.helper.stdin.close()
        if self.helper.stdout is not None:
            self.helper.stdout.close()
        self.helper.wait()


@dataclass
class Scenario:
    key: str
    label: str
    kind: str  # "baseline", "info", "no_loop" or "active"
    argv: list[str]
    cwd: Path
    stdin: bytes = b""
    expect_block: bool = False
    reset: Callable[[], None] | None = None
    verify: Callable[[], str | None] | None = None  # after a run: what is wrong, or None
    size_mb: float | None = None
    transcript_bytes: int | None = None
    runs: int = 0
    samples: list[Sample] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    decisions: set[str] = field(default_factory=set)

    def run_once(self, runner: Runner, env: dict[str, str]) -> Sample:
        if self.reset is not None:
            self.reset()
        sample = runner.run(self.argv, env, self.cwd, self.stdin)
        self.check(sample)
        if self.verify is not None and not self.failures:
            problem = self.verify()
            if problem:
                self.failures.append(problem)
        return sample

    def check(self, sample: Sample) -> None:
        if sample.returncode != 0:
            self.failures.append(f"exit status {sample.returncode}: {_tail(sample.stderr)}")
            return
        if self.kind in ("baseline", "info"):
            return
        text = sample.stdout.strip()
        output: Any = None
        if text:
            try:
                output = json.loads(text)
            except ValueError:
                self.failures.append(f"output is not JSON: {_tail(text)}")
                return
            if not isinstance(output, dict):
                self.failures.append(f"output is not a JSON object: {_tail(text)}")
                return
        # The loop goes on with additional context (or, opted out, a block).
        specific = output.get("hookSpecificOutput") if isinstance(output, dict) else None
        reason = (specific.get("additionalContext") if isinstance(specific, dict)
                  else output.get("reason") if output is not None else None)
        decision = ("none" if output is None else "continue" if reason else
                    str(output.get("decision", "other")))
        self.decisions.add(decision)
        if self.expect_block and decision != "continue":
            self.failures.append(
                f"expected the loop to continue, got {_tail(text) or 'no output'} "
                "(does the interpreter have the plugin's dependencies? use the repo venv)"
            )
        elif not self.expect_block and output is not None:
            self.warnings.append(f"unexpected output on the no-loop path: {_tail(text)}")
        if sample.stderr.strip():
            self.warnings.append(f"stderr: {_tail(sample.stderr)}")

    @property
    def median_seconds(self) -> float:
        return statistics.median(s.seconds for s in self.samples)

    @property
    def peak_mib(self) -> float:
        return max(s.max_rss_kib for s in self.samples) / 1024


def _tail(data: bytes | str, limit: int = 200) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = " ".join(text.split())
    return text if len(text) <= limit else "..." + text[-limit:]


def child_env(tmp: Path, project: Path) -> dict[str, str]:
    """The parent's environment without Python/Claude/finesse settings, HOME in the temp dir."""
    env = {
        key: value for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "CLAUDE", "FINESSE", "VIRTUAL_ENV"))
    }
    home = tmp / "home"
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        CLAUDE_PROJECT_DIR=str(project),
        CLAUDE_PLUGIN_ROOT=str(REPO_ROOT),
        CLAUDE_PLUGIN_DATA=str(home / ".claude" / "plugins" / "data" / "finesse-bench"),
        CLAUDE_CODE_SESSION_ID=SESSION_ID,
        FINESSE_RUNTIME="inherit",
        GIT_CONFIG_NOSYSTEM="1",
        # Bytecode caches go to the temp dir, not into the repo; the warm-up run fills them,
        # as the first stop of a real session fills the plugin's __pycache__.
        PYTHONPYCACHEPREFIX=str(tmp / "pycache"),
    )
    return env


# --------------------------------------------------------------------------- fixtures


def make_project(root: Path, env: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    try:
        subprocess.run(
            ["git", "init", "-q", str(root)], env=env, check=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    except (OSError, subprocess.CalledProcessError):
        (root / ".git").mkdir(exist_ok=True)  # all the hook looks for
    (root / "README.md").write_text("bench project\n")
    return root


def loop_state(session_id: str, project: Path) -> bytes:
    """A fresh active loop at iteration 1, as `ralph start` writes it."""
    now = "2026-01-05T09:00:00.000000Z"
    state = {
        "version": 1,
        "loop_id": f"20260105T090000Z-{session_id[:8]}-a1b2c3",
        "session_id": session_id,
        "project_root": str(project),
        "prompt": "Make every test in tests/ pass. Run `pytest -q` after each change.",
        "promise": PROMISE,
        "max_iterations": MAX_ITERATIONS,
        "iteration": 1,
        "verify": [],
        "prompt_file": None,
        "promise_file": None,
        "started_at": now,
        "updated_at": now,
        "iteration_started_at": now,
        "last_reply_excerpt": "",
        "iterations": [],
        "outcome": None,
        "ended_at": None,
        "end_message": "",
    }
    return json.dumps(state, indent=2).encode()


def loops_dir(project: Path) -> Path:
    return project / ".claude" / "ralph" / "loops"


def stop_input(project: Path, transcript: Path, last_message: str | None) -> bytes:
    data: dict[str, Any] = {
        "session_id": SESSION_ID,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": True,
    }
    if last_message is not None:
        data["last_assistant_message"] = last_message
    return json.dumps(data).encode()


# --------------------------------------------------------------------------- transcripts

_WORDS = (
    "def", "return", "self", "value", "None", "import", "from", "tests", "parser", "token",
    "line", "index", "error", "assert", "config", "path", "file", "data", "result", "items",
    "key", "state", "json", "yield", "raise", "class", "async", "await", "with", "for",
    "while", "if", "else", "elif", "try", "except", "finally", "lambda", "print", "len",
    "range", "dict", "list", "str", "int", "the", "a", "to", "of", "and", "is", "in", "that",
    "it", "on", "was", "as", "be", "by", "this", "are", "or",
)
_LOG_LINES = (
    "PASSED", "FAILED", "ok", "E       AssertionError: assert 'caf\\u00e9' == 'café'",
    "warning: unused variable", "    at Object.<anonymous> (src/index.js:12:5)",
    "collected 412 items", "==== 3 failed, 409 passed in 4.21s ====", "✓ compiled",
)


def text_pool(rng: random.Random, size: int = 256 * 1024) -> str:
    """Pseudo tool output: code, paths, test logs, some non-ASCII and quotes."""
    lines: list[str] = []
    total = 0
    while total < size:
        roll = rng.random()
        if roll < 0.45:
            indent = " " * (4 * rng.randint(0, 3))
            line = indent + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 14)))
        elif roll < 0.7:
            parts = [rng.choice(_WORDS) for _ in range(rng.randint(2, 5))]
            line = f"src/{'/'.join(parts)}.py:{rng.randint(1, 900)}: {rng.choice(_LOG_LINES)}"
        elif roll < 0.9:
            line = f'    "{rng.choice(_WORDS)}": "{rng.choice(_WORDS)}\\t{rng.random():.6f}",'
        else:
            line = rng.choice(_LOG_LINES)
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


class TranscriptWriter:
    """Writes JSONL lines shaped like Claude Code's: one line per assistant content block."""

    def __init__(self, path: Path, project: Path, rng: random.Random, max_output: int) -> None:
        self.max_output = max_output
        self.handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.project = project
        self.rng = rng
        self.pool = text_pool(rng)
        self.parent: str | None = None
        self.clock = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def close(self) -> int:
        size = self.handle.tell()
        self.handle.close()
        return size

    @property
    def size(self) -> int:
        return self.handle.tell()

    def chunk(self, length: int) -> str:
        pool = self.pool
        pieces: list[str] = []
        while length > 0:
            start = self.rng.randrange(len(pool))
            piece = pool[start:start + length]
            pieces.append(piece)
            length -= len(piece)
        return "".join(pieces)

    def _id(self, prefix: str = "") -> str:
        value = uuid.UUID(int=self.rng.getrandbits(128), version=4)
        return f"{prefix}{value.hex[:24]}" if prefix else str(value)

    def _base(self, kind: str) -> dict[str, Any]:
        self.clock += timedelta(milliseconds=self.rng.randint(50, 9000))
        entry_id = self._id()
        entry = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(self.project),
            "sessionId": SESSION_ID,
            "version": CLAUDE_VERSION,
            "gitBranch": "main",
            "type": kind,
            "uuid": entry_id,
            "timestamp": self.clock.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.clock:%f}"[:3] + "Z",
        }
        self.parent = entry_id
        return entry

    def write(self, entry: dict[str, Any]) -> None:
        self.handle.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")

    def user_prompt(self, text: str, *, meta: bool = False) -> None:
        entry = self._base("user")
        entry["message"] = {"role": "user", "content": text}
        if meta:
            entry["isMeta"] = True
        self.write(entry)

    def assistant(self, blocks: list[dict[str, Any]]) -> None:
        """One message: one line per content block, all sharing message.id."""
        message_id = self._id("msg_01")
        request_id = self._id("req_011")
        for index, block in enumerate(blocks):
            entry = self._base("assistant")
            entry["requestId"] = request_id
            entry["message"] = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [block],
                "stop_reason": None if index < len(blocks) - 1 else "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": self.rng.randint(3, 12),
                    "cache_creation_input_tokens": self.rng.randint(0, 4000),
                    "cache_read_input_tokens": self.rng.randint(10_000, 150_000),
                    "output_tokens": self.rng.randint(20, 2000),
                    "service_tier": "standard",
                },
            }
            self.write(entry)

    def thinking(self) -> dict[str, Any]:
        return {
            "type": "thinking",
            "thinking": self.chunk(self.rng.randint(200, 3000)),
            "signature": self._id("Eq") * 8,
        }

    def text(self, text: str | None = None) -> dict[str, Any]:
        return {"type": "text", "text": text or self.chunk(self.rng.randint(80, 1200))}

    def tool_round(self) -> None:
        tool_id = self._id("toolu_01")
        name = self.rng.choice(("Bash", "Bash", "Read", "Grep", "Edit"))
        command = f"pytest -q tests/{self.rng.choice(_WORDS)}_test.py"
        blocks = [self.text(), {
            "type": "tool_use", "id": tool_id, "name": name,
            "input": {"command": command, "description": "Run the failing tests"},
        }]
        if self.rng.random() < 0.6:
            blocks.insert(0, self.thinking())
        self.assistant(blocks)
        output = self.chunk(min(self.output_size(), self.max_output))
        entry = self._base("user")
        entry["message"] = {"role": "user", "content": [
            {"tool_use_id": tool_id, "type": "tool_result", "content": output, "is_error": False},
        ]}
        if name == "Read":
            entry["toolUseResult"] = {"type": "text", "file": {
                "filePath": str(self.project / "src" / "parser.py"), "content": output,
                "numLines": output.count("\n") + 1, "startLine": 1,
                "totalLines": output.count("\n") + 1,
            }}
        else:
            entry["toolUseResult"] = {
                "stdout": output, "stderr": "", "interrupted": False, "isImage": False,
            }
        self.write(entry)
        if self.rng.random() < 0.25:
            self.attachment()

    def output_size(self) -> int:
        roll = self.rng.random()
        if roll < 0.50:
            return self.rng.randint(200, 2_000)
        if roll < 0.85:
            return self.rng.randint(2_000, 30_000)
        if roll < 0.97:
            return self.rng.randint(30_000, 120_000)
        return self.rng.randint(300_000, 1_500_000)  # a big file read whole, a long log

    def attachment(self) -> None:
        entry = self._base("attachment")
        entry["attachment"] = {
            "type": "todo_reminder",
            "content": [{"content": "Fix the writer", "status": "in_progress"}],
            "itemCount": 1,
        }
        self.write(entry)

    def system(self, subtype: str, content: str) -> None:
        entry = self._base("system")
        entry.update(subtype=subtype, content=content, isMeta=False, level="info")
        self.write(entry)

    def turn(self, number: int, limit: int) -> None:
        """A user prompt (or the Stop hook's feedback), tool rounds, a closing reply; the
        tool rounds stop early once the file reaches `limit` bytes."""
        if number == 0:
            self.user_prompt("/ralph-loop Make every test in tests/ pass --completion-promise "
                             f"'{PROMISE}' --max-iterations {MAX_ITERATIONS}")
        else:
            self.system("stop_hook_summary", "Stop hook: finesse (1 hook, blocked)")
            self.user_prompt(
                f"Stop hook feedback:\nRalph iteration {number + 1}/{MAX_ITERATIONS}: output "
                f"<promise>{PROMISE}</promise> only when it is completely true\n\nMake every "
                "test in tests/ pass.", meta=True,
            )
        for _ in range(self.rng.randint(1, 6)):
            self.tool_round()
            if self.size >= limit:
                break
        self.assistant([self.text()])


def build_transcript(path: Path, project: Path, size: int, seed: int = 7) -> int:
    """A session transcript of about `size` bytes ending with an assistant text line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = TranscriptWriter(path, project, random.Random(seed), max(2_000, size // 20))
    try:
        number = 0
        while writer.size < size:
            writer.turn(number, size)
            number += 1
        writer.system("stop_hook_summary", "Stop hook: finesse (1 hook, blocked)")
        writer.user_prompt("Stop hook feedback:\nRalph iteration ...", meta=True)
        writer.tool_round()
        writer.assistant([writer.thinking(), writer.text(FINAL_REPLY)])
    finally:
        written = writer.close()
    return written


# --------------------------------------------------------------------------- the run


def size_label(mb: float) -> str:
    return f"{mb:g} MB"


def parse_sizes(text: str) -> list[float]:
    sizes = sorted({float(part) for part in text.split(",") if part.strip()})
    if not sizes or sizes[0] <= 0:
        raise argparse.ArgumentTypeError("sizes are positive numbers of MB, e.g. 1,10,100")
    return sizes


def build_scenarios(tmp: Path, python: str, sizes: list[float]) -> tuple[
    list[Scenario], dict[str, dict[str, str]]
]:
    envs: dict[str, dict[str, str]] = {}
    setup_env = child_env(tmp, tmp)
    empty = make_project(tmp / "projects" / "no-loops", setup_env)
    other = make_project(tmp / "projects" / "other-loop", setup_env)
    active = make_project(tmp / "projects" / "active", setup_env)
    loops_dir(other).mkdir(parents=True)
    (loops_dir(other) / f"{OTHER_SESSION_ID}.json").write_bytes(loop_state(OTHER_SESSION_ID, other))
    loops_dir(active).mkdir(parents=True)
    state_file = loops_dir(active) / f"{SESSION_ID}.json"
    fresh_state = loop_state(SESSION_ID, active)

    def reset() -> None:
        state_file.write_bytes(fresh_state)

    def verify() -> str | None:
        """The loop went on to iteration 2 and recorded the transcript's last reply."""
        try:
            saved = json.loads(state_file.read_bytes())
            iteration, seen = saved["iteration"], saved["iterations"][-1]["reply_excerpt"]
        except (OSError, ValueError, KeyError, IndexError, TypeError) as err:
            return f"the loop state after the run is not as expected: {err!r}"
        if iteration != 2 or not seen.startswith(FINAL_REPLY[:60]):
            return (f"the hook did not continue with the final reply (iteration {iteration}, "
                    f"reply seen {seen[:60]!r})")
        return None

    hook = [python, "-S", str(LAUNCHER), "stop"]
    transcripts = tmp / "home" / ".claude" / "projects"
    scenarios = [
        Scenario("bare", "bare start-up (PY -c pass)", "baseline", [python, "-c", "pass"], empty),
        Scenario("bare_no_site", "bare -S start-up (PY -S -c pass) [info]", "info",
                 [python, "-S", "-c", "pass"], empty),
        Scenario("no_loop", "no-loop: project without loops", "no_loop", hook, empty,
                 stdin=stop_input(empty, transcripts / "none.jsonl", FINAL_REPLY)),
        Scenario("other_loop", "no-loop: another session's loop", "no_loop", hook, other,
                 stdin=stop_input(other, transcripts / "none.jsonl", FINAL_REPLY)),
    ]
    envs["bare"] = envs["bare_no_site"] = envs["no_loop"] = child_env(tmp, empty)
    envs["other_loop"] = child_env(tmp, other)
    active_env = child_env(tmp, active)
    first_transcript: Path | None = None
    for mb in sizes:
        path = transcripts / f"active-{mb:g}MB" / f"{SESSION_ID}.jsonl"
        written = build_transcript(path, active, int(mb * MB))
        first_transcript = first_transcript or path
        key = f"active_{mb:g}mb"
        scenarios.append(Scenario(
            key, f"active, transcript {size_label(mb)} (tail read)", "active", hook, active,
            stdin=stop_input(active, path, None), expect_block=True, reset=reset, verify=verify,
            size_mb=mb, transcript_bytes=written,
        ))
        envs[key] = active_env
    assert first_transcript is not None
    scenarios.append(Scenario(
        "active_message", "active, last_assistant_message given", "active", hook, active,
        stdin=stop_input(active, first_transcript, FINAL_REPLY), expect_block=True, reset=reset,
        verify=verify,
    ))
    envs["active_message"] = active_env
    return scenarios, envs


def measure(runner: Runner, scenarios: list[Scenario], envs: dict[str, dict[str, str]],
            runs: int, budget: float) -> None:
    """One warm-up run each (pyc files, page cache), then the runs, round-robin. A scenario
    whose first counted run is slow gets fewer runs, so that it takes about `budget` seconds."""
    for scenario in scenarios:
        scenario.run_once(runner, envs[scenario.key])
    for scenario in scenarios:
        first = scenario.run_once(runner, envs[scenario.key])
        scenario.samples.append(first)
        affordable = int(budget / max(first.seconds, 1e-6))
        scenario.runs = max(1, min(runs, max(MIN_RUNS, affordable)))
    for index in range(1, max(s.runs for s in scenarios)):
        for scenario in scenarios:
            if index < scenario.runs:
                scenario.samples.append(scenario.run_once(runner, envs[scenario.key]))


def evaluate(scenarios: list[Scenario]) -> list[dict[str, Any]]:
    by_key = {s.key: s for s in scenarios}
    bare = by_key["bare"].median_seconds
    targets: list[dict[str, Any]] = []
    for s in scenarios:
        ratio = s.median_seconds / bare
        if s.kind == "no_loop":
            targets.append({"name": f"{s.label} <= {NO_LOOP_MAX_RATIO}x bare", "key": s.key,
                            "value": round(ratio, 2), "limit": NO_LOOP_MAX_RATIO,
                            "pass": ratio <= NO_LOOP_MAX_RATIO})
    for s in scenarios:
        ratio = s.median_seconds / bare
        if s.kind == "active":
            targets.append({"name": f"{s.label} <= {ACTIVE_MAX_RATIO}x bare", "key": s.key,
                            "value": round(ratio, 2), "limit": ACTIVE_MAX_RATIO,
                            "pass": ratio <= ACTIVE_MAX_RATIO})
    sized = [s for s in scenarios if s.size_mb is not None]
    if len(sized) >= 2:
        small, big = sized[0], sized[-1]
        drift = big.median_seconds / small.median_seconds - 1
        fastest = min(x.seconds for x in big.samples) / min(x.seconds for x in small.samples)
        targets.append({
            "min_based": round(fastest - 1, 4),
            "name": f"{size_label(big.size_mb or 0)} within {SIZE_DRIFT_MAX:.0%} of "
                    f"{size_label(small.size_mb or 0)} (active, tail read)",
            "key": "size_drift", "value": round(drift, 4), "limit": SIZE_DRIFT_MAX,
            "pass": abs(drift) <= SIZE_DRIFT_MAX,
        })
    if sized:
        big = sized[-1]
        targets.append({
            "name": f"peak memory < {PEAK_MIB_MAX:g} MiB at {size_label(big.size_mb or 0)}",
            "key": "peak_memory", "value": round(big.peak_mib, 1), "limit": PEAK_MIB_MAX,
            "pass": big.peak_mib < PEAK_MIB_MAX,
        })
    return targets


def tail_read_in_process(scenarios: list[Scenario], repeats: int = 21) -> dict[str, float]:
    """The transcript tail read alone, in this process: what the size itself costs."""
    scripts = str(REPO_ROOT / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    from finesse.support.transcript import last_assistant_text  # standard library only

    timings: dict[str, float] = {}
    for scenario in scenarios:
        if scenario.size_mb is None:
            continue
        path = Path(json.loads(scenario.stdin)["transcript_path"])
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            last_assistant_text(path)
            times.append(time.perf_counter() - start)
        timings[size_label(scenario.size_mb)] = round(statistics.median(times) * 1000, 3)
    return timings


def importtime(runner: Runner, scenario: Scenario, env: dict[str, str], top: int = 15,
               ) -> dict[str, Any]:
    """`PY -S -X importtime hooks/stop.py` on an active path: what its imports cost."""
    argv = [scenario.argv[0], "-X", "importtime", *scenario.argv[1:]]
    if scenario.reset is not None:
        scenario.reset()
    sample = runner.run(argv, env, scenario.cwd, scenario.stdin)
    rows: list[tuple[int, int, int, str]] = []  # self us, cumulative us, depth, name
    for line in sample.stderr.decode("utf-8", "replace").splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3:
            continue
        name = parts[2].rstrip()
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        rows.append((int(parts[0]), int(parts[1]), depth, name.strip()))
    by_package: dict[str, int] = {}
    for own, _, _, name in rows:
        package = name.split(".")[0]
        by_package[package] = by_package.get(package, 0) + own
    top_level = sorted((r for r in rows if r[2] == 0), key=lambda r: -r[1])
    return {
        "scenario": scenario.key,
        "wall_ms": round(sample.seconds * 1000, 1),
        "total_import_ms": round(sum(r[0] for r in rows) / 1000, 1),
        "modules": len(rows),
        "top_level_cumulative_ms": [[r[3], round(r[1] / 1000, 1)] for r in top_level[:top]],
        "self_by_package_ms": [
            [name, round(us / 1000, 1)]
            for name, us in sorted(by_package.items(), key=lambda item: -item[1])[:top]
        ],
        "top_self_ms": [
            [r[3], round(r[0] / 1000, 1)] for r in sorted(rows, key=lambda r: -r[0])[:top]
        ],
    }


# --------------------------------------------------------------------------- report


def report_json(python: str, args: argparse.Namespace, scenarios: list[Scenario],
                targets: list[dict[str, Any]], notes: list[str],
                imports: dict[str, Any] | None) -> dict[str, Any]:
    bare = next(s for s in scenarios if s.key == "bare").median_seconds
    failures = [f"{s.key}: {f}" for s in scenarios for f in dict.fromkeys(s.failures)]
    figures = []
    for s in scenarios:
        figures.append({
            "key": s.key, "label": s.label, "kind": s.kind, "size_mb": s.size_mb,
            "transcript_bytes": s.transcript_bytes, "runs": len(s.samples),
            "median_ms": round(s.median_seconds * 1000, 2),
            "min_ms": round(min(x.seconds for x in s.samples) * 1000, 2),
            "max_ms": round(max(x.seconds for x in s.samples) * 1000, 2),
            "ratio": round(s.median_seconds / bare, 2),
            "peak_rss_mib": round(s.peak_mib, 1),
            "all_valid": not s.failures,
            "decisions": sorted(s.decisions),
            "warnings": sorted(set(s.warnings)),
        })
    result: dict[str, Any] = {
        "python": python,
        "python_version": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "runs": args.runs,
        "sizes_mb": args.sizes,
        "baseline_ms": round(bare * 1000, 2),
        "scenarios": figures,
        "targets": targets,
        "reference": {"text": REFERENCE, "ratios": REFERENCE_RATIOS},
        "notes": notes,
        "failures": failures,
        "ok": not failures,
    }
    if imports is not None:
        result["importtime"] = imports
    return result


def print_table(data: dict[str, Any]) -> None:
    print(f"finesse Stop hook benchmark: {data['python']} (Python {data['python_version']}), "
          f"{data['cpus']} CPUs, {data['runs']} runs (median)")
    print(f"{'scenario':<50} {'runs':>4} {'median ms':>10} {'min ms':>8} {'x bare':>7} "
          f"{'peak MiB':>9}")
    for s in data["scenarios"]:
        label = s["label"]
        if s["transcript_bytes"]:
            label += f" [{s['transcript_bytes'] / MB:.2f} MB]"
        print(f"{label:<50} {s['runs']:>4} {s['median_ms']:>10.1f} {s['min_ms']:>8.1f} "
              f"{s['ratio']:>6.2f}x {s['peak_rss_mib']:>9.1f}")
    print()
    print("targets")
    for t in data["targets"]:
        if t["key"] == "size_drift":
            value = f"{t['value']:+.1%} (fastest runs: {t['min_based']:+.1%})"
        elif t["key"] == "peak_memory":
            value = f"{t['value']:.1f} MiB"
        else:
            value = f"{t['value']:.2f}x"
        print(f"  {'PASS' if t['pass'] else 'FAIL'}  {t['name']}: {value}")
    print()
    print(f"reference: {data['reference']['text']}")
    for note in data["notes"]:
        print(f"note: {note}")
    for s in data["scenarios"]:
        for warning in s["warnings"]:
            print(f"warning: {s['key']}: {warning}")
    imports = data.get("importtime")
    if imports:
        print()
        print(f"-X importtime, {imports['scenario']}: {imports['modules']} modules, "
              f"{imports['total_import_ms']} ms in imports (run took {imports['wall_ms']} ms "
              "with importtime's own overhead)")
        print("  top-level imports, cumulative ms:")
        for name, ms in imports["top_level_cumulative_ms"]:
            print(f"    {ms:>8.1f}  {name}")
        print("  self time by top package, ms:")
        for name, ms in imports["self_by_package_ms"]:
            print(f"    {ms:>8.1f}  {name}")
    for failure in data["failures"]:
        print(f"HOOK FAILURE: {failure}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                        help=f"runs per scenario, median reported (default {DEFAULT_RUNS})")
    parser.add_argument("--sizes", type=parse_sizes, default=parse_sizes(DEFAULT_SIZES),
                        help=f"transcript sizes in MB, comma-separated (default {DEFAULT_SIZES})")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET_SECONDS,
                        help="seconds per scenario; a slower one gets fewer runs "
                             f"(at least {MIN_RUNS}; default {DEFAULT_BUDGET_SECONDS:g})")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter the hook runs under (default: this one)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--importtime", action="store_true",
                        help="also break down the active path's imports with -X importtime")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    with tempfile.TemporaryDirectory(prefix="finesse-bench-") as tmp_name:
        tmp = Path(tmp_name)
        started = time.perf_counter()
        load_before = os.getloadavg()[0]
        scenarios, envs = build_scenarios(tmp, args.python, args.sizes)
        built = time.perf_counter() - started
        runner = Runner(args.python, tmp)
        try:
            measure(runner, scenarios, envs, args.runs, args.budget)
            tail_reads = tail_read_in_process(scenarios)
            imports = None
            if args.importtime:
                active = next(s for s in scenarios if s.key == "active_message")
                imports = importtime(runner, active, envs[active.key])
        finally:
            runner.close()
        elapsed = time.perf_counter() - started
        load_after = os.getloadavg()[0]
    notes = [
        f"transcripts built in {built:.1f} s; whole run {elapsed:.1f} s; 1-min load average "
        f"{load_before:.2f} before, {load_after:.2f} after (other work on the machine adds noise)",
    ]
    for s in scenarios:
        if len(s.samples) < args.runs:
            notes.append(f"{s.key}: {len(s.samples)} runs instead of {args.runs} "
                         f"(one run took long; --budget {args.budget:g} s per scenario)")
    notes.append("in-process tail read (transcript.last_assistant_text), median ms: "
                 + ", ".join(f"{size} {ms:.3f}" for size, ms in tail_reads.items()))
    notes.append("peak MiB is the child's max RSS (os.wait4), interpreter included; "
                 "each scenario had one warm-up run first (not counted)")
    targets = evaluate(scenarios)
    data = report_json(args.python, args, scenarios, targets, notes, imports)
    data["tail_read_in_process_ms"] = tail_reads
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print_table(data)
    return 0 if data["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
