"""One measured case: the command, its input, how to reset the loop state before each run,
and how to tell a valid run (the hook's output and, on the active path, the loop file it
left) from a failure. Its samples give the median, min and peak figures of the report."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stop_hook.children import Runner, Sample

KINDS = ("baseline", "info", "no_loop", "active")


@dataclass
class Scenario:
    key: str
    label: str
    kind: str  # one of KINDS
    argv: list[str]
    cwd: Path
    env: dict[str, str]
    stdin: bytes = b""
    expect_block: bool = False
    reset: Callable[[], None] | None = None
    verify: Callable[[], str | None] | None = None  # after a run: what is wrong, or None
    size_mb: float | None = None
    transcript_bytes: int | None = None
    new_bytes: int | None = None  # with a cursor: the bytes written since the last stop
    # Scenarios of one family differ only in the transcript's size (targets compare them):
    # "active" (tail read, no cursor), "usage" (cursor), "worst_cursor", "worst_no_cursor".
    family: str | None = None
    root: str = "main"  # which checkout: "main" or "compare"
    runs: int = 0
    samples: list[Sample] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    decisions: set[str] = field(default_factory=set)

    def run_once(self, runner: Runner) -> Sample:
        if self.reset is not None:
            self.reset()
        sample = runner.run(self.argv, self.env, self.cwd, self.stdin)
        self.check(sample)
        if self.verify is not None and not self.failures:
            problem = self.verify()
            if problem:
                self.failures.append(problem)
        return sample

    def check(self, sample: Sample) -> None:
        if sample.returncode != 0:
            self.failures.append(f"exit status {sample.returncode}: {tail(sample.stderr)}")
            return
        if self.kind in ("baseline", "info"):
            return
        text = sample.stdout.strip()
        output: Any = None
        if text:
            try:
                output = json.loads(text)
            except ValueError:
                self.failures.append(f"output is not JSON: {tail(text)}")
                return
            if not isinstance(output, dict):
                self.failures.append(f"output is not a JSON object: {tail(text)}")
                return
        # The loop goes on with additional context (or, opted out or older, a block).
        specific = output.get("hookSpecificOutput") if isinstance(output, dict) else None
        reason = (specific.get("additionalContext") if isinstance(specific, dict)
                  else output.get("reason") if output is not None else None)
        decision = ("none" if output is None else "continue" if reason else
                    str(output.get("decision", "other")))
        self.decisions.add(decision)
        if self.expect_block and decision != "continue":
            self.failures.append(
                f"expected the loop to continue, got {tail(text) or 'no output'} "
                "(does the interpreter have the plugin's dependencies? use the repo venv)"
            )
        elif not self.expect_block and output is not None:
            self.warnings.append(f"unexpected output on the no-loop path: {tail(text)}")
        if sample.stderr.strip():
            self.warnings.append(f"stderr: {tail(sample.stderr)}")

    @property
    def median_seconds(self) -> float:
        return statistics.median(s.seconds for s in self.samples)

    @property
    def min_seconds(self) -> float:
        return min(s.seconds for s in self.samples)

    @property
    def peak_mib(self) -> float:
        return max(s.max_rss_kib for s in self.samples) / 1024


@dataclass(frozen=True)
class Unsupported:
    """A scenario a checkout cannot run (it lacks what the scenario measures), and why."""

    key: str
    label: str
    root: str
    reason: str
    size_mb: float | None = None
    family: str | None = None


def tail(data: bytes | str, limit: int = 200) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = " ".join(text.split())
    return text if len(text) <= limit else "..." + text[-limit:]


FLOORS = ("bare", "bare_other")


def floor_seconds(scenarios: list[Scenario]) -> float:
    """The yardstick: the faster of the two bare start-ups measured (the hooks' `python3`
    and, when it differs, the benchmark's own interpreter), so a slow interpreter start-up
    (a site folder full of .pth files, say) never flatters the ratios."""
    return min(s.median_seconds for s in scenarios if s.root == "main" and s.key in FLOORS)
