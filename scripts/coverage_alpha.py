"""Coverage of the judge-human alpha's 95% interval at 30, 50 and 100 units (issue 32): the
percentile interval against BCa, on the same resamples, by simulation.

Each unit is a pairwise comparison labelled a, b or tie (truth 45/40/15%); the human copies the
truth with probability 0.85 and the judge with 0.8, else each draws a label at random. The
true alpha is that of 400,000 such units (the `krippendorff` package). One dataset per
repetition, 1,000 resamples each; Monte-Carlo s.e. = sqrt(c (1 - c) / repetitions).

    python scripts/coverage_alpha.py [--reps 1000] [--units 30 50 100]
"""

from __future__ import annotations

import argparse

import krippendorff
import numpy as np

from calibration.alpha import alpha_with_resamples
from calibration.bootstrap_alpha import domain_for_level, units_from_value_counts

_DOMAIN = domain_for_level(np.arange(3.0), "nominal")


def _labels(rng: np.random.Generator, n: int) -> np.ndarray:
    truth = rng.choice(3, p=[0.45, 0.4, 0.15], size=n)
    human = np.where(rng.random(n) < 0.85, truth, rng.choice(3, n))
    judge = np.where(rng.random(n) < 0.8, truth, rng.choice(3, n))
    return np.vstack([judge, human])


def _intervals(data: np.ndarray, seed: int) -> tuple[tuple[float, float], tuple[float, float]]:
    n = data.shape[1]
    counts = np.zeros((n, 3), dtype=np.int64)
    for row in data:
        counts[np.arange(n), row] += 1
    units = units_from_value_counts(counts, _DOMAIN, "nominal")
    est, boot = alpha_with_resamples(
        units, None, method="", seed=seed, resamples=1000, confidence=0.95
    )
    assert boot is not None and est.ci_low is not None and est.ci_high is not None
    ok = boot[np.isfinite(boot)]
    low, high = np.quantile(ok, [0.025, 0.975])
    return (float(low), float(high)), (est.ci_low, est.ci_high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--units", type=int, nargs="+", default=[30, 50, 100])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    true = krippendorff.alpha(
        reliability_data=_labels(rng, 400_000).astype(float), level_of_measurement="nominal"
    )
    print(f"true alpha {true:.4f}; {args.reps} repetitions\n")
    print("| units | percentile | BCa |\n|---|---|---|")
    for n in args.units:
        hits = np.zeros(2)
        for rep in range(args.reps):
            for i, (low, high) in enumerate(_intervals(_labels(rng, n), rep)):
                hits[i] += low <= true <= high
        cover = hits / args.reps
        se = np.sqrt(cover * (1 - cover) / args.reps)
        print(f"| {n} | {cover[0]:.3f} ± {se[0]:.3f} | {cover[1]:.3f} ± {se[1]:.3f} |")


if __name__ == "__main__":
    main()
