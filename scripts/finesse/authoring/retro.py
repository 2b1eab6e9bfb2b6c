"""The retro of a plan after its loop has run: what changed since the plan's baseline commit.

Inputs, all read as they are and never changed:

- the plan, `finesse-plans/<name>-plan.md` (or a sub-workflow's `plan.md`): its baseline is
  the first line, outside code fences, of the form `baseline_commit: <sha>` (the front matter
  `finesse new` writes; the sha may be quoted) or `- **baseline_commit**: <sha>` (a Markdown
  field; `Baseline commit` is read the same). Its `Unresolved Warnings` section is copied.
- the prompt beside it, `<name>.md` (or `prompt.md`): each phase's Verify command is run
  again: the first code span after the first label in the phase that the checker takes for
  one (`Verify:`, `Check with`, `Verification:`...), or the fenced block right under a label
  that ends its line. The same command in two phases runs once.
- the project's git history: commits from the baseline to HEAD, the files they changed, and
  the files changed but not committed (leaving out `.claude/ralph/`, the loops' own state,
  and the retro file itself). Paths are from the git top level.
- the loops: `.claude/ralph/history/*.json`. A loop is this plan's when its prompt is this
  plan's prompt (blanks aside) or its `prompt_file` is this prompt; any other loop that
  ended after the baseline commit's time is listed too, marked as matched by time only.
  Each listed loop's report `.claude/ralph/reports/<loop_id>.md` is included, as is any
  report without a history entry written after the baseline commit.

`collect_retro` gathers all that (and runs the commands), `render_retro` is the Markdown,
`write_retro` does both and writes `<name>-retro.md` beside the plan.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from finesse.authoring.prompt_check.document import Document, Line
from finesse.authoring.prompt_check.structure import find_phases
from finesse.authoring.prompt_check.validate import read_text
from finesse.authoring.prompt_check.vocabulary import VERIFY
from finesse.errors import UsageError
from finesse.models import CommandResult
from finesse.state.paths import STATE_SUBDIR, StatePaths
from finesse.support.verify import run_command

TAIL_CHARS = 2000
REPORT_MAX_CHARS = 20_000
HISTORY_MAX_BYTES = 4 * 1024 * 1024
_BASELINE = re.compile(
    r"^\s*(?:[-*+]\s+)?[*_]*baseline[_ ]commit[*_]*\s*:[*_]*\s*[\"'`]?(?P<value>[^\"'`]*?)"
    r"[\"'`]?\s*$", re.IGNORECASE)
_SHA = re.compile(r"[0-9a-fA-F]{4,40}")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_WARNINGS_TITLE = re.compile(r"^[*_]*unresolved warnings[*_]*\s*:?[*_]*\s*(?P<rest>.*)$",
                             re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_PHASE_PREFIX = re.compile(
    r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d{1,3}[.)]\s+)?[*_]*"
    r"(?:(?:phase|stage|step|milestone|part)\s+\w+[*_]*\s*[:.)\u2014-]?[*_]*\s*)?", re.IGNORECASE)
_LOOP_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

Result = Literal["pass", "fail", "timed out", "not started", "no command"]
Match = Literal["prompt", "time"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Commit(_Model):
    sha: str
    subject: str


class FileChange(_Model):
    status: str  # git's letter: A added, M modified, D deleted, T type changed
    path: str


class PhaseCheck(_Model):
    phase: int
    title: str
    command: str | None
    result: Result
    exit_code: int | None
    duration_seconds: float
    output_tail: str


class LoopEntry(_Model):
    loop_id: str
    match: Match
    outcome: str | None
    iterations: int | None
    started_at: str | None
    ended_at: str | None
    end_message: str
    report: str | None  # the report's path from the project root
    report_text: str | None = Field(default=None, exclude=True)


class Retro(_Model):
    name: str
    plan: str  # paths from the project root when under it
    prompt: str | None  # None when the prompt file is missing
    retro: str
    baseline_commit: str
    head_commit: str
    commits: list[Commit]
    files_changed: list[FileChange]
    uncommitted: list[str]
    phases: list[PhaseCheck]
    loops: list[LoopEntry]
    unresolved_warnings: list[str] | None  # None when the plan has no such section
    notes: list[str]  # what could not be read


@dataclass(frozen=True)
class PlanFiles:
    name: str
    plan: Path
    prompt: Path
    retro: Path

    @classmethod
    def of(cls, plan: Path) -> PlanFiles:
        if plan.name == "plan.md":
            return cls(plan.parent.name, plan, plan.with_name("prompt.md"),
                       plan.with_name("retro.md"))
        if plan.name.endswith("-plan.md") and len(plan.name) > len("-plan.md"):
            name = plan.name.removesuffix("-plan.md")
            return cls(name, plan, plan.with_name(f"{name}.md"), plan.with_name(f"{name}-retro.md"))
        raise UsageError(f"{plan}: a plan file is named <name>-plan.md (or plan.md in a "
                         "sub-workflow folder), e.g. finesse-plans/csv-export-plan.md")


# ---------------------------------------------------------------- reading the plan (pure)


def _outside_fences(text: str) -> list[str]:
    lines, fence = [], ""
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
        elif opened:
            fence = opened.group(1)
        else:
            lines.append(line)
    return lines


def baseline_commit(plan_text: str) -> str | None:
    """The plan's baseline commit sha, or None when it has none (or not a sha)."""
    for line in _outside_fences(plan_text):
        match = _BASELINE.match(line)
        if match:
            value = match.group("value").strip()
            return value if _SHA.fullmatch(value) else None
    return None


