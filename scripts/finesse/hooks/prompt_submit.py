"""UserPromptSubmit hook: our slash commands, answered in Python before the model sees them.

`/ralph-loop` is parsed and validated here; a bad one is blocked with one line saying what
to type, and the model is never called. Status, cancel, abort and help are answered here
too, by blocking the prompt with the answer (`output.answer`): deterministic, no model call.

A loop and Claude Code's `/goal` both drive the Stop hook (seed 001: never both in one
session). A loop does not start while the session's transcript shows an active goal; a
`/goal CONDITION` typed while a loop runs cannot be stopped by a hook (the goal is set
before hooks run), so the loop ends, and says why, rather than fight it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO, TextIO

from finesse.errors import FinesseError, UsageError
from finesse.hooks.boundary import run_hook
from finesse.hooks.output import HookOutput, add_context, answer, block, tell_user
from finesse.loop.grammar import (
    SlashCommand,
    expect_no_args,
    match_command,
    parse_resume_args,
)
from finesse.loop.lifecycle import (
    cancel_loop,
    start_loop,
    stop_loop,
)
from finesse.loop.recovery import begin_start, pending, recover, withdraw
from finesse.loop.request import StartRequest, start_request
from finesse.loop.resume import latest_resumable, resume_loop
from finesse.loop.status import describe, start_context, start_notes
from finesse.models import PromptInput
from finesse.schema import SchemaError, from_json
from finesse.state.intents import Intents
from finesse.state.paths import StatePaths, find_project_root, is_valid_session_id
from finesse.state.store import LoopStore, utcnow
from finesse.support.files import is_regular_file
from finesse.support.transcript import active_goal

EVENT = "UserPromptSubmit"

HELP = """finesse Ralph loops: the same prompt again each time Claude stops, until done.
  /ralph-loop "PROMPT" [--max-iterations N] [--completion-promise TEXT]
              [--prompt-file PATH] [--completion-promise-file PATH] [--verify CMD]
      start a loop in this session (defaults: 8 iterations, promise RALPH_LOOP_STOP).
      It ends when Claude's reply holds <promise>TEXT</promise> outside code,
      or after N replies.
      More: --plan tasks/todo.md (a written plan; its Verification Commands are run
      when Claude claims completion), --verify CMD, --quiesce-after N (default 2),
      --timeout-minutes N.
      Judge mode: --judge --criteria TEXT --verify CMD [--protect PATH]: a fresh
      worker subagent per attempt, only a read-only judge subagent passes it
      (100 attempts by default).
  /ralph-status    where this session's loop is
  /cancel-ralph    stop this session's loop now
  /ralph-abort     stop it now and give it up (it cannot be resumed)
  /ralph-resume [--max-iterations N] [--timeout-minutes N]
                   reopen this session's last loop that hit a limit, quiesced,
                   timed out or was blocked
  Arguments are split like a shell's, never by a shell: quote words with spaces
  ("..." or '...'). Outside quotes a backslash escapes a quote, a space or a
  backslash; inside "..." only \\" and \\\\; inside '...' nothing. Any other
  backslash is kept: \\d+ and C:\\Users\\me stay as typed. An apostrophe between
  letters (don't, O'Brien's), or after one with no ' later (the users'), is kept.
  A quote as text: \\" or \\', or inside the other quotes: "it's", '"hi"'.
  A prompt holds at most 1 MiB, typed or read with --prompt-file PATH (the way
  for long or tricky prompts).
      When it ends: --notify desktop|URL, --notify-cmd CMD (the report's JSON on stdin).
  From a terminal: ralph status | ralph watch | ralph cancel [--session ID | --all]
                   | ralph abort | ralph report [--html] | ralph resume | ralph doctor
  Headless (CI, a fresh `claude -p` per iteration): ralph run "PROMPT" [the same
                   options] [--json] [--wait-on-limit] [--iteration-timeout 20m];
                   a decomposed plan's waves: ralph run --graph finesse-plans/NAME/
  Emergency stop for every loop of the project: create the file .claude/ralph/STOP"""


def _checked_prompt(request: StartRequest) -> list[str]:
    """`/finesse-execute` runs only prompts that pass the loop-prompt check, as this loop will
    run them (its promise and its cap), unless --force; returns the failing attribute keys
    that --force let through."""
    from finesse.authoring.prompt_check.validate import validate_prompt

    checked = validate_prompt(request.prompt, promise=request.promise,
                              max_iterations=request.max_iterations)
    failing = [attribute.key for attribute in checked.attributes if not attribute.passed]
    if failing and not request.force:
        raise UsageError(
            f"{request.prompt_file} fails the loop-prompt check ({', '.join(failing)}): fix it "
            f"(`finesse validate {request.prompt_file}` says how) or add --force"
        )
    return failing


def _transcript_of(data: PromptInput) -> Path | None:
    return Path(data.transcript_path) if data.transcript_path else None


def _refuse_goal(data: PromptInput) -> None:
    transcript = Path(data.transcript_path) if data.transcript_path else None
    if transcript is None or not is_regular_file(transcript):
        return
    goal = active_goal(transcript)
    if goal is not None:
        raise UsageError(
            f"this session has an active /goal ({goal!r}); a goal and a Ralph loop would both "
            "drive the Stop hook: type `/goal clear` first, or start the loop in a new session"
        )


def _start(store: LoopStore, data: PromptInput, command: SlashCommand) -> HookOutput:
    request = start_request(command.args, store.paths.root, command=command.name)
    forced: list[str] = []
    if command.name == "finesse-execute":
        forced = _checked_prompt(request)
    _refuse_goal(data)
    now = utcnow()
    with store.locked(data.session_id):
        recover(store, data.session_id)
        # A start is one step: the intent lets whoever comes next roll back a loop saved
        # but never told to the model; anything failing after the save rolls it back now.
        begin_start(store, data.session_id, now)
        try:
            state = start_loop(store, data.session_id, request, now, forced_past=forced,
                               transcript=_transcript_of(data))
            notes = start_notes(state, request.warnings, forced)
            told = add_context(EVENT, start_context(state), system_message="\n".join(notes))
        except BaseException as err:
            withdraw(store, data.session_id, now.isoformat(), f"its start failed ({err})")
            Intents(store.paths).clear(data.session_id)
            raise
        Intents(store.paths).clear(data.session_id)
    return told


def _resume(store: LoopStore, data: PromptInput, command: SlashCommand) -> HookOutput:
    request = parse_resume_args(command.args)
    _refuse_goal(data)
    with store.locked(data.session_id):
        recover(store, data.session_id)
        previous = latest_resumable(store, data.session_id)
        state = resume_loop(store, previous, request, utcnow(), by="/ralph-resume",
                            transcript=_transcript_of(data))
    note = (f"Ralph loop resumed at iteration {state.iteration}/{state.max_iterations} "
            f"(it had ended: {previous.outcome}).")
    return add_context(EVENT, start_context(state), system_message=note)


def _cancel(store: LoopStore, session_id: str, by: str) -> HookOutput:
    """End this session's loop now (see `lifecycle.stop_loop`)."""
    stopped = stop_loop(store, session_id, utcnow(), by)
    if stopped.requested:
        return answer("finesse: the loop's stop is busy (running its checks); the "
                     f"{'abort' if by == '/ralph-abort' else 'cancel'} is recorded and the "
                     "loop ends as soon as that stop decides.")
    if stopped.given_up is not None:
        return answer(f"finesse: the ended loop {stopped.given_up.loop_id} was aborted: it can "
                     "no longer be resumed.")
    if stopped.ended is None:
        return answer("finesse: no Ralph loop is running in this session; nothing to "
                     f"{'abort' if by == '/ralph-abort' else 'cancel'}.")
    return answer(f"finesse: {stopped.ended.end_message} Its record is in "
                 f"{store.paths.history}.")


def goal_typed(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    """`/goal CONDITION` typed in a session with a loop: the goal is set whatever a hook
    says, so the loop ends (cancelled by /goal) and the user is told why."""
    try:
        data = from_json(PromptInput, raw, strict=False)
    except SchemaError:
        return None
    if not is_valid_session_id(data.session_id):
        return None
    store = LoopStore(StatePaths(find_project_root(env, data.cwd or cwd)))
    with store.locked(data.session_id):
        ended = cancel_loop(store, data.session_id, utcnow(), by="/goal")
    if ended is None:
        return None
    return tell_user(
        f"finesse: /goal was set while a Ralph loop ran in this session; a goal and a loop "
        f"would fight over the Stop hook, so the loop {ended.loop_id} has ended (cancelled "
        "by /goal). Start it again after `/goal clear`."
    )


def _status(store: LoopStore, session_id: str) -> HookOutput:
    now = utcnow()
    scan = store.scan()
    mine = [loop for loop in scan.loops if loop.session_id == session_id]
    others = len(scan.loops) - len(mine)
    unreadable = next((line.partition(": ")[2] for line in scan.unreadable
                       if line.startswith(f"{session_id}.json: ")), "")
    lines = [describe(loop, now) for loop in mine] or [
        f"finesse: no Ralph loop is running in this session; its loop file is unreadable "
        f"({unreadable}) and stays as it is until the session's next stop moves it aside."
        if unreadable else "finesse: no Ralph loop is running in this session."
    ]
    if others:
        lines.append(f"({others} other loop(s) run in other sessions of this project: "
                     "`ralph status` lists them.)")
    lines += [f"finesse: {line}" for line in pending(store)
              if any(line.startswith(f"loop {loop.loop_id}:") for loop in mine)]
    return answer("\n".join(lines))


def handle(raw: bytes, env: Mapping[str, str], cwd: str) -> HookOutput | None:
    try:
        data = from_json(PromptInput, raw, strict=False)
    except SchemaError:
        return None
    command = match_command(data.prompt)
    if command is None:
        return None
    if not is_valid_session_id(data.session_id):
        return block(f"finesse: this session id cannot hold a loop: {data.session_id!r}")
    store = LoopStore(StatePaths(find_project_root(env, data.cwd or cwd)))
    if not store.paths.root.is_dir():  # removed since Claude Code started there
        origin = "CLAUDE_PROJECT_DIR" if env.get("CLAUDE_PROJECT_DIR") else "the cwd"
        return block(f"finesse: the project folder {store.paths.root} ({origin}) does not "
                     "exist any more: start Claude Code again in your project")
    try:
        if command.name in ("ralph-loop", "finesse-execute"):
            return _start(store, data, command)
        if command.name == "ralph-resume":
            return _resume(store, data, command)
        expect_no_args(command)
        if command.name in ("cancel-ralph", "ralph-abort"):
            return _cancel(store, data.session_id, f"/{command.name}")
        if command.name == "ralph-status":
            return _status(store, data.session_id)
        return answer(HELP)
    except FinesseError as err:
        return block(f"finesse: {err}")


def main(stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    return run_hook(EVENT, handle, stdin, stdout)

