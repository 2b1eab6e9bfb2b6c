"""The command-line tools' one error boundary: every error is one line on stderr and an exit
code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    code, out, err = run(capsys, "status", "--bogus")
    assert (code, out) == (2, "")
    # click 8.1 and 8.2+ word it differently
    assert err in ("ralph status: No such option: --bogus (see 'ralph status --help')\n",
                   "ralph status: No such option '--bogus'. (see 'ralph status --help')\n")
