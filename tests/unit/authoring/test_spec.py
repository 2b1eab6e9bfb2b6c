"""The plan spec: what it refuses, and how it says so."""
from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from finesse.authoring.spec import Spec
from tests.unit.authoring.test_render import JSON_SPEC, YAML_SPEC, base_data  # noqa: F401

# ---- what the spec refuses, and how it says so ------------------------------------------


def refusal(change: dict[str, Any]) -> str:
    data = base_data()
    for dotted, value in change.items():
        *parents, last = dotted.split(".")
        target: Any = data
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[last] = value
    with pytest.raises(ValidationError) as caught:
        Spec.model_validate(data)
    return str(caught.value.errors()[0]["msg"]).removeprefix("Value error, ")


@pytest.mark.parametrize(("change", "message"), [
    ({"promise": "BLOCKED"}, "BLOCKED is the stuck signal; pick another, e.g. TASK_COMPLETE"),
    ({"promise": "done"}, "must be 4 to 80 capitals, digits, _ or -, words split by single "
                          "spaces, e.g. TASK_COMPLETE"),
    ({"git": {"checkpointing": False, "push": True}},
     "with checkpointing false, leave out granularity, custom and push: nothing is "
     "committed, so nothing is pushed"),
    ({"git": {"checkpointing": True}},
     "with checkpointing true, set granularity: per-phase, per-change or custom"),
    ({"git": {"checkpointing": True, "granularity": "custom"}},
     "give custom (the commit rule in words) exactly when granularity is custom"),
    ({"phases.0.criteria.0.expect": "passes cleanly"},
     "says 'cleanly', which no command can check; name the result, e.g. 'exits 0' or "
     "'prints 0 lines'"),
    ({"phases.0.verify": "pytest `ls tests`"},
     "holds a backtick; write the command without backticks ($(...) instead of `...`)"),
    ({"phases.0.verify": "pytest\nruff check"},
     "spans several lines; give one shell command line (join them with &&)"),
    ({"phases.1.verify": "ralph start --max-iterations 50"},
     "states an iteration limit; say it once, in iteration_limit"),
    ({"project.description": "Finish within 30 iterations."},
     "states an iteration limit; say it once, in iteration_limit"),
    ({"guardrails": ["output <promise>DONE</promise> early"]},
     "holds a <promise> tag; the prompt says the promise once, from `promise`"),
    ({"phases.0.deliverable": "the `csv_export.py module"},
     "has an unpaired backtick; close every `code span`"),
    ({"phases.0.name": "  \n "}, "is empty; write some text"),
    ({"scope.in_scope": ["src/my dir/"]}, "must be one path or glob, without spaces or "
                                          "backticks"),
    ({"scope.out_of_scope": ["/etc/"]}, "must be relative to the project root, e.g. src/app/"),
    ({"scope.in_scope": []}, "List should have at least 1 item after validation, not 0"),
    ({"iteration_limit": 30}, "Input should be less than or equal to 25"),
    ({"stuck_threshold": 6}, "Input should be less than or equal to 5"),
    ({"phases": base_data()["phases"][:1]}, "List should have at least 2 items after "
                                             "validation, not 1"),
    ({"project.task_type": "chore"}, "Input should be 'feature', 'bugfix', 'refactor', "
                                     "'testing', 'performance' or 'research'"),
    ({"phases.0.owner": "me"}, "Extra inputs are not permitted"),
])
def test_the_spec_refuses_what_the_prompt_cannot_say(change: dict[str, Any],
                                                     message: str) -> None:
    assert refusal(change) == message


def test_defaults_promise_stuck_threshold_and_expected_result() -> None:
    data = base_data()
    del data["promise"]
    spec = Spec.model_validate(data)
    assert (spec.promise, spec.stuck_threshold, spec.warnings) == ("TASK_COMPLETE", 3, [])
    assert spec.phases[0].criteria[0].expect == "exits 0"
    assert spec.phases[1].kind == "implementation"


def test_prompt_text_is_one_line() -> None:
    data = base_data()
    data["project"]["description"] = "Add a CSV\n\n## download\n- of any report"
    spec = Spec.model_validate(data)
    assert spec.project.description == "Add a CSV ## download - of any report"


