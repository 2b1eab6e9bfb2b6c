"""The scenarios of one run, for each checkout measured, on shared transcripts.

Per checkout: the no-loop paths (a project without loops, a project where another session
has a loop); the active path (this session's loop continues) with only `transcript_path`
given, at every size, the loop holding no cursor, so the hook reads the transcript's tail;
with `last_assistant_message` given; with a usage cursor at the start of the last iteration
(`usage_*`: the loop file must then hold that iteration's exact token totals); and the worst
case (`transcripts.worst_case`) with a cursor about 200 KB back and with none, at the
smallest and largest size. Each checkout has its own projects; every run starts from a
fresh loop file its schema accepts, and is checked afterwards (see `expect`).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stop_hook.children import child_env
from stop_hook.roots import PluginRoot
from stop_hook.scenario import Scenario, Unsupported
from stop_hook.settings import (
    FINAL_REPLY,
    MAX_ITERATIONS,
    MB,
    OTHER_SESSION_ID,
    PROMISE,
    SESSION_ID,
    size_label,
)
from stop_hook.transcripts import Transcript, ordinary, worst_case


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


def loop_fields(session_id: str, project: Path, cursor: Transcript | None = None,
                ) -> dict[str, Any]:
    """A fresh active loop at iteration 1, as `ralph start` writes it; with `cursor`, the
    previous stop read the transcript up to its mark."""
    now = "2026-01-05T09:00:00.000000Z"
    state: dict[str, Any] = {
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
    if cursor is not None:
        state.update(transcript_offset=cursor.mark, transcript_identity=cursor.identity,
                     recent_message_ids=list(cursor.recent_ids))
    return state


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


@dataclass(frozen=True)
class Expect:
    """What the loop file must hold after a run, beyond iteration 2 and the final reply."""

    transcript: Transcript | None = None  # the tool calls (at least one) were counted in it
    tokens: bool = False  # the iteration's usage is the transcript's, after its mark, exactly
    cursor_at_end: bool = False  # the loop's cursor now points at the transcript's end


def expect(state_file: Path, wanted: Expect) -> Callable[[], str | None]:
    def verify() -> str | None:
        try:
            saved = json.loads(state_file.read_bytes())
            iteration, last = saved["iteration"], saved["iterations"][-1]
            seen, calls = last["reply_excerpt"], last["tool_calls"]
            usage = {u["model"]: {k: u[k] for k in ("input", "output", "cache_creation",
                                                    "cache_read")}
                     for u in last.get("usage", [])}
        except (OSError, ValueError, KeyError, IndexError, TypeError) as err:
            return f"the loop state after the run is not as expected: {err!r}"
        if iteration != 2 or not seen.startswith(FINAL_REPLY[:60]):
            return (f"the hook did not continue with the final reply (iteration {iteration}, "
                    f"reply seen {seen[:60]!r})")
        if wanted.transcript is not None and not (isinstance(calls, int) and calls >= 1):
            return f"the iteration's tool calls were not counted: {calls!r}"
        if wanted.tokens and wanted.transcript is not None:
            if usage != wanted.transcript.tokens or last.get("usage_partial"):
                return (f"usage recorded {usage} (partial: {last.get('usage_partial')}), "
                        f"written {wanted.transcript.tokens}")
            if calls != wanted.transcript.tool_calls:
                return f"tool calls recorded {calls}, written {wanted.transcript.tool_calls}"
        offset = (saved.get("cursor") or {}).get("offset", saved.get("transcript_offset"))
        if (wanted.cursor_at_end and wanted.transcript is not None
                and offset != wanted.transcript.size):
            return (f"the cursor is at {offset}, the transcript ends at "
                    f"{wanted.transcript.size}")
        return None

    return verify


def _writes(path: Path, data: bytes) -> Callable[[], None]:
    def reset() -> None:
        path.write_bytes(data)

    return reset


def build_transcripts(tmp: Path, sizes: list[float]) -> tuple[
    dict[float, Transcript], dict[float, Transcript]
]:
    """Ordinary transcripts at every size; worst-case ones at the smallest and largest."""
    folder = tmp / "home" / ".claude" / "projects"
    project = tmp / "projects" / "main" / "active"
    plain = {mb: ordinary(folder / f"active-{mb:g}MB" / f"{SESSION_ID}.jsonl", project,
                          int(mb * MB)) for mb in sizes}
    worst = {mb: worst_case(folder / f"worst-{mb:g}MB" / f"{SESSION_ID}.jsonl", project,
                            int(mb * MB)) for mb in sorted({sizes[0], sizes[-1]})}
    return plain, worst


def build_scenarios(tmp: Path, python: str, roots: list[PluginRoot],
                    plain: dict[float, Transcript], worst: dict[float, Transcript],
                    other_floor: str | None = None,
                    ) -> tuple[list[Scenario], list[Unsupported]]:
    scenarios: list[Scenario] = []
    unsupported: list[Unsupported] = []
    for root in roots:
        built, missing = _for_root(tmp, python, root, plain, worst, other_floor)
        scenarios += built
        unsupported += missing
    return scenarios, unsupported


def _for_root(tmp: Path, python: str, root: PluginRoot, plain: dict[float, Transcript],
              worst: dict[float, Transcript], other_floor: str | None,
              ) -> tuple[list[Scenario], list[Unsupported]]:
    base = tmp / "projects" / root.name
    setup_env = child_env(tmp, tmp, root.path)
    empty = make_project(base / "no-loops", setup_env)
    other = make_project(base / "other-loop", setup_env)
    active = make_project(base / "active", setup_env)
    loops_dir(other).mkdir(parents=True)
    (loops_dir(other) / f"{OTHER_SESSION_ID}.json").write_bytes(
        root.state(loop_fields(OTHER_SESSION_ID, other)))
    loops_dir(active).mkdir(parents=True)
    state_file = loops_dir(active) / f"{SESSION_ID}.json"
    hook = root.hook_argv(python)
    env = child_env(tmp, active, root.path)
    none = tmp / "home" / ".claude" / "projects" / "none.jsonl"

    def scenario(key: str, label: str, transcript: Transcript, message: str | None,
                 cursor: bool, wanted: Expect, family: str | None, mb: float | None,
                 ) -> Scenario:
        fresh = root.state(loop_fields(SESSION_ID, active, transcript if cursor else None))
        return Scenario(
            key, label, "active", hook, active, env,
            stdin=stop_input(active, transcript.path, message), expect_block=True,
            reset=_writes(state_file, fresh),
            verify=expect(state_file, wanted), size_mb=mb, transcript_bytes=transcript.size,
            new_bytes=transcript.size - transcript.mark if cursor else None, family=family,
            root=root.name,
        )

    built: list[Scenario] = []
    if root.name == "main":
        main_env = child_env(tmp, empty, root.path)
        built += [
            Scenario("bare", "bare start-up (PY -c pass)", "baseline", [python, "-c", "pass"],
                     empty, main_env),
            Scenario("bare_no_site", "bare -S start-up (PY -S -c pass) [info]", "info",
                     [python, "-S", "-c", "pass"], empty, main_env),
        ]
        if other_floor is not None:
            built.append(Scenario("bare_other", f"bare start-up of {other_floor}", "baseline",
                                  [other_floor, "-c", "pass"], empty, main_env))
    built += [
        Scenario("no_loop", "no-loop: project without loops", "no_loop", hook, empty,
                 child_env(tmp, empty, root.path),
                 stdin=stop_input(empty, none, FINAL_REPLY), root=root.name),
        Scenario("other_loop", "no-loop: another session's loop", "no_loop", hook, other,
                 child_env(tmp, other, root.path),
                 stdin=stop_input(other, none, FINAL_REPLY), root=root.name),
    ]
    for mb, transcript in plain.items():
        built.append(scenario(
            f"active_{mb:g}mb", f"active, transcript {size_label(mb)} (tail read)",
            transcript, None, False, Expect(transcript, False, root.has_cursor), "active", mb))
    first = plain[min(plain)]
    built.append(scenario("active_message", "active, last_assistant_message given", first,
                          FINAL_REPLY, False, Expect(first, False, root.has_cursor), None, None))
    missing: list[Unsupported] = []
    for mb, transcript in plain.items():
        if mb not in worst:
            continue
        key, label = f"usage_{mb:g}mb", f"active, cursor, usage read, {size_label(mb)}"
        if root.records_usage:
            built.append(scenario(key, label, transcript, FINAL_REPLY, True,
                                  Expect(transcript, True, True), "usage", mb))
        else:
            missing.append(Unsupported(key, label, root.name, "no usage reader (its LoopState "
                                       "has no transcript cursor)", mb, "usage"))
    for mb, transcript in worst.items():
        key, label = f"worst_cursor_{mb:g}mb", f"worst case {size_label(mb)}, cursor"
        if root.records_usage:
            built.append(scenario(key, label, transcript, FINAL_REPLY, True,
                                  Expect(transcript, True, True), "worst_cursor", mb))
        else:
            missing.append(Unsupported(key, label, root.name, "no transcript cursor in its "
                                       "LoopState (see the no-cursor row)", mb,
                                       "worst_cursor"))
        built.append(scenario(
            f"worst_no_cursor_{mb:g}mb", f"worst case {size_label(mb)}, no cursor", transcript,
            FINAL_REPLY, False, Expect(transcript, False, root.has_cursor), "worst_no_cursor",
            mb))
    return built, missing
