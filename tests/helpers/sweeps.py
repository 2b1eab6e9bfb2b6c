"""The crash sweeps' points run two at a time, each in a copy of one prepared project.

`run_points(point, jobs)` calls `point(*job)` for each job in a pool of `POOL` processes
(spawned, so a point's in-process hooks share no state with the test's or with another
point's) and fails with every failing point's traceback, not just the first; `PointPool`
keeps one pool for several rounds. `point` must be a
module-level function (the pool finds it by name).

`fresh_copy(slot, build)` is the project a point works in: built by `build` once per worker,
at the very path the points then use (a loop's files may hold absolute paths), kept as a
template, and copied back before each later point: a sweep pays for its setup once per
worker, not once per crash point.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

POOL = 2


def _guarded(point: Callable[..., str], job: tuple[Any, ...]) -> tuple[bool, str]:
    try:
        return True, point(*job)
    except BaseException:  # reported to the test, with its traceback
        return False, f"{point.__name__}{job!r}:\n{traceback.format_exc()}"


class PointPool:
    """`POOL` worker processes, kept for as many `run` calls as a sweep needs (a worker keeps
    the template it built)."""

    def __enter__(self) -> PointPool:
        context = multiprocessing.get_context("spawn")
        self.pool = ProcessPoolExecutor(POOL, mp_context=context)
        return self

    def __exit__(self, *exc: object) -> None:
        self.pool.shutdown()

    def run(self, point: Callable[..., str], jobs: Sequence[tuple[Any, ...]]) -> list[str]:
        """`point(*job)` for every job, `POOL` at a time; what each returned, in job order."""
        outcomes = list(self.pool.map(_guarded, [point] * len(jobs), jobs))
        failures = [text for held, text in outcomes if not held]
        assert not failures, (f"{len(failures)} of {len(jobs)} crash points failed:\n"
                              + "\n".join(failures))
        return [text for _, text in outcomes]


def run_points(point: Callable[..., str], jobs: Sequence[tuple[Any, ...]]) -> list[str]:
    """`point(*job)` for every job, in a pool of its own."""
    with PointPool() as pool:
        return pool.run(point, jobs)


def worker_slot(base: Path) -> Path:
    """This worker's own folder under `base` (its HOME too: no two points share one)."""
    slot = base / f"worker-{os.getpid()}"
    home = slot / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["HOME"] = str(home)
    os.environ["XDG_CONFIG_HOME"] = str(home / ".config")
    return slot


def fresh_copy(slot: Path, build: Callable[[Path], None]) -> Path:
    """`slot/work` as `build(slot / "work")` left it, for one more point."""
    work, template = slot / "work", slot / "template"
    if template.exists():
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(template, work, symlinks=True)
    else:
        shutil.rmtree(work, ignore_errors=True)
        build(work)
        shutil.copytree(work, template, symlinks=True)
    return work
