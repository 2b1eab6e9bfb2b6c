"""The loop's notebook: the written plan (`--plan`) or a `tasks/todo.md` with the seed's
headings. After each iteration its entry goes under `## Attempts`; at the end, notes and the
review under `## Review`. Every other byte of the file stays as the user wrote it. Each edit
is idempotent (an iteration's entry, a note, is written once, however often a stop killed
half-way runs again; the review is replaced), and the file is written through a link, its
mode kept."""

from __future__ import annotations

from pathlib import Path

from finesse.errors import FinesseError
from finesse.loop.todo import edit as todo
from finesse.models import IterationRecord, LoopState
from finesse.record import replace
from finesse.state.store import LoopStore
from finesse.support import git as gitstate
from finesse.support.files import read_text, shown_name
from finesse.support.writes import remove_stale_temps, write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from finesse.loop.final_report import EndFacts


def notebook_path(store: LoopStore, state: LoopState) -> Path | None:
    if not state.notebook:
        return None
    path = Path(state.notebook)
    return path if path.is_absolute() else store.paths.root / path


def edit(store: LoopStore, state: LoopState, change: list[tuple[str, str]]) -> None:
    """Apply notebook edits (("attempt" | "note" | "review", markdown)); a file that vanished
    or cannot be written is logged, never fatal: the loop's record is in its state anyway."""
    path = notebook_path(store, state)
    if path is None or not change:
        return
    try:
        text = read_text(path, subject=str(path))
        before = text
        for kind, markdown in change:
            if kind == "attempt":
                text = _noted(text, markdown, f"{state.started_at:%Y-%m-%d %H:%M}")
            elif kind == "note":
                if not _has_note(text, markdown):
                    text = todo.append_review_note(text, markdown)
            else:
                text = todo.write_review(text, markdown)
        if text != before:
            # The temp file in the plugin's own folder: a kill before the rename leaves
            # nothing in the project that a commit could pick up (and the next write
            # removes what a killed one left there).
            remove_stale_temps(store.paths.temp)
            write_atomic(path, text, temp_dir=store.paths.temp)  # and any temp beside the plan
    except (OSError, UnicodeDecodeError, FinesseError) as err:
        store.log(f"loop {state.loop_id}: could not write the plan {path}: {err}")


def _noted(text: str, entry: str, since: str) -> str:
    """The plan with this iteration's entry: appended, or in place of the one this loop
    wrote for it already (a stop killed after writing it, before its record was saved, ran
    again and recorded it as it saw it then): every iteration is noted once, as recorded."""
    span = todo.attempt_span(text, entry.split("(", 1)[0] + "(", since)
    if span is None:
        return todo.append_attempt(text, entry)
    return todo.replace_attempt(text, span, entry)


def _has_note(text: str, note: str) -> bool:
    first = next((line.strip() for line in note.splitlines() if line.strip()), "")
    return bool(first) and any(line.strip() in (f"- {first}", first)
                               for line in text.splitlines())


def record_iteration(store: LoopStore, state: LoopState, record: IterationRecord,
                     notes: list[str]) -> LoopState:
    """After an iteration that goes on: its entry in the plan, and the working tree's new
    fingerprint, taken after that write so the plugin's own edit never counts as change."""
    if not state.notebook:
        return state
    edit(store, state, [("attempt", attempt_entry(record)),
                              *(("note", note) for note in notes)])
    return replace(state, tree_fingerprint=gitstate.tree_fingerprint(store.paths.root))




def attempt_entry(entry: IterationRecord) -> str:
    """The notebook's `## Attempts` entry for one iteration (seed 001: approach, evidence,
    learning, next action)."""
    lines = [f"### Iteration {entry.number} ({entry.ended_at:%Y-%m-%d %H:%M} UTC)",
             f"- Result: {entry.result}"]
    for label, value in (("Approach", entry.approach), ("Evidence", entry.evidence),
                         ("Learning", entry.learning), ("Next", entry.next_action)):
        if value:
            lines.append(f"- {label}: {value}")
    for result in entry.verification:
        status = "green" if result.passed else (
            "timed out" if result.timed_out else f"red (exit {result.exit_code})")
        lines.append(f"- Verifier: `{result.command}` {status}")
    return "\n".join(lines) + "\n"


def review_text(state: LoopState, facts: EndFacts) -> str:
    """The notebook's `## Review` at the end of the loop (seed 001's four parts)."""
    from finesse.loop import final_report  # only at an end: the report imports the git door

    lines = [f"Loop `{state.loop_id}` ended: {final_report.title(state)} - {state.end_message}", "",
             "Changes made:"]
    lines += [f"- `{shown_name(name)}`" for name in facts.files] or ["- none"]
    lines += ["", "Verification evidence:"]
    lines += final_report.verification_lines(state.last_verification, output=False)
    lines += ["", "Skipped checks:"]
    skipped = [f"- `{command}` (not green at the end)"
               for command in final_report.skipped_checks(state)]
    if not state.verify and state.outcome == "success":
        skipped.append("- every check: no verification command was given, so the success "
                       "rests on the agent's word (unverified)")
    lines += skipped or ["- none"]
    lines += ["", "Remaining blockers:", f"- {state.blocker}" if state.blocker else "- none"]
    return "\n".join(lines) + "\n"
