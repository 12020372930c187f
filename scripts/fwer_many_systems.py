"""Family-wise error with many equal systems (issue 32, item 1): the share of repetitions in
which any pair of K systems of equal quality is told apart (Holm-adjusted p < 0.05), with the
default 1,000 resamples, against the promised 0.05.

Each repetition draws 50 items and K systems whose scores are the same per-item difficulty
plus independent noise (normal, or rounded to a 1-5 scale), so every null hypothesis holds.
The Monte-Carlo error of a rate r over R repetitions is sqrt(r (1 - r) / R): 0.0097 at 0.05
and R = 500.

    python scripts/fwer_many_systems.py --reps 500                    # this tree
    python scripts/fwer_many_systems.py --reps 200 --before /tmp/head  # and another tree

Repetitions are spread over the CPUs (one process each); the output is the same for any
number of processes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

RESAMPLES = 1_000
LEVEL = 0.05
ITEMS = 50


def _scores(k: int, scale: str, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 1, ITEMS)
    values = difficulty[:, None] + rng.normal(0, 1, (ITEMS, k))
    if scale == "1-5":
        values = np.clip(np.round(3 + values), 1, 5)
    return pd.DataFrame(
        values,
        columns=[f"s{j:02d}" for j in range(k)],
        index=pd.Index([f"i{i}" for i in range(ITEMS)], name="item_id"),
    )


def _one(args: tuple[int, str, int]) -> tuple[bool, float]:
    """Whether any pair was told apart in repetition `seed`, and the smallest Holm p."""
    from calibration.pairs import all_pairs

    k, scale, seed = args
    result = all_pairs(_scores(k, scale, seed), seed=seed, resamples=RESAMPLES)
    p = min(c.p_holm for c in result.comparisons)
    return p < LEVEL, p


def measure(reps: int, workers: int) -> list[dict]:
    out = []
    with ProcessPoolExecutor(workers) as pool:
        for k in (20, 40):
            for scale in ("normal", "1-5"):
                start = time.perf_counter()
                runs = list(pool.map(_one, [(k, scale, 1000 * k + r) for r in range(reps)]))
                rate = sum(told for told, _ in runs) / reps
                out.append(
                    {
                        "systems": k,
                        "scores": scale,
                        "reps": reps,
                        "fwer": rate,
                        "mc_error": math.sqrt(max(rate * (1 - rate), LEVEL * (1 - LEVEL)) / reps),
                        "median_min_p": float(np.median([p for _, p in runs])),
                        "seconds": round(time.perf_counter() - start, 1),
                    }
                )
                print(json.dumps(out[-1]), file=sys.stderr, flush=True)
    return out


def _table(title: str, rows: list[dict]) -> str:
    lines = [
        title,
        "",
        "| systems | scores | repetitions | any pair told apart | Monte-Carlo error | s |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['systems']} | {r['scores']} | {r['reps']} | {r['fwer']:.3f} | "
            f"± {r['mc_error']:.3f} | {r['seconds']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--before", type=Path, help="another tree to measure the same way")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.reps, args.workers)))
        return
    if args.before is not None:
        env = {**os.environ, "PYTHONPATH": str(args.before.resolve())}
        command = [sys.executable, __file__, "--json", "--reps", str(args.reps)]
        got = subprocess.run(
            [*command, "--workers", str(args.workers)], env=env, check=True, capture_output=True
        )
        print(_table(f"Before ({args.before}):", json.loads(got.stdout)))
        print()
    here = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(here))
    print(_table(f"After ({here}):", measure(args.reps, args.workers)))


if __name__ == "__main__":
    main()
