"""The hooks' one error boundary: nothing escapes into Claude Code, and the error is logged."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from finesse.hooks.boundary import run_hook
from finesse.state.store import LoopStore
from tests.helpers.hooks import env_for


def test_boundary_swallows_errors_and_logs(git_repo: Path, store: LoopStore) -> None:
    def broken(raw: bytes, env: Mapping[str, str], cwd: str) -> dict[str, Any] | None:
        raise RuntimeError("kaboom\nsecond line")

    out = io.StringIO()
    code = run_hook("Stop", broken, io.BytesIO(b"{}"), out, env_for(git_repo), str(git_repo))
    assert (code, out.getvalue()) == (0, "")
    [line] = store.paths.log.read_text().splitlines()
    assert line.split(" ", 1)[1].startswith("Stop hook error, the stop went ahead: ")
    assert line.endswith("RuntimeError: kaboom | second line")


def test_boundary_survives_an_unwritable_log(tmp_path: Path) -> None:
    def broken(raw: bytes, env: Mapping[str, str], cwd: str) -> dict[str, Any] | None:
        raise ValueError("bad")

    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    out = io.StringIO()
    assert run_hook("Stop", broken, io.BytesIO(b""), out, env_for(blocker), str(tmp_path)) == 0
    assert out.getvalue() == ""
