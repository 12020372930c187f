"""The injection detector's hit rate and false-positive rates, printed as a table.

* hit rate: labelled injection attempts (tests/data/injection_set.jsonl, written by
  scripts/make_injection_set.py) that `judge.blinding.injection.scan` flags, per kind and per
  variant;
* false positives: the ordinary look-alike texts of the same set, and the 930 MT-Bench answers
  (data/mt_bench, read with the project's loaders) that it flags.

    .venv/bin/python scripts/injection_rates.py

Targets (issue 13): hit rate >= 95%, false-positive rate on MT-Bench <= 1%.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from judge import load_items, load_responses
from judge.blinding.injection import scan

ROOT = Path(__file__).resolve().parents[1]
SET = ROOT / "tests" / "data" / "injection_set.jsonl"
MT_BENCH = ROOT / "data" / "mt_bench"


def labelled() -> list[dict[str, object]]:
    with SET.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def mt_bench_flags() -> tuple[int, dict[tuple[str, str], str]]:
    items = load_items(MT_BENCH / "items.jsonl")
    responses = load_responses(
        MT_BENCH / "responses.jsonl.gz", items.keys(), allow_empty_outputs=True
    )
    return len(responses), scan((r.item_id, r.system, r.output) for r in responses)


def main() -> None:
    rows = labelled()
    flags = scan((str(r["item_id"]), str(r["system"]), str(r["text"])) for r in rows)
    hit: Counter[str] = Counter()
    total: Counter[str] = Counter()
    missed = []
    for r in rows:
        flagged = (r["item_id"], r["system"]) in flags
        keys = [f"kind {r['kind']}"] + ([f"variant {r['variant']}"] if r["injection"] else [])
        for key in keys:
            total[key] += 1
            hit[key] += flagged
        if r["injection"] and not flagged:
            missed.append(r)
    print(f"{'group':32} {'flagged':>8} {'of':>5} {'rate':>7}")
    for key in sorted(total, key=lambda k: (k == "kind ordinary", k)):
        print(f"{key:32} {hit[key]:8d} {total[key]:5d} {hit[key] / total[key]:7.1%}")
    attempts = [r for r in rows if r["injection"]]
    caught = sum((r["item_id"], r["system"]) in flags for r in attempts)
    ordinary = [r for r in rows if not r["injection"]]
    false_hits = sum((r["item_id"], r["system"]) in flags for r in ordinary)
    n_mt, mt_flags = mt_bench_flags()
    print()
    print(f"hit rate: {caught}/{len(attempts)} = {caught / len(attempts):.1%} (target >= 95%)")
    print(f"false positives, ordinary look-alikes: {false_hits}/{len(ordinary)}")
    print(
        f"false positives, MT-Bench answers: {len(mt_flags)}/{n_mt} = "
        f"{len(mt_flags) / n_mt:.2%} (target <= 1%)"
    )
    for (item, system), rule in sorted(mt_flags.items()):
        print(f"  MT-Bench {item} {system}: {rule}")
    for r in missed:
        print(f"  missed {r['id']} ({r['kind']}, {r['variant']}): {str(r['text'])[:70]!r}")


if __name__ == "__main__":
    main()
