"""`ralph doctor`: one line per check, and exit 1 when a check fails."""

from __future__ import annotations

import pytest

from tests.helpers.cli import run


@pytest.mark.parametrize(("ok", "code", "mark"), [(True, 0, "ok "), (False, 1, "BAD")])
def test_doctor_exits_1_when_a_check_fails(capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch, ok: bool, code: int,
                                           mark: str) -> None:
    from finesse.support import health

    monkeypatch.setattr(health, "checks", lambda env: [
        health.Check("python", True, "3.11"), health.Check("claude", ok, "2.1.328")])
    assert run(capsys, "doctor") == (code, f"ok  python: 3.11\n{mark} claude: 2.1.328\n", "")
