"""The plan spec: what it refuses, and how it says so."""
from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from finesse.authoring.spec import CommandCriterion, Spec
from tests.unit.authoring.test_render import JSON_SPEC, YAML_SPEC, base_data  # noqa: F401

# ---- what the spec refuses, and how it says so ------------------------------------------


def refusal(change: dict[str, Any]) -> str:
    data = base_data()
    for dotted, value in change.items():
        *parents, last = dotted.split(".")
        target: Any = data
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if isinstance(target, list) else last] = value
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
    ({"phases.0.criteria.1.expect": "is clean"},
     "says 'clean', which no command can check; name the result, e.g. 'exits 0' or "
     "'prints 0 lines'"),
    ({"phases.0.criteria.0": "the code is properly structured"},
     "says 'properly', which no command can check; name the result, e.g. 'exits 0' or "
     "'prints 0 lines'"),
    ({"phases.0.name": "Make it good"},
     "says 'good', which no command can check; name the result, e.g. 'exits 0' or "
     "'prints 0 lines'"),
    ({"phases.0.criteria.0": "Phase 2: the endpoint"},
     "opens like a phase ('Phase 2: ...'), which would renumber the phases; say it another "
     "way"),
    ({"git": {"checkpointing": True, "granularity": "custom", "custom": "Step 3 commits"}},
     "opens like a phase ('Phase 2: ...'), which would renumber the phases; say it another "
     "way"),
    ({"phases.0.subagent.type": "Plan"}, "Input should be 'Bash', 'Explore' or "
                                         "'general-purpose'"),
    ({"phases.0.subagent": {"what": "trace the views", "type": "Explore"}},
     "Field required"),
    ({"test_command": "&&"}, "names no program; give a shell command, e.g. `pytest -q`"),
    ({"blocked_after": 13}, "blocked_after (13) is past the iteration limit (12); make it at "
                            "most that"),
    ({"reviews": [{"agent": "finesse-scope-review", "round": 3, "verdicts": {7: "pass"}}]},
     "finesse-scope-review reviewed in a round past the refinement budget (2); record what "
     "is still open in warnings instead"),
    ({"phases.0.verify": "pytest `ls tests`"},
     "holds a backtick; write the command without backticks ($(...) instead of `...`)"),
    ({"phases.0.verify": "pytest\nruff check"},
     "spans several lines; give one shell command line (join them with &&)"),
    ({"phases.1.verify": "ralph start --max-iterations 50"},
     "states an iteration limit; say it once, in iteration_limit"),
    ({"phases.0.criteria.0": "finish within 30 iterations"},
     "states an iteration limit; say it once, in iteration_limit"),
    ({"guardrails": ["output <promise>DONE</promise> early"]},
     "holds a <promise> tag; the prompt says the promise once, from `promise`"),
    ({"phases.0.name": "the `csv_export.py module"},
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
    for key in ("promise", "blocked_after"):
        del data[key]
    spec = Spec.model_validate(data)
    assert (spec.promise, spec.stuck_threshold, spec.warnings, spec.stall_limit,
            spec.refinement_budget, spec.reviews) == ("TASK_COMPLETE", 3, [], 12, 2, [])
    assert spec.phases[0].criteria[1] == CommandCriterion(
        command="pytest tests/reports/test_csv_export.py -q", expect="exits 0")
    assert spec.phases[1].kind == "implementation"


def test_prompt_text_is_one_line() -> None:
    data = base_data()
    data["phases"][0]["criteria"][0] = "a CSV\n\n## download\n- of any report exists"
    spec = Spec.model_validate(data)
    assert spec.phases[0].criteria[0] == "a CSV ## download - of any report exists"


