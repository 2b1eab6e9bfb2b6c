"""Two labelled corpora of loop prompts, and how often the checker agrees with the labels.

- `corpus/`: prompts written the way people write loop prompts, with the checker;
  labels.json maps each file to the keys it fails ([] for a complete prompt). Two labels
  were corrected under seed 000's definition: corpus/LABEL_FIXES.md says which and why.
- `corpus_blind/`: 40 prompts and two golden files written from seed 000 alone by someone
  who never saw the checker; labels.json gives, per file, the attribute numbers it lacks.
  corpus_blind/MEASUREMENTS.md has the figure before the checker was improved on it.
- `corpus_blind2/`: 30 prompts written the same way by a second writer, after the checker
  had been tuned on `corpus_blind/`; same labels format. corpus_blind2/MEASUREMENTS.md has
  the figure before and after the checker was generalised on it.
- `corpus_blind3/`: 30 prompts written the same way by a third writer, after the checker
  had been tuned on the three corpora above; same labels format.
  corpus_blind3/MEASUREMENTS.md has the figure before and after the checker was generalised
  on it.
- `corpus_blind4/` to `corpus_blind8/`: 30, 40, 40, 40 and 40 prompts by a fourth to an
  eighth writer, same labels format (with a "why" per label); the seventh and eighth lean
  away from the seed's template. Each MEASUREMENTS.md says how far the checker was tuned on
  it and gives every verdict before and after.
- `corpus_blind9/`: 40 prompts by a ninth writer, the held-out set until it was measured,
  then read and generalised from (its MEASUREMENTS.md).
- `corpus_blind10/`: 40 prompts by a tenth writer, never read and never tuned on: the
  held-out estimate (its MEASUREMENTS.md).

A verdict is right when the checker fails exactly the attributes the label lists; a prompt
is exact when all ten verdicts are right. Each corpus has a floor: the suite fails when the
checker drops below it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from finesse.authoring.prompt_check.registry import RULES
from finesse.authoring.prompt_check.validate import validate_file

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
BLIND = HERE / "corpus_blind"
BLIND2 = HERE / "corpus_blind2"
BLIND3 = HERE / "corpus_blind3"
BLIND4 = HERE / "corpus_blind4"
BLIND5 = HERE / "corpus_blind5"
BLIND6 = HERE / "corpus_blind6"
BLIND7 = HERE / "corpus_blind7"
BLIND8 = HERE / "corpus_blind8"
BLIND9 = HERE / "corpus_blind9"
BLIND10 = HERE / "corpus_blind10"
KEYS = [rule.key for rule in RULES]
KEY_OF = {rule.id: rule.key for rule in RULES}
# name -> the keys it lacks
LABELS: dict[str, list[str]] = json.loads((CORPUS / "labels.json").read_text())


def numbered_labels(folder: Path) -> dict[str, list[str]]:
    """A blind corpus's labels.json (per file, the attribute numbers it lacks) as keys."""
    return {name: [KEY_OF[number] for number in label["missing"]]
            for name, label in json.loads((folder / "labels.json").read_text()).items()}


BLIND_LABELS = numbered_labels(BLIND)
BLIND2_LABELS = numbered_labels(BLIND2)
BLIND3_LABELS = numbered_labels(BLIND3)
BLIND4_LABELS = numbered_labels(BLIND4)
BLIND5_LABELS = numbered_labels(BLIND5)
BLIND6_LABELS = numbered_labels(BLIND6)
BLIND7_LABELS = numbered_labels(BLIND7)
BLIND8_LABELS = numbered_labels(BLIND8)
BLIND9_LABELS = numbered_labels(BLIND9)
BLIND10_LABELS = numbered_labels(BLIND10)
CORPORA = [(CORPUS, LABELS), (BLIND, BLIND_LABELS), (BLIND2, BLIND2_LABELS),
           (BLIND3, BLIND3_LABELS), (BLIND4, BLIND4_LABELS), (BLIND5, BLIND5_LABELS),
           (BLIND6, BLIND6_LABELS), (BLIND7, BLIND7_LABELS), (BLIND8, BLIND8_LABELS),
           (BLIND9, BLIND9_LABELS), (BLIND10, BLIND10_LABELS)]
