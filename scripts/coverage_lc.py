"""Coverage of the length-controlled win rate's 95% interval at 30, 50 and 100 items (issue
32), by simulation: a strong system with longer answers against one opponent, no baseline.

Per item the strong system's answer is ~1,500 characters and the other's ~1,100 (normal, sd
300); the judge prefers the strong one with probability sigmoid(a + tanh(d / sd_d)), a =
logit(0.8), so the true controlled rate is 0.8. 1,000 resamples per dataset; Monte-Carlo
s.e. = sqrt(c (1 - c) / repetitions). Run it on another tree with PYTHONPATH=that/tree.

    python scripts/coverage_lc.py [--reps 400]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy.special import expit

from calibration.style_control import style_controlled

_A = float(np.log(0.8 / 0.2))


def _table(rng: np.random.Generator, n: int) -> pd.DataFrame:
    long = np.round(np.abs(rng.normal(1500, 300, n)))
    short = np.round(np.abs(rng.normal(1100, 300, n)))
    d = long - short
    wins = (rng.random(n) < expit(_A + np.tanh(d / d.std()))).astype(float)
    return pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(n)],
            "system_a": "strong",
            "system_b": "other",
            "score_a": wins,
            "length_a": long,
            "length_b": short,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    args = parser.parse_args()
    true = float(expit(_A))
    print(f"true controlled rate {true:.2f}; {args.reps} repetitions\n")
    print("| items | coverage | mean width |\n|---|---|---|")
    for n in (30, 50, 100):
        rng = np.random.default_rng(n)
        hits, widths = 0, []
        for rep in range(args.reps):
            result = style_controlled(_table(rng, n), ["length"], resamples=1000, seed=rep)
            (rate,) = [r for r in result.systems if r.system == "strong"]
            hits += rate.ci_low <= true <= rate.ci_high
            widths.append(rate.ci_high - rate.ci_low)
        cover = hits / args.reps
        se = np.sqrt(cover * (1 - cover) / args.reps)
        print(f"| {n} | {cover:.3f} ± {se:.3f} | {np.mean(widths):.3f} |")


if __name__ == "__main__":
    main()
