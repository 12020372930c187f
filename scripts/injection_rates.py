"""The injection detector's hit rate and false-positive rate, printed as tables.

* hit rate: labelled injection attempts (tests/data/injection_set.jsonl, written by
  scripts/make_injection_set.py) that `judge.blinding.injection.scan` flags;
* false positives: the set's ordinary look-alikes (ordinary text in every language, benign
  encoded text, answers that quote an attack while explaining it) that it flags, and the 930
  MT-Bench answers (data/mt_bench, read with the project's loaders);

each overall, per kind, per language and per variant (the encoding or disguise).

    .venv/bin/python scripts/injection_rates.py

Targets (issue 31): hit rate >= 90% and look-alikes flagged <= 10%, overall; MT-Bench <= 1%.

The set is the detector's dev set: the rules were tuned on it, so its rates overstate what
unseen wordings get. Its later batches (make_injection_set.py's SECOND_* and THIRD_*) were
each scored once before the changes they led to; those first scores are the fairer estimate,
and the held-out set written elsewhere is the real one.
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


def _table(rows: list[dict[str, object]], flagged: set[str], field: str) -> None:
    """One line per value of `field`: attacks flagged and look-alikes flagged."""
    hit: Counter[str] = Counter()
    attacks: Counter[str] = Counter()
    false: Counter[str] = Counter()
    benign: Counter[str] = Counter()
    for r in rows:
        key, was = str(r[field]), str(r["id"]) in flagged
        if r["injection"]:
            attacks[key] += 1
            hit[key] += was
        else:
            benign[key] += 1
            false[key] += was
    print(f"\n{'by ' + field:22} {'attacks flagged':>22} {'look-alikes flagged':>24}")
    for key in sorted(attacks.keys() | benign.keys()):
        a = (
            f"{hit[key]:4d}/{attacks[key]:<4d} {hit[key] / attacks[key]:6.1%}"
            if attacks[key]
            else ""
        )
        b = (
            f"{false[key]:4d}/{benign[key]:<4d} {false[key] / benign[key]:6.1%}"
            if benign[key]
            else ""
        )
        print(f"{key:22} {a:>22} {b:>24}")


def main() -> None:
    rows = labelled()
    found = scan((str(r["item_id"]), str(r["system"]), str(r["text"])) for r in rows)
    flagged = {str(r["id"]) for r in rows if (r["item_id"], r["system"]) in found}
    for field in ("kind", "lang", "variant"):
        _table(rows, flagged, field)
    attempts = [r for r in rows if r["injection"]]
    ordinary = [r for r in rows if not r["injection"]]
    caught = sum(str(r["id"]) in flagged for r in attempts)
    false_hits = sum(str(r["id"]) in flagged for r in ordinary)
    n_mt, mt_flags = mt_bench_flags()
    print()
    print(f"hit rate: {caught}/{len(attempts)} = {caught / len(attempts):.1%} (target >= 90%)")
    print(
        f"look-alikes flagged: {false_hits}/{len(ordinary)} = {false_hits / len(ordinary):.1%}"
        " (target <= 10%)"
    )
    print(
        f"MT-Bench answers flagged: {len(mt_flags)}/{n_mt} = "
        f"{len(mt_flags) / n_mt:.2%} (target <= 1%)"
    )
    for (item, system), rule in sorted(mt_flags.items()):
        print(f"  MT-Bench {item} {system}: {rule}")
    for r in rows:
        if (str(r["id"]) in flagged) != bool(r["injection"]):
            what = "missed" if r["injection"] else "flagged"
            rule = found.get((str(r["item_id"]), str(r["system"])), "")
            print(
                f"  {what} {r['id']} ({r['kind']}, {r['lang']}, {r['variant']}) {rule}: "
                f"{str(r['text'])[:80]!r}"
            )


if __name__ == "__main__":
    main()
