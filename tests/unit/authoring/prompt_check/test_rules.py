"""Every rule of the registry: its examples (the prompts it must pass and must fail), and the
registry's shape (the seed's ten, in order, one module each)."""

from __future__ import annotations

import importlib

import pytest

from finesse.authoring.prompt_check.reading import Prompt
from finesse.authoring.prompt_check.registry import RULES
from finesse.authoring.prompt_check.rules import Rule

EXAMPLES = [pytest.param(rule, text, expected,
                         id=f"{rule.key}-{'pass' if expected else 'fail'}{at}")
            for rule in RULES
            for expected, texts in ((True, rule.passes), (False, rule.fails))
            for at, text in enumerate(texts)]


@pytest.mark.parametrize(("rule", "text", "expected"), EXAMPLES)
def test_each_rule_passes_and_fails_its_examples(rule: Rule, text: str, expected: bool) -> None:
    verdict = rule.check(Prompt(text))
    assert verdict.passed is expected, verdict
    # A failure says how to fix it; a pass has nothing to fix.
    assert bool(verdict.fix) is not expected


def test_the_registry_holds_the_seeds_ten_attributes_in_order_one_module_each() -> None:
    assert [rule.id for rule in RULES] == list(range(1, 11))
    for rule in RULES:
        module = importlib.import_module(
            f"finesse.authoring.prompt_check.rules.{rule.key.replace('-', '_')}")
        assert module.RULE is rule
        assert rule.definition and len(rule.passes) >= 2 and len(rule.fails) >= 2
