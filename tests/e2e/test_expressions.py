"""The expression stand-in the workflow e2e test relies on reads GitHub's rules right: `||`
gives an operand, strings compare without case and other types as numbers, an `if:` without
a status function is `success() && ...`, and anything it does not know raises instead of
passing."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.expressions import condition, evaluate, interpolate

CONTEXTS: dict[str, Any] = {
    "inputs": {"base": "", "waves": ""},
    "github": {"ref_name": "main", "head_ref": ""},
    "needs": {"plan": {"result": "success", "outputs": {"waves": ",1,2,"}},
              "merge-1": {"result": "failure", "outputs": {"commit": "abc"}}},
}
OK = {"success": True, "failure": False, "always": True, "cancelled": False}
FAILED = {"success": False, "failure": True, "always": True, "cancelled": False}


@pytest.mark.parametrize(("expression", "value"), [
    ("inputs.base || github.head_ref || github.ref_name", "main"),
    ("contains(needs.plan.outputs.waves, ',2,')", True),
    ("contains(needs.plan.outputs.waves, ',3,')", False),
    ("needs.plan.result == 'SUCCESS'", True),
    ("!cancelled() && needs.plan.result == 'success' && needs.merge-1.result == 'success'",
     False),
    ("needs.merge-1.outputs.commit", "abc"),
    ("'it''s'", "it's"),
    ("needs.nothing.result", None),
    ("needs.nothing.result == ''", True),  # null and '' are both 0 to GitHub
    ("needs.plan.result == 0", False),
])
def test_values(expression: str, value: Any) -> None:
    assert evaluate(expression, CONTEXTS, OK) == value


def test_an_if_without_a_status_function_needs_success() -> None:
    assert condition("${{ contains(needs.plan.outputs.waves, ',1,') }}", CONTEXTS, OK)
    assert not condition("${{ contains(needs.plan.outputs.waves, ',1,') }}", CONTEXTS, FAILED)
    assert condition("${{ always() && needs.plan.result == 'success' }}", CONTEXTS, FAILED)
    assert not condition("${{ !cancelled() && needs.merge-1.result == 'success' }}", CONTEXTS,
                         FAILED)


def test_interpolation_writes_values_as_github_does() -> None:
    assert interpolate("ref ${{ needs.merge-1.outputs.commit }}, ${{ 1 == 1 }}", CONTEXTS,
                       OK) == "ref abc, true"


@pytest.mark.parametrize("expression", ["format('{0}', 1)", "needs.plan.result > 1",
                                        "fromJSON('[]')"])
def test_what_it_does_not_know_raises(expression: str) -> None:
    with pytest.raises(AssertionError, match="expression stand-in"):
        evaluate(expression, CONTEXTS, OK)