def unresolved_warnings(plan_text: str) -> list[str] | None:
    """The items of the plan's Unresolved Warnings section (a heading, or a `Label:` line with
    text or a list under it); [] when it says none; None when there is no such section."""
    lines = _outside_fences(plan_text)
    for index, line in enumerate(lines):
        heading = _HEADING.match(line)
        title = heading.group(2) if heading else line.strip().lstrip("-*+ ")
        found = _WARNINGS_TITLE.match(title)
        if found is None or (heading is None and ":" not in line):
            continue
        rest = [found.group("rest")] if found.group("rest") else []
        after = lines[index + 1 :]
        under = (_under_heading(after, len(heading.group(1))) if heading
                 else _under_label(after, line))
        return _warning_items(rest + under)
    return None


def _under_heading(lines: list[str], level: int) -> list[str]:
    body = []
    for line in lines:
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) <= level:
            break
        body.append(line)
    return body


def _under_label(lines: list[str], label: str) -> list[str]:
    """The list under a `Label:` line: the lines indented deeper than the label, or any list
    items when the label is not an item itself; up to the first other line."""
    indent = len(label) - len(label.lstrip())
    label_is_item = _ITEM.match(label) is not None
    body: list[str] = []
    for line in lines:
        if not line.strip():
            if body:
                break
            continue
        if len(line) - len(line.lstrip()) > indent or (
                not label_is_item and _ITEM.match(line)):
            body.append(line)
        else:
            break
    return body


def _warning_items(body: list[str]) -> list[str]:
    items: list[str] = []
    for line in body:
        item = _ITEM.match(line)
        if item:
            items.append(item.group(1).strip())
        elif line.strip() and items and line[:1].isspace():
            items[-1] += " " + line.strip()  # an item's continuation line
        elif line.strip():
            items.append(line.strip())
    if len(items) == 1 and items[0].lower().rstrip(".") in ("none", "no warnings", "n/a"):
        return []
    return items


@dataclass(frozen=True)
class PhaseCommand:
    phase: int
    title: str
    command: str | None


def phase_commands(prompt_text: str) -> list[PhaseCommand]:
    """Each phase of a loop prompt with its Verify command (None when it names none)."""
    doc = Document.parse(prompt_text)
    return [PhaseCommand(phase.number, _title(phase.line), _verify_command(phase.region))
            for phase in find_phases(doc).found]


def _title(line: Line) -> str:
    text = _PHASE_PREFIX.sub("", line.text)
    label = VERIFY.search(text)
    text = (text[: label.start()] if label else text).strip(" *_").rstrip(" :.").strip(" *_")
    return text if len(text) <= 100 else text[:99] + "…"


def _verify_command(region: tuple[Line, ...]) -> str | None:
    for index, line in enumerate(region):
        label = VERIFY.search(line.text)
        if label is None:
            continue
        span = _CODE_SPAN.search(line.text[label.end():])
        if span:
            code = span.group(2)
            return code[1:-1] if code.startswith(" ") and code.endswith(" ") and code.strip() \
                else code
        if not line.text[label.end():].strip():
            block = _fenced_block_after(region[index + 1:])
            if block:
                return block
    return None


