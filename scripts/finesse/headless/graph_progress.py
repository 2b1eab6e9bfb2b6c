"""What a graph run has done, kept where a run killed outright (SIGKILL, a closed terminal)
finds it again: `<git folder>/finesse/graphs/<session>.json`, per sub-workflow the commit its branch
was made from (written before the branch is) and its merge commit (written right after the
merge). Git holds the rest: the branches, the worktrees with their loops, the merges.

A sub-workflow counts as done (merged before) only when its branch's commit is in HEAD and
either its recorded merge is in HEAD too, or its branch holds commits beyond the commit it was
made from (it was merged by hand), or, with no record of that commit, a merge commit in HEAD
has the branch as a parent. A branch made for a wave that never finished holds no commit of
its own and sits in HEAD's history: by the old rule it looked merged, and the wave was
skipped. Now it is run again in its worktree, its loop picked up where it stopped
(`finesse.headless.subworkflow`). An unreadable record is moved aside, never deleted.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from finesse.headless.worktrees import branch_tip, has_merge_of, is_ancestor
from finesse.support.git import Git
from finesse.support.writes import write_atomic


def progress_path(root: Path, session: str) -> Path:
    """In the repository's git folder (shared by its worktrees, like the branches the record
    is about), so nothing of it is ever in the work tree or committed."""
    common = Git(root).text("rev-parse", "--git-common-dir") or ".git"
    folder = Path(common) if Path(common).is_absolute() else root / common
    return folder / "finesse" / "graphs" / f"{session}.json"


@dataclass
class Progress:
    path: Path
    bases: dict[str, str] = field(default_factory=dict)  # task: the commit its branch was made from
    merges: dict[str, str] = field(default_factory=dict)  # task: its merge commit

    def started(self, task: str, base: str) -> None:
        """Before the task's branch is made: a branch of this name is this graph's."""
        self.bases[task] = base
        self.merges.pop(task, None)
        self._save()

    def merged(self, task: str, commit: str) -> None:
        self.merges[task] = commit
        self._save()

    def _save(self) -> None:
        tasks = {name: {"base": self.bases.get(name), "merge": self.merges.get(name)}
                 for name in sorted({*self.bases, *self.merges})}
        write_atomic(self.path, json.dumps({"tasks": tasks}, indent=2) + "\n")


def load(root: Path, session: str) -> Progress:
    path = progress_path(root, session)
    progress = Progress(path)
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))["tasks"]
        for name, entry in tasks.items():
            if isinstance(entry.get("base"), str):
                progress.bases[name] = entry["base"]
            if isinstance(entry.get("merge"), str):
                progress.merges[name] = entry["merge"]
    except FileNotFoundError:
        pass
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        with contextlib.suppress(OSError):
            path.replace(path.with_name(path.name + ".unreadable"))
        progress = Progress(path)
    return progress


def merged_before(root: Path, progress: Progress, task: str, branch: str) -> bool:
    """Whether the task's branch counts as merged into HEAD (see the module docstring)."""
    tip = branch_tip(root, branch)
    if tip is None or not is_ancestor(root, tip, "HEAD"):
        return False
    merge = progress.merges.get(task)
    if merge is not None and is_ancestor(root, merge, "HEAD"):
        return True
    base = progress.bases.get(task)
    if base is not None:
        return not is_ancestor(root, tip, base)
    return has_merge_of(root, tip)
