"""The labelled synthetic corpora of loop prompts, and how often the checker agrees with the
labels. `corpora.toml` lists each corpus with its role (tuned on, or held out), its label
format and its floor; docs/validator-history.md tells how each was written and measured.

A verdict is right when the checker fails exactly the attributes the label lists; a prompt
is exact when all ten verdicts are right. The suite fails when a corpus drops below its
floor. `corpus/` is also held verdict by verdict: every file fails exactly its labelled keys.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from finesse.authoring.prompt_check.registry import RULES
from finesse.authoring.prompt_check.validate import validate_file

HERE = Path(__file__).parent
MANIFEST = tomllib.loads((HERE / "corpora.toml").read_text(encoding="utf-8"))["corpus"]
KEYS = [rule.key for rule in RULES]
KEY_OF = {rule.id: rule.key for rule in RULES}


def corpus_labels(entry: dict[str, Any]) -> dict[str, list[str]]:
    """A corpus's labels.json as, per file, the keys it lacks (the manifest says whether
    the file gives keys or attribute numbers)."""
    raw = json.loads((HERE / entry["folder"] / "labels.json").read_text())
    if entry["labels"] == "keys":
        return dict(raw)
    return {name: [KEY_OF[number] for number in label["missing"]]
            for name, label in raw.items()}


CORPORA = [(HERE / entry["folder"], corpus_labels(entry)) for entry in MANIFEST]
LABELS = CORPORA[0][1]  # corpus/: every file's verdicts are asserted one by one
CORPUS = CORPORA[0][0]
# The floors: (prompts exact, verdicts right).
FLOOR = {entry["folder"]: tuple(entry["floor"]) for entry in MANIFEST}


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


def test_the_manifest_lists_every_corpus_folder_once_with_a_role() -> None:
    folders = sorted(path.name for path in HERE.iterdir()
                     if path.is_dir() and (path / "labels.json").exists())
    assert sorted(entry["folder"] for entry in MANIFEST) == folders
    assert {entry["role"] for entry in MANIFEST} <= {"tuned on", "held out"}
    assert any(entry["role"] == "held out" for entry in MANIFEST)


def test_labels_cover_every_prompt_and_only_known_keys() -> None:
    for folder, labels in CORPORA:
        # LABEL_FIXES.md and MEASUREMENTS.md are notes, not prompts.
        prompts = [path.name for path in folder.glob("*.md") if not path.stem.isupper()]
        assert sorted(prompts) == sorted(labels)
        assert all(key in KEYS for keys in labels.values() for key in keys)


def test_the_corpora_are_big_and_varied_enough() -> None:
    first_four = [labels for _, labels in CORPORA[:4]]
    both = [keys for labels in first_four for keys in labels.values()]
    missing_one = Counter(keys[0] for keys in both if len(keys) == 1)
    assert [len(labels) for labels in first_four] == [46, 42, 30, 30]
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


def test_the_docs_show_the_second_blind_corpus_floor() -> None:
    readme = (HERE.parents[3] / "docs" / "validator-history.md").read_text()
    rows = re.findall(r"^\| second blind\b.*?now .*?\| (\d+) of 30 \| (\d+) of 300 \|$",
                      readme, re.MULTILINE)
    assert [(int(exact), int(verdicts)) for exact, verdicts in rows] == [FLOOR["corpus_blind2"]]


def test_the_docs_show_the_third_blind_corpus_floor() -> None:
    readme = (HERE.parents[3] / "docs" / "validator-history.md").read_text()
    rows = re.findall(r"^\| third blind\b.*?now .*?\| (\d+) of 30 \| (\d+) of 300 \|$",
                      readme, re.MULTILINE)
    assert [(int(exact), int(verdicts)) for exact, verdicts in rows] == [FLOOR["corpus_blind3"]]
