"""Split the real-prompt corpus into a development set and a held-out set.

Contract: reads ``sources.json`` beside this file and writes ``split.json``
({"seed", "dev", "heldout"}), the same output for the same sources on every
run. Prompts from one repository always land in the same set, so two
versions of one author's prompt cannot sit on both sides of the split; each
repository is dealt under the kind most of its prompts have, and within each
kind repositories go to whichever set holds fewer prompts of that kind so far
(counting every prompt already placed), in an order shuffled by
``random.Random(SEED)``. Standard
library only, so the split can be reproduced without the project installed.

Run: ``python3 tests/corpora/real/make_split.py`` (add ``--check`` to fail
instead of writing when ``split.json`` differs from what the sources give).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

SEED = 20261202
HERE = Path(__file__).resolve().parent


def make_split(sources: list[dict[str, object]], seed: int = SEED) -> dict[str, object]:
    """Return {"seed", "dev", "heldout"} for the given source records."""
    rng = random.Random(seed)
    by_repo: dict[str, list[dict[str, object]]] = defaultdict(list)
    for record in sources:
        by_repo[str(record["repo"]).lower()].append(record)

    by_kind: dict[str, list[str]] = defaultdict(list)
    for repo in sorted(by_repo):
        kinds = Counter(str(r["kind"]) for r in by_repo[repo])
        top = max(kinds.values())
        kind = next(str(r["kind"]) for r in by_repo[repo] if kinds[str(r["kind"])] == top)
        by_kind[kind].append(repo)

    sides: dict[str, list[str]] = {"dev": [], "heldout": []}
    placed: dict[str, Counter[str]] = {"dev": Counter(), "heldout": Counter()}
    for kind in sorted(by_kind):
        repos = by_kind[kind]
        rng.shuffle(repos)
        for repo in repos:
            dev, held = placed["dev"][kind], placed["heldout"][kind]
            if dev != held:
                side = "dev" if dev < held else "heldout"
            else:
                side = "dev" if rng.random() < 0.5 else "heldout"
            sides[side].extend(str(r["id"]) for r in by_repo[repo])
            placed[side].update(str(r["kind"]) for r in by_repo[repo])

    return {"seed": seed, "dev": sorted(sides["dev"]), "heldout": sorted(sides["heldout"])}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    sources = json.loads((HERE / "sources.json").read_text(encoding="utf-8"))
    split = make_split(sources)
    text = json.dumps(split, indent=2) + "\n"
    target = HERE / "split.json"
    if args.check:
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            print("split.json is not what sources.json gives: run make_split.py", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"dev {len(split['dev'])}, heldout {len(split['heldout'])}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