# The floors: (prompts exact, verdicts right).
FLOOR = {"corpus": (46, 460), "corpus_blind": (42, 420), "corpus_blind2": (30, 300),
         "corpus_blind3": (30, 300), "corpus_blind4": (30, 300), "corpus_blind5": (39, 399),
         "corpus_blind6": (40, 400), "corpus_blind7": (37, 394),
         "corpus_blind8": (37, 397), "corpus_blind9": (39, 397),
         "corpus_blind10": (33, 389)}


def failing_keys(path: Path) -> list[str]:
    return [result.key for result in validate_file(path).attributes if not result.passed]


def accuracy(folder: Path, labels: dict[str, list[str]]) -> tuple[int, int, list[str]]:
    exact = verdicts = 0
    wrong = []
    for name, labelled in sorted(labels.items()):
        failed = set(failing_keys(folder / name))
        exact += failed == set(labelled)
        verdicts += sum((key in failed) == (key in labelled) for key in KEYS)
        if failed != set(labelled):
            wrong.append(f"{name}: fails {sorted(failed)}, labelled {sorted(labelled)}")
    return exact, verdicts, wrong


def test_labels_cover_every_prompt_and_only_known_keys() -> None:
    for folder, labels in CORPORA:
        # LABEL_FIXES.md and MEASUREMENTS.md are notes, not prompts.
        prompts = [path.name for path in folder.glob("*.md") if not path.stem.isupper()]
        assert sorted(prompts) == sorted(labels)
        assert all(key in KEYS for keys in labels.values() for key in keys)


def test_the_corpora_are_big_and_varied_enough() -> None:
    both = [*LABELS.values(), *BLIND_LABELS.values(), *BLIND2_LABELS.values(),
            *BLIND3_LABELS.values()]
    missing_one = Counter(keys[0] for keys in both if len(keys) == 1)
    assert (len(LABELS), len(BLIND_LABELS), len(BLIND2_LABELS), len(BLIND3_LABELS)) == (
        46, 42, 30, 30)
    assert sum(1 for keys in both if not keys) >= 30
    assert {key: missing_one[key] >= 3 for key in KEYS} == {key: True for key in KEYS}


@pytest.mark.parametrize("name", sorted(LABELS))
def test_checker_flags_exactly_the_labelled_attributes(name: str) -> None:
    assert failing_keys(CORPUS / name) == [key for key in KEYS if key in LABELS[name]]


@pytest.mark.parametrize(("folder", "labels"), CORPORA,
                         ids=[folder.name for folder, _ in CORPORA])
def test_corpus_accuracy_stays_at_its_floor(
        folder: Path, labels: dict[str, list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    exact, verdicts, wrong = accuracy(folder, labels)
    with capsys.disabled():
        print(f"\n{folder.name} accuracy: {exact}/{len(labels)} prompts exact, "
              f"{verdicts}/{len(labels) * len(KEYS)} attribute verdicts right")
    floor_exact, floor_verdicts = FLOOR[folder.name]
    assert (exact >= floor_exact and verdicts >= floor_verdicts), wrong


def test_the_readme_shows_the_second_blind_corpus_floor() -> None:
    readme = (HERE.parents[3] / "README.md").read_text()
    rows = re.findall(r"^\| second blind\b.*?now .*?\| (\d+) of 30 \| (\d+) of 300 \|$",
                      readme, re.MULTILINE)
    assert [(int(exact), int(verdicts)) for exact, verdicts in rows] == [FLOOR["corpus_blind2"]]


def test_the_readme_shows_the_third_blind_corpus_floor() -> None:
    readme = (HERE.parents[3] / "README.md").read_text()
    rows = re.findall(r"^\| third blind\b.*?now .*?\| (\d+) of 30 \| (\d+) of 300 \|$",
                      readme, re.MULTILINE)
    assert [(int(exact), int(verdicts)) for exact, verdicts in rows] == [FLOOR["corpus_blind3"]]
