
"""The labelled corpus: real-world loop prompts, and the attributes each one lacks.

labels.json maps every prompt file to the keys it fails ([] for a complete prompt). The
prompts were written the way people write loop prompts, before the checker; the checker must
flag exactly the labelled attributes.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from finesse.authoring.prompt_check.attributes import ATTRIBUTES
from finesse.authoring.prompt_check.validate import validate_file

CORPUS = Path(__file__).parent / "corpus"
LABELS: dict[str, list[str]] = json.loads((CORPUS / "labels.json").read_text())
KEYS = [attribute.key for attribute in ATTRIBUTES]


def failing_keys(name: str) -> list[str]:
    return [result.key for result in validate_file(CORPUS / name).attributes if not result.passed]


def test_labels_cover_every_prompt_and_only_known_keys() -> None:
    assert sorted(path.name for path in CORPUS.glob("*.md")) == sorted(LABELS)
    assert all(key in KEYS for keys in LABELS.values() for key in keys)


def test_corpus_is_big_and_varied_enough() -> None:
    missing_one = Counter(keys[0] for keys in LABELS.values() if len(keys) == 1)
    assert len(LABELS) >= 30
    assert sum(1 for keys in LABELS.values() if not keys) >= 6
    assert {key: missing_one[key] >= 2 for key in KEYS} == {key: True for key in KEYS}


@pytest.mark.parametrize("name", sorted(LABELS))
def test_checker_flags_exactly_the_labelled_attributes(name: str) -> None:
    assert failing_keys(name) == [key for key in KEYS if key in LABELS[name]]


def test_corpus_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    exact = verdicts = 0
    for name, labelled in LABELS.items():
        failed = set(failing_keys(name))
        exact += failed == set(labelled)
        verdicts += sum((key in failed) == (key in labelled) for key in KEYS)
    with capsys.disabled():
        print(f"\ncorpus accuracy: {exact}/{len(LABELS)} prompts exact, "
              f"{verdicts}/{len(LABELS) * len(KEYS)} attribute verdicts right")
    assert exact == len(LABELS)
