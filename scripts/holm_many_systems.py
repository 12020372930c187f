"""Many clearly different systems, 1,000 resamples configured: how many pairs Holm tells apart,
and the smallest Holm-adjusted p-value (issue 12, item 4).

Systems k = 0..K-1 have mean score 3k with per-item noise sd 1 (every pair at least 3 sd
apart), on 50 items (the normal approximation applies at the floor) and on 12 items (it does
not: floor-limited pairs are bootstrapped again for their family); and pairwise verdicts where
the stronger system wins 95% of 50 judgments per pair (the sign test applies).

    python scripts/holm_many_systems.py                      # this tree
    python scripts/holm_many_systems.py --before /work/main  # and the same on another tree

Only APIs that `main` has too are used, so `--before` runs the same measurement there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

RESAMPLES = 1_000
LEVEL = 0.05


def _scores(k: int, items: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {f"s{j:02d}": 3.0 * j + rng.normal(0, 1, items) for j in range(k)},
        index=pd.Index([f"i{i}" for i in range(items)], name="item_id"),
    )


def _verdicts(k: int, items: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for a in range(k):
        for b in range(a + 1, k):
            won = rng.random(items) < 0.95  # the stronger (b) wins 95% of the time
            for i in range(items):
                rows.append((f"i{i}", f"s{a:02d}", f"s{b:02d}", 0.0 if won[i] else 1.0))
    return pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "score_a"])


def measure() -> list[dict]:
    from calibration.compare import compare_table
    from calibration.pairs import all_pairs

    out = []
    for k in (20, 40):
        for data, items in (("scores", 50), ("scores", 12), ("verdicts", 50)):
            start = time.perf_counter()
            if data == "scores":
                comparisons = all_pairs(
                    _scores(k, items, seed=k), seed=0, resamples=RESAMPLES
                ).comparisons
            else:
                comparisons = compare_table(
                    _verdicts(k, items, seed=k), kind="pairwise", seed=0, resamples=RESAMPLES
                ).comparisons
            p = np.array([c.p_holm for c in comparisons])
            interval = [c.result.ci_low > 0 or c.result.ci_high < 0 for c in comparisons]
            methods = Counter(getattr(c.result, "p_method", "bootstrap") for c in comparisons)
            out.append(
                {
                    "systems": k,
                    "data": f"{data}, {items} items",
                    "pairs": len(comparisons),
                    "interval_excludes_0": int(sum(interval)),
                    "told_apart_holm": int((p < LEVEL).sum()),
                    "min_p_holm": float(p.min()),
                    "max_p_holm": float(p.max()),
                    "p_method": ", ".join(f"{m} {n}" for m, n in sorted(methods.items())),
                    "resamples": sorted({c.result.resamples for c in comparisons}),
                    "seconds": round(time.perf_counter() - start, 1),
                }
            )
    return out


def _table(title: str, rows: list[dict]) -> str:
    head = (
        "| systems | data | pairs | interval excludes 0 | told apart (Holm < 0.05) | "
        "smallest Holm p | largest Holm p | p-value from | resamples | s |"
    )
    lines = [f"{title}", "", head, "|" + "---|" * 10]
    for r in rows:
        lines.append(
            f"| {r['systems']} | {r['data']} | {r['pairs']} | {r['interval_excludes_0']} | "
            f"{r['told_apart_holm']} | {r['min_p_holm']:.3g} | {r['max_p_holm']:.3g} | "
            f"{r['p_method']} | {', '.join(f'{n:,}' for n in r['resamples'])} | {r['seconds']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="another tree to measure the same way")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure()))
        return
    here = Path(__file__).resolve().parents[1]
    if args.before is not None:
        env = {**os.environ, "PYTHONPATH": str(args.before.resolve())}
        got = subprocess.run(
            [sys.executable, __file__, "--json"], env=env, check=True, capture_output=True
        )
        print(_table(f"Before ({args.before}):", json.loads(got.stdout)))
        print()
    sys.path.insert(0, str(here))
    print(_table(f"After ({here}):", measure()))


if __name__ == "__main__":
    main()
