"""SessionStart in the real CLI: a loop is re-stated to the model after a resume and after a
compaction, so an iteration never runs without its task."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.fakeapi import FakeModel, text
from tests.e2e.harness import ClaudeRunner

pytestmark = pytest.mark.e2e


def test_loop_is_restated_after_resume_and_compaction(
    run_claude: ClaudeRunner, project: Path
) -> None:
    script = [[text("first reply")], [text("after compaction")], [text("more")]]
    with FakeModel(script) as model:
        first = run_claude('/ralph-loop "The long task" --max-iterations 6 --quiesce-after 5',
                           cwd=project, model=model, extra_args=["--max-turns", "1"])
        assert model.call_count == 1, first.describe()
        compact = run_claude("/compact", cwd=project, model=model, resume=first.session_id)
        assert compact.returncode == 0, compact.describe()
        assert model.call_count == 1, compact.describe()
        later = run_claude("Carry on.", cwd=project, model=model, resume=first.session_id,
                           extra_args=["--max-turns", "1"])
        assert model.call_count == 2, later.describe()
    seen = model.all_text(1)
    assert "(Re-stated after compact)" in seen, seen[-3000:]
    assert "(Re-stated after resume)" in seen, seen[-3000:]
    assert "<ralph-task>\nThe long task\n</ralph-task>" in seen