def _fenced_block_after(lines: tuple[Line, ...]) -> str | None:
    texts = [line.text for line in lines]
    while texts and not texts[0].strip():
        texts.pop(0)
    opened = _FENCE.match(texts[0]) if texts else None
    if opened is None:
        return None
    body = []
    for text in texts[1:]:
        if text.strip().startswith(opened.group(1)):
            break
        body.append(text)
    return "\n".join(body).strip() or None


# ---------------------------------------------------------------- the loops (pure)


def _when(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def select_loops(history: list[dict[str, Any]], *, prompt: str | None,
                 prompt_files: frozenset[str],
                 since: datetime) -> list[tuple[Match, dict[str, Any]]]:
    """The ended loops of this plan (matched by prompt) and the others that ended after
    `since` (matched by time), in the order they started. `prompt_files` are the names the
    prompt may go by in a loop's `prompt_file` (from the project root, and absolute)."""
    wanted = " ".join(prompt.split()) if prompt is not None else None
    chosen: list[tuple[Match, dict[str, Any]]] = []
    for entry in history:
        text, named = entry.get("prompt"), entry.get("prompt_file")
        same_prompt = wanted is not None and isinstance(text, str) and " ".join(
            text.split()) == wanted
        same_file = isinstance(named, str) and os.path.normpath(named) in prompt_files
        ended = _when(entry.get("ended_at")) or _when(entry.get("started_at"))
        if same_prompt or same_file:
            chosen.append(("prompt", entry))
        elif ended is not None and ended >= since:
            chosen.append(("time", entry))
    return sorted(chosen, key=lambda pair: str(pair[1].get("started_at") or ""))


def _loop_entry(match: Match, entry: dict[str, Any], report: str | None,
                report_text: str | None) -> LoopEntry:
    def text(key: str) -> str | None:
        value = entry.get(key)
        return value if isinstance(value, str) else None

    records, current = entry.get("iterations"), entry.get("iteration")
    count = len(records) if isinstance(records, list) else (
        current if isinstance(current, int) else None)
    return LoopEntry(loop_id=str(entry.get("loop_id")), match=match, outcome=text("outcome"),
                     iterations=count, started_at=text("started_at"), ended_at=text("ended_at"),
                     end_message=text("end_message") or "", report=report,
                     report_text=report_text)


# ---------------------------------------------------------------- the retro file (pure)


def render_retro(retro: Retro) -> str:
    passed = sum(1 for phase in retro.phases if phase.result == "pass")
    ours = sum(1 for loop in retro.loops if loop.match == "prompt")
    warnings = retro.unresolved_warnings
    counted = "no section in the plan" if warnings is None else str(len(warnings))
    files = [f"- {c.status} {_code(c.path)}" for c in retro.files_changed] or ["None."]
    if retro.uncommitted:
        files += ["", "Not committed:", "", *(f"- {_code(name)}" for name in retro.uncommitted)]
    sections = [
        (f"# Retro: {retro.name}", [
            f"- **Plan**: {_code(retro.plan)}",
            f"- **Prompt**: {_code(retro.prompt) if retro.prompt else 'missing'}",
            f"- **Baseline commit**: {_code(retro.baseline_commit)}",
            f"- **HEAD**: {_code(retro.head_commit)}"]),
        ("## Summary", [
            f"- Commits since the baseline: {len(retro.commits)}",
            f"- Files changed: {len(retro.files_changed)} in those commits, "
            f"{len(retro.uncommitted)} not committed",
            f"- Verify commands: {passed} of {len(retro.phases)} phases pass",
            f"- Loops: {ours} of this plan, {len(retro.loops) - ours} others since the baseline",
            f"- Unresolved warnings: {counted}"]),
        ("## Commits since the baseline",
         [f"- {_code(c.sha[:12])} {c.subject}" for c in retro.commits] or ["None."]),
        ("## Files changed", files),
        ("## Verify commands", _phase_lines(retro.phases) or ["No phase to verify."]),
        ("## Loops", _loop_lines(retro.loops)
         or ["No loop of this plan, and none since the baseline."]),
        ("## Unresolved warnings",
         ["The plan has no Unresolved Warnings section."] if warnings is None
         else [f"- {warning}" for warning in warnings] or ["None."]),
    ]
    if retro.notes:
        sections.append(("## Notes", [f"- {note}" for note in retro.notes]))
    return "\n\n".join("\n".join([title, "", *body]) for title, body in sections) + "\n"


def _phase_lines(phases: list[PhaseCheck]) -> list[str]:
    blocks = []
    for phase in phases:
        title = f": {phase.title}" if phase.title else ""
        block = [f"### Phase {phase.phase}{title} ({phase.result})", ""]
        if phase.command is None:
            blocks.append([*block, "The phase names no Verify command."])
            continue
        how = {"pass": "exited 0", "fail": f"exited {phase.exit_code}",
               "timed out": "timed out", "not started": "could not start"}[phase.result]
        block.append(f"{_code(phase.command)} {how} in {phase.duration_seconds:.1f} s.")
        if phase.output_tail.strip():
            block += ["", *_fenced(phase.output_tail.rstrip("\n"), "text")]
        blocks.append(block)
    return _joined(blocks)


def _loop_lines(loops: list[LoopEntry]) -> list[str]:
    blocks = []
    for loop in loops:
        after = f" after {loop.iterations} iterations" if loop.iterations is not None else ""
        block = [f"### {_code(loop.loop_id)}: {loop.outcome or 'no history entry'}{after}", "",
                 "- Matched: by its prompt, this plan's" if loop.match == "prompt" else
                 "- Matched: by time only (it ended after the baseline commit)"]
        if loop.started_at or loop.ended_at:
            block.append(f"- Ran: {loop.started_at or '?'} to {loop.ended_at or '?'}")
        if loop.end_message:
            block.append(f"- End message: {' '.join(loop.end_message.split())}")
        block.append(f"- Report: {_code(loop.report)}" if loop.report else "- Report: none")
        if loop.report_text:
            block += ["", *_fenced(loop.report_text.rstrip("\n"), "markdown")]
        blocks.append(block)
    return _joined(blocks)


def _joined(blocks: list[list[str]]) -> list[str]:
    return [line for index, block in enumerate(blocks) for line in ([""] if index else []) + block]


def _code(text: str) -> str:
    flat = " ".join(text.splitlines())
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def _fenced(text: str, language: str) -> list[str]:
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return [f"{fence}{language}", text, fence]


# ---------------------------------------------------------------- gathering (I/O)


def collect_retro(plan_path: Path, root: Path, *, timeout: float) -> Retro:
    """Everything the retro shows; UsageError when the plan or its baseline is unusable."""
    files = PlanFiles.of(plan_path)
    plan_text = read_text(plan_path, "plan file")
    sha = baseline_commit(plan_text)
    if sha is None:
        raise UsageError(f"{plan_path}: no baseline_commit (a line `baseline_commit: <sha>`), "
                         "so there is nothing to compare against")
    notes: list[str] = []
    prompt_text = None
    if files.prompt.is_file():
        prompt_text = read_text(files.prompt, "prompt file")
    else:
        notes.append(f"no prompt file {_shown(files.prompt, root)}: no Verify command to run")
    git_review = _git_review(root, sha, exclude=_shown(files.retro, root))
    phases = _run_phases(prompt_text, root, timeout) if prompt_text is not None else []
    if prompt_text is not None and not phases:
        notes.append("the prompt has no phases: no Verify command to run")
    prompt_files = frozenset({_shown(files.prompt, root), str(files.prompt.resolve())})
    loops = _loops(root, prompt_text, prompt_files, git_review.since, notes)
    return Retro(
        name=files.name, plan=_shown(plan_path, root),
        prompt=_shown(files.prompt, root) if prompt_text is not None else None,
        retro=_shown(files.retro, root), baseline_commit=git_review.baseline,
        head_commit=git_review.head, commits=git_review.commits, files_changed=git_review.files,
        uncommitted=git_review.uncommitted, phases=phases, loops=loops,
        unresolved_warnings=unresolved_warnings(plan_text), notes=notes)


def write_retro(plan_path: Path, root: Path, *, timeout: float) -> Retro:
    from finesse.support.files import write_atomic

    retro = collect_retro(plan_path, root, timeout=timeout)
    try:
        write_atomic(PlanFiles.of(plan_path).retro, render_retro(retro))
    except OSError as err:
        raise UsageError(f"cannot write {retro.retro}: {err.strerror}") from None
    return retro


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


@dataclass(frozen=True)
class _GitReview:
    baseline: str
    head: str
    since: datetime
    commits: list[Commit]
    files: list[FileChange]
    uncommitted: list[str]


def _git_review(root: Path, sha: str, *, exclude: str) -> _GitReview:
    import git

    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UsageError(f"{root} is not in a git repository; give the project with "
                         "--project DIR") from None
    with repo:
        try:
            base = repo.commit(f"{sha}^{{commit}}")  # a tag peels to its commit; a tree id fails
            head = repo.head.commit
        except (git.BadName, ValueError, git.GitCommandError):
            raise UsageError(f"baseline_commit {sha} is not a commit of the repository at "
                             f"{repo.working_tree_dir}") from None
        commits = [Commit(sha=c.hexsha, subject=str(c.summary))
                   for c in repo.iter_commits(f"{base.hexsha}..{head.hexsha}", reverse=True)]
        # -z: names as they are, whatever core.quotePath says; --no-renames: status and path.
        out = repo.git.diff("--name-status", "--no-renames", "-z", base.hexsha, head.hexsha, "--")
        fields = out.split("\0")
        files = [FileChange(status=fields[i], path=fields[i + 1])
                 for i in range(0, len(fields) - 1, 2) if fields[i]]
        dirty = repo.git.diff("--name-only", "-z", "HEAD", "--").split("\0")
        top = Path(repo.working_tree_dir or root).resolve()
        prefix = root.resolve().relative_to(top).as_posix() if root.resolve() != top else ""
        changed = sorted({*filter(None, dirty), *repo.untracked_files})
        # Neither the loops' own state nor an earlier retro is work of the plan.
        uncommitted = [name for name in changed
                       if not _ours(name.removeprefix(prefix + "/") if prefix else name, exclude)]
        return _GitReview(base.hexsha, head.hexsha, base.committed_datetime, commits, files,
                          uncommitted)


def _ours(name: str, retro: str) -> bool:
    return name == retro or name.startswith("/".join(STATE_SUBDIR) + "/")


def _run_phases(prompt_text: str, root: Path, timeout: float) -> list[PhaseCheck]:
    ran: dict[str, CommandResult] = {}  # the same command in two phases runs once
    checks = []
    for phase in phase_commands(prompt_text):
        if phase.command is None:
            checks.append(PhaseCheck(phase=phase.phase, title=phase.title, command=None,
                                     result="no command", exit_code=None, duration_seconds=0.0,
                                     output_tail=""))
            continue
        if phase.command not in ran:
            ran[phase.command] = run_command(phase.command, cwd=root, timeout=timeout,
                                             tail_chars=TAIL_CHARS)
        done = ran[phase.command]
        result: Result = ("pass" if done.passed else "timed out" if done.timed_out
                          else "not started" if done.exit_code is None else "fail")
        checks.append(PhaseCheck(phase=phase.phase, title=phase.title, command=phase.command,
                                 result=result, exit_code=done.exit_code,
                                 duration_seconds=round(done.duration_seconds, 2),
                                 output_tail=done.output_tail))
    return checks


def _loops(root: Path, prompt: str | None, prompt_files: frozenset[str], since: datetime,
           notes: list[str]) -> list[LoopEntry]:
    paths = StatePaths(root)
    history = []
    for path in sorted(paths.history.glob("*.json")) if paths.history.is_dir() else []:
        try:
            with open(path, "rb") as handle:
                entry = json.loads(handle.read(HISTORY_MAX_BYTES))
        except (OSError, ValueError) as err:
            notes.append(f"skipped {_shown(path, root)}: not readable as JSON ({err})")
            continue
        if not isinstance(entry, dict) or not _LOOP_ID.fullmatch(str(entry.get("loop_id"))):
            notes.append(f"skipped {_shown(path, root)}: not a loop record (no loop_id)")
            continue
        history.append(entry)
    loops = []
    for match, entry in select_loops(history, prompt=prompt, prompt_files=prompt_files,
                                     since=since):
        report = paths.reports / f"{entry['loop_id']}.md"
        loops.append(_loop_entry(match, entry, *_report(report, root)))
    known = {str(entry["loop_id"]) for entry in history}
    for report in sorted(paths.reports.glob("*.md")) if paths.reports.is_dir() else []:
        try:
            written = datetime.fromtimestamp(report.stat().st_mtime, UTC)
        except OSError:
            continue
        if report.stem not in known and written >= since:
            loops.append(_loop_entry("time", {"loop_id": report.stem}, *_report(report, root)))
    return loops


def _report(path: Path, root: Path) -> tuple[str | None, str | None]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(REPORT_MAX_CHARS + 1)
    except OSError:
        return None, None
    if len(text) > REPORT_MAX_CHARS:
        text = text[:REPORT_MAX_CHARS] + f"\n\n[... cut at {REPORT_MAX_CHARS} characters]\n"
    return _shown(path, root), text
