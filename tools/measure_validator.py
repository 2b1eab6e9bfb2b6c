"""Measure `finesse validate` on the real-prompt corpus: the verdicts two readers agree on.

The corpus (tests/corpora/real/ by default) holds `prompts/NNN.md`, `sources.json` (each
prompt's loop flags, where its source states them), `split.json` (the `dev` and `heldout`
id lists) and two readers' labels, each `{id: {attribute-key: true|false}}` (true: the
attribute is there), as `labels/A.json` and `labels/B.json` or split per set
(`labels/A-dev.json`, `labels/A-heldout.json`, ...). Each prompt is checked as its loop ran
it (`--completion-promise`, `--max-iterations` from sources.json). Only the verdicts both
readers agree on count. Per split it prints how often the readers agree, the agreed
verdicts the checker gets right, its false passes (passes what the readers say is missing)
and false failures, the prompts with no wrong verdict, and the same per attribute.

    .venv/bin/python tools/measure_validator.py [--corpus DIR] [--split dev|heldout|both]
                                                [--wrong] [--json]

`--wrong` lists every wrong verdict of the dev set (id, attribute, the line read, the fix),
for calibrating on it; it refuses the held-out set, whose prompts nobody reads: only its
aggregate figures are printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

from finesse.authoring.prompt_check.registry import RULES  # noqa: E402
from finesse.authoring.prompt_check.validate import validate_prompt  # noqa: E402

KEYS = [rule.key for rule in RULES]


@dataclass
class Tally:
    agreed: int = 0
    right: int = 0
    false_passes: int = 0
    false_failures: int = 0

    def add(self, present: bool, passed: bool) -> None:
        self.agreed += 1
        self.right += present == passed
        self.false_passes += passed and not present
        self.false_failures += present and not passed


@dataclass
class Measure:
    split: str
    prompts: int = 0
    verdicts: int = 0  # labelled by both readers
    total: Tally = field(default_factory=Tally)
    per_key: dict[str, Tally] = field(default_factory=lambda: {key: Tally() for key in KEYS})
    clean: int = 0  # prompts with no wrong agreed verdict
    wrong: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        def tally(t: Tally) -> dict[str, int]:
            return {"agreed": t.agreed, "right": t.right, "false_passes": t.false_passes,
                    "false_failures": t.false_failures}
        return {"split": self.split, "prompts": self.prompts, "verdicts": self.verdicts,
                **tally(self.total), "prompts_with_no_wrong_verdict": self.clean,
                "per_attribute": {key: tally(t) for key, t in self.per_key.items()}}


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def reader_labels(corpus: Path, reader: str) -> dict[str, dict[str, bool]]:
    whole = corpus / "labels" / f"{reader}.json"
    if whole.exists():
        return dict(_load(whole))
    labels: dict[str, dict[str, bool]] = {}
    for part in sorted((corpus / "labels").glob(f"{reader}-*.json")):
        labels.update(_load(part))
    return labels


def flags_of(corpus: Path) -> dict[str, dict[str, Any]]:
    sources = _load(corpus / "sources.json")
    entries = sources if isinstance(sources, list) else [
        {"id": key, **value} for key, value in sources.items()]
    return {entry["id"]: entry.get("flags") or {} for entry in entries}


def _check(text: str, flags: dict[str, Any]) -> Any:
    promise, cap = flags.get("completion_promise"), flags.get("max_iterations")
    try:
        return validate_prompt(text, promise=promise, max_iterations=cap)
    except TypeError:  # a checker from before the loop's flags (for a "before" figure)
        return validate_prompt(text, promise=promise)


def measure(corpus: Path, split: str, ids: list[str], labels_a: dict[str, Any],
            labels_b: dict[str, Any], flags: dict[str, dict[str, Any]],
            keep_wrong: bool) -> Measure:
    result = Measure(split)
    for prompt_id in ids:
        a, b = labels_a.get(prompt_id), labels_b.get(prompt_id)
        if a is None or b is None:
            continue
        result.prompts += 1
        text = (corpus / "prompts" / f"{prompt_id}.md").read_text(encoding="utf-8",
                                                                  errors="replace")
        report = _check(text, flags.get(prompt_id, {}))
        verdicts = {r.key: r for r in report.attributes}
        wrong = False
        for key in KEYS:
            if not isinstance(a.get(key), bool) or not isinstance(b.get(key), bool):
                continue
            result.verdicts += 1
            if a[key] != b[key]:
                continue
            verdict = verdicts[key]
            result.total.add(a[key], verdict.passed)
            result.per_key[key].add(a[key], verdict.passed)
            if a[key] != verdict.passed:
                wrong = True
                if keep_wrong:
                    result.wrong.append({"id": prompt_id, "key": key, "present": a[key],
                                         "evidence": verdict.evidence, "fix": verdict.fix})
        result.clean += not wrong
    return result


def _percent(part: int, whole: int) -> str:
    return f"{part} of {whole} ({100 * part / whole:.0f}%)" if whole else f"{part} of 0"


def print_measure(m: Measure) -> None:
    t = m.total
    print(f"{m.split}: {m.prompts} prompts; the readers agree on "
          f"{_percent(t.agreed, m.verdicts)} verdicts")
    print(f"  agreed verdicts right {_percent(t.right, t.agreed)}; false passes "
          f"{_percent(t.false_passes, t.agreed)}; false failures "
          f"{_percent(t.false_failures, t.agreed)}; prompts with no wrong verdict "
          f"{_percent(m.clean, m.prompts)}")
    width = max(len(key) for key in KEYS)
    for key, k in m.per_key.items():
        print(f"  {key:<{width}}  right {k.right:>3} of {k.agreed:<3} false passes "
              f"{k.false_passes:>2}  false failures {k.false_failures:>2}")
    for row in m.wrong:
        side = "false failure" if row["present"] else "false pass"
        print(f"  {row['id']} {row['key']}: {side}; {row['evidence'] or '(no line)'}"
              + (f"  fix: {row['fix']}" if row["fix"] else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "corpora" / "real")
    parser.add_argument("--split", choices=("dev", "heldout", "both"), default="both")
    parser.add_argument("--wrong", action="store_true",
                        help="list the dev set's wrong verdicts (never the held-out set's)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    corpus: Path = args.corpus
    needed = [corpus / "split.json"]
    missing = [path for path in needed if not path.exists()]
    labels_a, labels_b = (reader_labels(corpus, reader) for reader in ("A", "B"))
    if missing or not labels_a or not labels_b:
        print(f"measure_validator: {corpus} needs split.json and both readers' labels "
              "(labels/A.json and labels/B.json, or per split)", file=sys.stderr)
        return 2
    if args.wrong and args.split != "dev":
        print("measure_validator: --wrong lists the dev set only (--split dev): the held-out "
              "prompts are not read", file=sys.stderr)
        return 2
    split = _load(corpus / "split.json")
    flags = flags_of(corpus)
    splits = ["dev", "heldout"] if args.split == "both" else [args.split]
    results = [measure(corpus, name, list(split[name]), labels_a, labels_b, flags,
                       keep_wrong=args.wrong and name == "dev") for name in splits]
    if args.json:
        print(json.dumps([m.as_json() for m in results], indent=2))
    else:
        for m in results:
            print_measure(m)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
